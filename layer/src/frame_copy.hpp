// FrameCopy: the layer's copy of a worker's frame (a lease of Tandem's RGBA8 output) into a
// swapchain image, made by a compute dispatch in place of vkCmdCopyImage. On some GPUs the copy
// command moves a frame an order of magnitude more slowly than shader cores do (on an H100, 159
// against 13 us for a 1080p frame: docs/layer.md, "What is still to come"). Used where the
// swapchain's images may be written through an RGBA8 storage view (SwapchainRecord::
// rgba8_writable: mutable formats with RGBA8 among them, and storage usage): the frame's bytes
// reach the image unchanged, whatever its own 8-bit format, as the copy command moves them.
//
// Its objects are the swapchain's: a pipeline, a descriptor set per copy slot, a storage view
// per swapchain image. Made and destroyed with the swapchain's generation; record() runs on its
// presenter thread only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <vulkan/vulkan.h>

#include "dispatch_table.hpp"

namespace tandem::layer {

// A 2D RGBA8 view of the whole of `image` (a swapchain image readable or writable so, see above)
// for `usage` alone; VK_NULL_HANDLE when it cannot be made.
[[nodiscard]] VkImageView rgba8_view(const DeviceDispatch& vk, VkDevice device, VkImage image,
                                     VkImageUsageFlags usage) noexcept;

class FrameCopy {
public:
    // For `images` (the swapchain's) of `extent`, with `slots` descriptor sets. Throws
    // std::runtime_error, having destroyed what it made.
    FrameCopy(const DeviceDispatch& vk, VkDevice device, std::span<const VkImage> images,
              VkExtent2D extent, std::uint32_t slots);
    ~FrameCopy();
    FrameCopy(const FrameCopy&) = delete;
    FrameCopy& operator=(const FrameCopy&) = delete;

    // Records the copy of `source` (a view of an RGBA8 image of the swapchain's extent, in
    // `source_layout`: SHADER_READ_ONLY_OPTIMAL or GENERAL) into swapchain image `target` (in
    // GENERAL) with set `slot`, which no pending command buffer uses. The barriers are the
    // caller's (compute stage: SHADER_SAMPLED_READ, SHADER_STORAGE_WRITE).
    void record(VkCommandBuffer cmd, std::uint32_t slot, VkImageView source,
                VkImageLayout source_layout, std::uint32_t target) const;

private:
    void destroy() noexcept;

    const DeviceDispatch& m_vk;
    VkDevice m_device;
    VkExtent2D m_extent;
    VkShaderModule m_shader = VK_NULL_HANDLE;
    VkDescriptorSetLayout m_set_layout = VK_NULL_HANDLE;
    VkPipelineLayout m_layout = VK_NULL_HANDLE;
    VkPipeline m_pipeline = VK_NULL_HANDLE;
    VkDescriptorPool m_pool = VK_NULL_HANDLE;
    std::vector<VkDescriptorSet> m_sets;
    std::vector<VkImageView> m_targets; // per swapchain image: an RGBA8 storage view
};

} // namespace tandem::layer
