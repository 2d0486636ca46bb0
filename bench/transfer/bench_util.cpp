#include "bench_util.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "core/stats.hpp"

namespace tandem::bench {

Stats stats_of(std::vector<double> samples) {
    Stats s;
    s.n = samples.size();
    if (samples.empty()) {
        return s;
    }
    std::sort(samples.begin(), samples.end());
    s.min = samples.front();
    s.max = samples.back();
    s.median = detail::median_sorted(samples);
    return s;
}

nlohmann::json to_json(const Stats& s) {
    return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"n", s.n}};
}

void fill_pattern(std::uint8_t* out, std::size_t n, std::uint64_t seed) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::memcpy(out + i, &x, 8);
    }
    for (; i < n; ++i) {
        out[i] = static_cast<std::uint8_t>(i * 131 + seed);
    }
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint64_t seed) {
    std::vector<std::uint8_t> out(n);
    fill_pattern(out.data(), n, seed);
    return out;
}

bool spin_until(const detail::TimelineSemaphore& semaphore, std::uint64_t value,
                std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        std::uint64_t current = 0;
        if (semaphore.value(current) != VK_SUCCESS) {
            return false;
        }
        if (current >= value) {
            return true;
        }
        if (Clock::now() > deadline) {
            return false;
        }
    }
}

namespace {

VkBufferImageCopy whole(VkExtent2D extent) {
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {extent.width, extent.height, 1};
    return region;
}

std::size_t image_bytes(VkExtent2D extent, VkFormat format) {
    return std::size_t{extent.width} * extent.height * detail::bytes_per_texel(format);
}

constexpr VkAccessFlags2 k_rw = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;

} // namespace

void upload_image(const detail::Device& device, VkImage image, VkExtent2D extent, VkFormat format,
                  const std::vector<std::uint8_t>& bytes, VkImageLayout final_layout) {
    detail::BufferDesc desc;
    desc.size = image_bytes(extent, format);
    desc.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    desc.name = "bench upload";
    const detail::Buffer staging = detail::create_buffer(device, desc);
    std::memcpy(staging.mapped, bytes.data(), desc.size);
    detail::flush_buffer(device, staging);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, k_rw,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const auto region = whole(extent);
        vkCmdCopyBufferToImage(cmd, staging.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                               &region);
        detail::image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, final_layout,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, k_rw);
    });
}

void poison_image(const detail::Device& device, VkImage image, VkImageLayout from,
                  VkImageLayout final_layout) {
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, image, from, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, k_rw,
                              VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        VkClearColorValue poison{};
        poison.float32[0] = 0.8f; // every format Tandem moves reads float clear values
        poison.float32[1] = 0.2f;
        poison.float32[2] = 0.6f;
        poison.float32[3] = 0.4f;
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &poison, 1, &range);
        detail::image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, final_layout,
                              VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, k_rw);
    });
}

std::vector<std::uint8_t> read_image(const detail::Device& device, VkImage image, VkExtent2D extent,
                                     VkFormat format, VkImageLayout layout) {
    detail::BufferDesc desc;
    desc.size = image_bytes(extent, format);
    desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    desc.preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    desc.name = "bench readback";
    const detail::Buffer staging = detail::create_buffer(device, desc);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, image, layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, k_rw,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
        const auto region = whole(extent);
        vkCmdCopyImageToBuffer(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging.get(), 1,
                               &region);
        detail::image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, layout,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, k_rw);
        detail::buffer_barrier(cmd, staging.get(), 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                               VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                               VK_ACCESS_2_HOST_READ_BIT);
    });
    detail::invalidate_buffer(device, staging);
    std::vector<std::uint8_t> out(desc.size);
    std::memcpy(out.data(), staging.mapped, desc.size);
    return out;
}

} // namespace tandem::bench
