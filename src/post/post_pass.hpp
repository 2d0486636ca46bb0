// What the post-processing passes (post/blur.hpp, post/upscale.hpp, post/interpolate.hpp) share:
// the stage and access their output is written with, the barriers around the intermediates they
// own, and the check of a record's sizes.
//
// Every pass writes its RGBA8 output in GENERAL from the compute stage. The caller transitions
// inputs to SHADER_READ_ONLY_OPTIMAL or GENERAL (visible to COMPUTE_SHADER sampled reads) and the
// output to GENERAL (earlier uses ordered before COMPUTE_SHADER) before record(), and orders its
// later uses of the output after k_post_output_stage / k_post_output_access.
#pragma once

#include <vulkan/vulkan_core.h>

namespace tandem::detail {

inline constexpr VkPipelineStageFlags2 k_post_output_stage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
inline constexpr VkAccessFlags2 k_post_output_access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;

// An intermediate image before a pass writes it again: earlier records' compute reads and writes
// finish first, and the old contents are discarded (UNDEFINED to GENERAL).
void begin_intermediate(VkCommandBuffer cmd, VkImage image) noexcept;
// An intermediate image written by one dispatch, before the next one reads it.
void intermediate_written(VkCommandBuffer cmd, VkImage image) noexcept;

// Every compute write so far made visible to the next dispatch's reads and writes (buffers and
// images in GENERAL alike).
void compute_to_compute(VkCommandBuffer cmd) noexcept;

// The descriptor types the passes' binding tables are written with.
inline constexpr VkDescriptorType k_sampled = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
inline constexpr VkDescriptorType k_storage_image = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
inline constexpr VkDescriptorType k_storage_buffer = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;

// True when `extent` is non-empty and within `max`.
[[nodiscard]] constexpr bool fits(VkExtent2D extent, VkExtent2D max) noexcept {
    return extent.width > 0 && extent.height > 0 && extent.width <= max.width &&
           extent.height <= max.height;
}

} // namespace tandem::detail
