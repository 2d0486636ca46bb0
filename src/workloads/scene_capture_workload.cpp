#include "workloads/scene_capture_workload.hpp"

#include <utility>

#include "tandem/error.hpp"

namespace tandem::detail {

SceneCaptureWorkload::SceneCaptureWorkload(const Device& device, const WorkloadParams& params,
                                           const std::shared_ptr<const SceneAssets>& assets)
    : m_extent{params.width, params.height}, m_slots(params.slots),
      m_capture(shared_mesh_cache(device, assets), params.format, m_extent, params.slots) {}

VkResult SceneCaptureWorkload::record(VkCommandBuffer cmd, std::uint32_t slot,
                                      const WorkloadTarget& target, std::uint64_t /*generation*/,
                                      std::span<const std::byte> snapshot) noexcept {
    if (slot >= m_slots || target.width != m_extent.width || target.height != m_extent.height) {
        return VK_ERROR_FORMAT_NOT_SUPPORTED;
    }
    // SceneCapture discards the old contents (the target's layout does not matter) and leaves
    // the image as output() says.
    return m_capture.record(cmd, slot, target.image, target.view, snapshot);
}

void register_scene_capture_workload(std::shared_ptr<const SceneAssets> assets) {
    if (!assets) {
        throw Error("The scene-capture workload needs a scene",
                    "Pass the scene's assets (Scene::shared_assets())");
    }
    register_workload(
        k_scene_capture_workload,
        [assets = std::move(assets)](const Device& device, const WorkloadParams& params) {
            return std::make_unique<SceneCaptureWorkload>(device, params, assets);
        });
}

} // namespace tandem::detail
