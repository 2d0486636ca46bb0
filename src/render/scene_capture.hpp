// SceneCapture: one task's scene rendering on one device, shaped for a worker's workload: it
// takes the task's encoded FrameSnapshot (bytes, see scene/snapshot_codec.hpp) and records the
// render into the slot's colour image. It holds one RenderTarget per slot, so every slot can be
// in flight at once, and shares the device's MeshCache with every other capture there
// (shared_mesh_cache): geometry and textures are uploaded once per device and scene.
//
// Threads: construct at set-up (throws tandem::Error); record() from one thread at a time, never
// throws. A slot's RenderTarget is reused only when the caller records that slot again, which it
// does only after the slot's previous commands completed (the slot ring guarantees it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "render/mesh_cache.hpp"
#include "render/renderer.hpp"

namespace tandem::detail {

// The MeshCache of `device` for `assets`, created and uploaded on first use and shared after
// (while someone holds it). Thread-safe; set-up only (may block on the upload, may throw).
[[nodiscard]] std::shared_ptr<MeshCache>
shared_mesh_cache(const Device& device, const std::shared_ptr<const SceneAssets>& assets);

class SceneCapture {
public:
    SceneCapture(std::shared_ptr<MeshCache> cache, VkFormat color, VkExtent2D extent,
                 std::uint32_t slots);

    // Usage the slot images need, and where record() leaves them: COLOR_ATTACHMENT_OPTIMAL,
    // written by colour-attachment writes (the transfer that follows waits on that scope).
    static constexpr VkImageUsageFlags k_target_usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    static constexpr VkImageLayout k_output_layout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    static constexpr VkPipelineStageFlags2 k_output_stage =
        VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT;
    static constexpr VkAccessFlags2 k_output_access = VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT;

    // Decodes `snapshot` and records its render into `image` (contents discarded). Returns
    // VK_SUCCESS, VK_ERROR_FORMAT_NOT_SUPPORTED for bytes that are not a snapshot,
    // VK_ERROR_OUT_OF_HOST_MEMORY, or VK_ERROR_UNKNOWN when the renderer refuses the frame
    // (status in last_status()).
    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot, VkImage image,
                                  VkImageView view, std::span<const std::byte> snapshot) noexcept;
    // The same for a snapshot already decoded.
    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot, VkImage image,
                                  VkImageView view, const FrameSnapshot& frame) noexcept;

    [[nodiscard]] RenderStatus last_status() const noexcept { return m_last_status; }
    [[nodiscard]] const MeshCache& cache() const noexcept { return *m_cache; }

private:
    std::shared_ptr<MeshCache> m_cache;
    Renderer m_renderer;
    VkExtent2D m_extent;
    std::vector<std::unique_ptr<RenderTarget>> m_targets;
    RenderStatus m_last_status = RenderStatus::Ok;
};

} // namespace tandem::detail
