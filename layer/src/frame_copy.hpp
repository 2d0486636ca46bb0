// FrameCopy: the layer's copy of a worker's frame (a lease of Tandem's RGBA8 output) into a
// swapchain image, made by a compute dispatch in place of vkCmdCopyImage. On some GPUs the copy
// command moves a frame an order of magnitude more slowly than shader cores do (on an H100, 159
// against 13 us for a 1080p frame: docs/layer.md, "What is still to come"). Used where the
// swapchain's images may be written through an RGBA8 storage view (SwapchainRecord::
// rgba8_writable: mutable formats with RGBA8 among them, and storage usage): the frame's bytes
// reach the image unchanged, whatever its own 8-bit format, as the copy command moves them.
//
// The pipeline is the device's (FrameCopyPipeline, made once and kept while the layer generates
// frames on it: a program that recreates its swapchain does not make one each time); the
// descriptor sets, one per copy slot, and a storage view per swapchain image are the
// swapchain's (FrameCopy), made and destroyed with its generation; record() runs on its
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

// The copy's shader, its layouts and its pipeline on one device.
class FrameCopyPipeline {
public:
    // Throws std::runtime_error, having destroyed what it made.
    FrameCopyPipeline(const DeviceDispatch& vk, VkDevice device);
    ~FrameCopyPipeline();
    FrameCopyPipeline(const FrameCopyPipeline&) = delete;
    FrameCopyPipeline& operator=(const FrameCopyPipeline&) = delete;

    [[nodiscard]] VkDescriptorSetLayout set_layout() const noexcept { return m_set_layout; }
    [[nodiscard]] VkPipelineLayout layout() const noexcept { return m_layout; }
    [[nodiscard]] VkPipeline pipeline() const noexcept { return m_pipeline; }

private:
    void destroy() noexcept;

    const DeviceDispatch& m_vk;
    VkDevice m_device;
    VkShaderModule m_shader = VK_NULL_HANDLE;
    VkDescriptorSetLayout m_set_layout = VK_NULL_HANDLE;
    VkPipelineLayout m_layout = VK_NULL_HANDLE;
    VkPipeline m_pipeline = VK_NULL_HANDLE;
};

class FrameCopy {
public:
    // For `images` (the swapchain's) of `extent`, with `slots` descriptor sets of `pipeline`
    // (which outlives it). Throws std::runtime_error, having destroyed what it made.
    FrameCopy(const DeviceDispatch& vk, VkDevice device, const FrameCopyPipeline& pipeline,
              std::span<const VkImage> images, VkExtent2D extent, std::uint32_t slots);
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
    const FrameCopyPipeline& m_pipeline;
    VkExtent2D m_extent;
    VkDescriptorPool m_pool = VK_NULL_HANDLE;
    std::vector<VkDescriptorSet> m_sets;
    std::vector<VkImageView> m_targets; // per swapchain image: an RGBA8 storage view
};

} // namespace tandem::layer
