// CPU frustum culling: the six planes of a view-projection matrix (Vulkan clip space, depth 0..1)
// and a conservative box test. Pure functions; any thread.
#pragma once

#include <array>

#include <glm/glm.hpp>

#include "scene/scene.hpp"

namespace tandem::detail {

struct Frustum {
    std::array<glm::vec4, 6> planes; // inside when dot(plane.xyz, p) + plane.w >= 0
};

[[nodiscard]] Frustum frustum_from(const glm::mat4& view_projection);
// False only when the box lies entirely outside one plane (so it is surely invisible).
[[nodiscard]] bool intersects(const Frustum& frustum, const Bounds& world_box);

} // namespace tandem::detail
