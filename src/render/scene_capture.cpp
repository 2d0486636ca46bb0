#include "render/scene_capture.hpp"

#include <map>
#include <mutex>
#include <new>

#include "scene/snapshot_codec.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

std::shared_ptr<MeshCache> shared_mesh_cache(const Device& device,
                                             const std::shared_ptr<const SceneAssets>& assets) {
    // Never destroyed: a runtime left alive at the process's exit may still have threads here.
    static auto* const lock = new std::mutex;
    static auto* const caches =
        new std::map<std::pair<const Device*, const SceneAssets*>, std::weak_ptr<MeshCache>>;
    const std::lock_guard guard(*lock);
    // Entries whose caches went with their last task go too, so the map holds live caches only.
    std::erase_if(*caches, [](const auto& entry) { return entry.second.expired(); });
    auto& slot = (*caches)[{&device, assets.get()}];
    if (auto cache = slot.lock()) {
        return cache;
    }
    auto cache = std::make_shared<MeshCache>(device);
    cache->upload(assets);
    slot = cache;
    return cache;
}

SceneCapture::SceneCapture(std::shared_ptr<MeshCache> cache, VkFormat color, VkExtent2D extent,
                           std::uint32_t slots)
    : m_cache(std::move(cache)), m_renderer(*m_cache, color), m_extent(extent) {
    if (slots == 0) {
        throw Error(ErrorCategory::InvalidArgument, "A scene capture needs at least one slot");
    }
    for (std::uint32_t i = 0; i < slots; ++i) {
        m_targets.push_back(std::make_unique<RenderTarget>(
            m_renderer, extent, 4096, 1,
            m_cache->device().label() + " capture slot " + std::to_string(i)));
    }
}

VkResult SceneCapture::record(VkCommandBuffer cmd, std::uint32_t slot, VkImage image,
                              VkImageView view, std::span<const std::byte> snapshot) noexcept {
    const std::optional<FrameSnapshot> frame = decode_snapshot(snapshot);
    if (!frame) {
        return VK_ERROR_FORMAT_NOT_SUPPORTED;
    }
    return record(cmd, slot, image, view, *frame);
}

VkResult SceneCapture::record(VkCommandBuffer cmd, std::uint32_t slot, VkImage image,
                              VkImageView view, const FrameSnapshot& frame) noexcept {
    if (slot >= m_targets.size()) {
        return VK_ERROR_UNKNOWN;
    }
    ColorTarget color;
    color.image = image;
    color.view = view;
    color.extent = m_extent;
    color.final_layout = k_output_layout;
    color.final_stage = VK_PIPELINE_STAGE_2_NONE; // no barrier: the transfer waits on our scope
    color.final_access = VK_ACCESS_2_NONE;
    // A worker's capture shows no other task's output: surfaces keep their material.
    try {
        m_last_status = m_renderer.record(cmd, *m_targets[slot], color, frame);
    } catch (const std::bad_alloc&) {
        return VK_ERROR_OUT_OF_HOST_MEMORY; // the frame's plan could not be allocated
    }
    return m_last_status == RenderStatus::Ok ? VK_SUCCESS : VK_ERROR_UNKNOWN;
}

} // namespace tandem::detail
