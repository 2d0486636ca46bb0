// ComputeCopy: a copy of a whole 8-bit colour image made by a compute dispatch, one texel per
// invocation, in place of vkCmdCopyImage. On some GPUs the copy command runs far below the
// memory's rate while shader cores do not: on an H100 a 1080p RGBA8 frame takes 159 us with
// vkCmdCopyImage and 13.4 us with a compute shader (bench/results/
// h100-shared-image-methods-2026-12-07.json). The runtime copies an application's input image
// with it where the application declares the image sampleable (TaskInputDesc::
// application_usage) and its format is one this copy moves exactly.
//
// Exact: only 8-bit UNORM formats (RGBA8, BGRA8), whose values go through float and back
// unchanged. Float formats keep the copy command, which moves every bit (NaN payloads and
// denormals among them).
//
// The pipeline is the device's (core/pipeline_shelf.hpp: a task that comes and goes does not
// create one each time); the descriptor sets are this object's, one per copy in flight. A view
// of the application's image is made for each copy (its handle may name another image next
// time) and kept by the caller until the copy ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/pipeline_shelf.hpp"

namespace tandem::detail {

// True where `device` copies images of `format` with ComputeCopy: RGBA8 or BGRA8 (UNORM) that
// it samples and stores in optimal tiling (BGRA8 stored without a format in the shader, so that
// feature too).
[[nodiscard]] bool copies_by_compute(const Device& device, VkFormat format) noexcept;

class ComputeCopy {
public:
    // For `format` (copies_by_compute), with `sets` descriptor sets. Throws Error.
    ComputeCopy(const Device& device, VkFormat format, std::uint32_t sets, const std::string& name);

    // Records the copy of all of `extent` from `source` (an image of the format, with
    // SAMPLED usage, in `source_layout`: SHADER_READ_ONLY_OPTIMAL or GENERAL) into the storage
    // view `target` (in GENERAL), with set `set`, which no pending command buffer may use.
    // `source_view` takes the view made of `source` (none when `given` is one of it, the
    // application's): keep it until the copy ran. The barriers
    // are the caller's (compute stage: SHADER_SAMPLED_READ, SHADER_STORAGE_WRITE). Never
    // throws; a failure's VkResult comes back, nothing recorded.
    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t set, VkImage source,
                                  VkImageLayout source_layout, VkImageView given,
                                  VkImageView target, VkExtent2D extent,
                                  Handle<VkImageView>& source_view) noexcept;

private:
    [[nodiscard]] VkResult make_view(VkImage source, Handle<VkImageView>& out) const noexcept;

    const Device& m_device;
    VkFormat m_format;
    std::string m_name;
    PipelineShelf::Shared m_pipeline;
    Handle<VkDescriptorPool> m_pool;
    std::vector<VkDescriptorSet> m_sets;
};

// The layout a sampled read of an image in `layout` needs: `layout` where a shader may sample
// it there, else SHADER_READ_ONLY_OPTIMAL.
[[nodiscard]] VkImageLayout sampled_layout(VkImageLayout layout) noexcept;

} // namespace tandem::detail
