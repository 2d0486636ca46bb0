#include "scene/snapshot.hpp"

#include <algorithm>

namespace tandem::detail {

CameraSnapshot snapshot_camera(const Scene& scene, std::uint32_t camera, float aspect) {
    const SceneCamera& cam = scene.cameras().at(camera);
    const glm::mat4& world = scene.nodes().at(cam.node).world;
    CameraSnapshot out;
    out.view = glm::inverse(world);
    out.projection = projection_matrix(cam.model, aspect);
    out.position = glm::vec3(world[3]);
    return out;
}

FrameSnapshot snapshot(const Scene& scene, const ViewRequest& request) {
    FrameSnapshot out;
    out.camera = snapshot_camera(scene, request.camera, request.aspect);
    const Light& light = scene.light();
    const float len = glm::length(light.direction);
    out.light.direction = len > 0.0f ? light.direction / len : glm::vec3(0.0f, -1.0f, 0.0f);
    out.light.color = light.color;
    out.light.ambient = light.ambient;
    out.clear_color = light.clear_color;
    const auto& nodes = scene.nodes();
    out.instances.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const Node& node = nodes[i];
        if (!node.mesh) {
            continue;
        }
        const auto index = static_cast<std::uint32_t>(i);
        if (std::find(request.hidden.begin(), request.hidden.end(), index) !=
            request.hidden.end()) {
            continue;
        }
        if (!request.tags.empty()) {
            const bool tagged = std::any_of(node.tags.begin(), node.tags.end(), [&](auto& t) {
                return std::find(request.tags.begin(), request.tags.end(), t) != request.tags.end();
            });
            if (!tagged) {
                continue;
            }
        }
        InstanceSnapshot inst;
        inst.mesh = *node.mesh;
        inst.transform = node.world;
        for (const auto& [surface_node, texture] : request.surfaces) {
            if (surface_node == index) {
                inst.surface = texture;
            }
        }
        out.instances.push_back(inst);
    }
    return out;
}

FrameSnapshot with_previous(FrameSnapshot now, const FrameSnapshot& before) {
    now.previous_camera = before.camera;
    for (std::size_t i = 0; i < now.instances.size(); ++i) {
        InstanceSnapshot& inst = now.instances[i];
        if (i < before.instances.size() && before.instances[i].mesh == inst.mesh) {
            inst.previous_transform = before.instances[i].transform;
        } else {
            inst.previous_transform.reset();
        }
    }
    return now;
}

} // namespace tandem::detail
