// Helpers of the post-processing tests: upload host pixels into a sampled image, and run a
// pass's commands into a poisoned RGBA8 output that is read back.
#pragma once

#include <cstring>
#include <functional>

#include <gtest/gtest.h>

#include "core/resources.hpp"
#include "post/post_pass.hpp"
#include "post/reference.hpp"

namespace tandem::test {

// A sampled image of `format` holding `bytes` (tightly packed rows), left in
// SHADER_READ_ONLY_OPTIMAL and visible to compute shaders.
inline detail::Image upload_image(const detail::Device& device, VkFormat format,
                                  std::uint32_t width, std::uint32_t height, const void* bytes,
                                  std::size_t size) {
    detail::ImageDesc desc;
    desc.width = width;
    desc.height = height;
    desc.format = format;
    desc.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    desc.name = "post test input";
    detail::Image image = detail::create_image(device, desc);
    detail::BufferDesc staging_desc;
    staging_desc.size = size;
    staging_desc.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    staging_desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    staging_desc.name = "post test upload";
    detail::Buffer staging = detail::create_buffer(device, staging_desc);
    std::memcpy(staging.mapped, bytes, size);
    detail::flush_buffer(device, staging);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                              VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {width, height, 1};
        vkCmdCopyBufferToImage(cmd, staging.get(), image.get(),
                               VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        detail::image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
    });
    return image;
}

inline detail::Image upload_rgba8(const detail::Device& device, const detail::Rgba8Image& image) {
    return upload_image(device, VK_FORMAT_R8G8B8A8_UNORM, image.width, image.height,
                        image.pixels.data(), image.pixels.size());
}

// An RGBA8 storage image the passes can write and the test can poison and read back.
inline detail::Image create_output(const detail::Device& device, std::uint32_t width,
                                   std::uint32_t height) {
    detail::ImageDesc desc;
    desc.width = width;
    desc.height = height;
    desc.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                 VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    desc.name = "post test output";
    return detail::create_image(device, desc);
}

// Fills `output` with a poison colour, transitions it to GENERAL, runs `record` (the pass), and
// reads the output back.
inline detail::Rgba8Image run_pass(const detail::Device& device, const detail::Image& output,
                                   const std::function<void(VkCommandBuffer)>& record) {
    const std::uint32_t width = output.extent.width;
    const std::uint32_t height = output.extent.height;
    detail::BufferDesc readback_desc;
    readback_desc.size = std::uint64_t{width} * height * 4;
    readback_desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    readback_desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    readback_desc.name = "post test readback";
    detail::Buffer readback = detail::create_buffer(device, readback_desc);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        detail::image_barrier(cmd, output.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                              VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const VkClearColorValue poison{{1.0f, 0.0f, 1.0f, 0.5f}};
        vkCmdClearColorImage(cmd, output.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &poison, 1,
                             &range);
        detail::image_barrier(
            cmd, output.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL,
            VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
        record(cmd);
        detail::image_barrier(cmd, output.get(), VK_IMAGE_LAYOUT_GENERAL,
                              VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, detail::k_post_output_stage,
                              detail::k_post_output_access, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_READ_BIT);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {width, height, 1};
        vkCmdCopyImageToBuffer(cmd, output.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                               readback.get(), 1, &region);
        detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                               VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    });
    detail::invalidate_buffer(device, readback);
    detail::Rgba8Image out(width, height);
    std::memcpy(out.pixels.data(), readback.mapped, out.pixels.size());
    return out;
}

} // namespace tandem::test
