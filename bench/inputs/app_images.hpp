// The inputs benchmarks' application images: an image of the primary filled once from host
// bytes, before any frame, and left in TRANSFER_SRC_OPTIMAL (as the application's images are
// when they are submitted). Benchmark thread only; throws tandem::Error.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/resources.hpp"

namespace tandem::bench {

// An RGBA8 frame of `w` x `h` whose texels differ from their neighbours (opaque).
[[nodiscard]] inline std::vector<std::uint8_t> pattern_rgba8(std::uint32_t w, std::uint32_t h) {
    std::vector<std::uint8_t> out(std::size_t{w} * h * 4);
    for (std::size_t i = 0; i < std::size_t{w} * h; ++i) {
        const std::size_t x = i % w;
        const std::size_t y = i / w;
        out[i * 4] = static_cast<std::uint8_t>((x * 7 + y) & 255);
        out[i * 4 + 1] = static_cast<std::uint8_t>((y * 3 + (x >> 3)) & 255);
        out[i * 4 + 2] = static_cast<std::uint8_t>((x ^ y) & 255);
        out[i * 4 + 3] = 255;
    }
    return out;
}

// `image` (`extent`, texels of `texel_bytes`) written with `data`, then in TRANSFER_SRC_OPTIMAL.
inline void fill_image(const detail::Device& primary, VkImage image, VkExtent2D extent,
                       std::size_t texel_bytes, const void* data) {
    detail::BufferDesc b;
    b.size = VkDeviceSize{extent.width} * extent.height * texel_bytes;
    b.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    b.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    b.name = "bench input upload";
    const detail::Buffer upload = detail::create_buffer(primary, b);
    std::memcpy(upload.mapped, data, b.size);
    detail::submit_and_wait(primary, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                              VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {extent.width, extent.height, 1};
        vkCmdCopyBufferToImage(cmd, upload.buffer.get(), image,
                               VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        detail::image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                              VK_ACCESS_2_NONE);
    });
}

} // namespace tandem::bench
