// Plain-data snapshots: what one render of a scene needs, copied out of the Scene on the
// application thread so that a worker (or the primary's renderer) never touches scene objects.
// A FrameSnapshot is a value: copy it, move it to another thread, keep it as long as you like.
// Mesh ids index the SceneAssets the renderer's cache was filled from.
//
// What the previous frame had (its camera, each instance's transform) is optional and used only
// by a render with motion outputs (render/renderer.hpp); unset means "did not move", so a
// snapshot made without it renders as before and has no motion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "scene/scene.hpp"

namespace tandem::detail {

struct CameraSnapshot {
    glm::mat4 view{1.0f};       // world to camera
    glm::mat4 projection{1.0f}; // Vulkan clip space (y down, depth 0..1)
    glm::vec3 position{0.0f};
};

struct InstanceSnapshot {
    std::uint32_t mesh = 0;
    glm::mat4 transform{1.0f};
    // When set, every primitive of this instance shows external texture `surface` of the
    // render call (a task's output on a display surface), unlit, instead of its material.
    std::optional<std::uint32_t> surface;
    // The transform one frame before; unset: the same as `transform` (no motion).
    std::optional<glm::mat4> previous_transform;

    [[nodiscard]] const glm::mat4& transform_before() const noexcept {
        return previous_transform ? *previous_transform : transform;
    }
};

struct LightSnapshot {
    glm::vec3 direction{0.0f, -1.0f, 0.0f}; // normalised, the way the light travels
    glm::vec3 color{1.0f};
    glm::vec3 ambient{0.2f};
};

struct FrameSnapshot {
    CameraSnapshot camera;
    LightSnapshot light;
    glm::vec4 clear_color{0.0f, 0.0f, 0.0f, 1.0f};
    std::vector<InstanceSnapshot> instances;
    // The camera one frame before (its view and projection are used); unset: the same as
    // `camera`.
    std::optional<CameraSnapshot> previous_camera;

    [[nodiscard]] const CameraSnapshot& camera_before() const noexcept {
        return previous_camera ? *previous_camera : camera;
    }
};

// What to draw and from where.
struct ViewRequest {
    std::uint32_t camera = 0; // index into Scene::cameras
    float aspect = 1.0f;      // width / height of the target
    // Draw only nodes carrying at least one of these tags (own or inherited); empty: all.
    std::vector<std::string> tags;
    // Nodes (by index) that display an external texture, and which one.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> surfaces;
    // Nodes not drawn at all (e.g. the surface a task feeds, seen by the task itself).
    std::vector<std::uint32_t> hidden;
};

[[nodiscard]] CameraSnapshot snapshot_camera(const Scene& scene, std::uint32_t camera,
                                             float aspect);
// Copies the camera, the light and every drawn node's mesh id and world transform.
[[nodiscard]] FrameSnapshot snapshot(const Scene& scene, const ViewRequest& request);

// `now` with what `before` (the previous frame's snapshot of the same view) had: its camera as
// the previous camera, and as each instance's previous transform the transform of the instance
// at the same index in `before` when both name the same mesh (else none: no motion, as for an
// instance `before` does not have).
[[nodiscard]] FrameSnapshot with_previous(FrameSnapshot now, const FrameSnapshot& before);

} // namespace tandem::detail
