// SceneAccess: the internal side of the public tandem::Scene (tandem/scene.hpp), which holds
// the SceneAssets a SceneBuilder filled. Layers that draw a public Scene (the capture workload)
// reach its assets here, and the glTF import the assets a builder holds (to cut back a file it
// refused); nothing else can make or open one.
#pragma once

#include <memory>

#include "scene/scene.hpp"
#include "tandem/scene.hpp"

namespace tandem::detail {

struct SceneAccess {
    [[nodiscard]] static const std::shared_ptr<const SceneAssets>&
    assets(const tandem::Scene& scene) noexcept {
        return scene.m_assets;
    }
    // What `builder` holds so far (never null).
    [[nodiscard]] static SceneAssets& builder_assets(tandem::SceneBuilder& builder);
    [[nodiscard]] static std::shared_ptr<const tandem::Scene>
    make(std::shared_ptr<const SceneAssets> assets) {
        return std::shared_ptr<const tandem::Scene>(new tandem::Scene(std::move(assets)));
    }
};

} // namespace tandem::detail
