// Helpers for transfer tests: random image contents, upload into an image, poison an image,
// read an image back tightly packed, an observer to plug into a link. All blocking
// (submit_and_wait); tests only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/staging_copier.hpp"
#include "transfer/transfer_observer.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::test {

inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t seed) {
    std::vector<std::uint8_t> out(n);
    std::mt19937 rng(seed);
    for (auto& b : out) {
        b = static_cast<std::uint8_t>(rng() >> 24);
    }
    return out;
}

inline VkBufferImageCopy whole_image_region(std::uint32_t w, std::uint32_t h) {
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {w, h, 1};
    return region;
}

// Writes `bytes` (tightly packed) into `image` and leaves it in `final_layout`, ready for
// reading by later transfer work (barrier to all commands). Runs on the main queue.
inline void upload_image(const detail::Device& device, const detail::Image& image,
                         const std::vector<std::uint8_t>& bytes, VkImageLayout final_layout) {
    detail::BufferDesc desc;
    desc.size = bytes.size();
    desc.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    desc.name = "test upload";
    detail::Buffer staging = detail::create_buffer(device, desc);
    std::memcpy(staging.mapped, bytes.data(), bytes.size());
    detail::flush_buffer(device, staging);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                              VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const auto region = whole_image_region(image.extent.width, image.extent.height);
        vkCmdCopyBufferToImage(cmd, staging.get(), image.get(),
                               VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        detail::image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, final_layout,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                              VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
    });
}

// Fills `image` with 0xCD bytes so an unwritten result cannot pass.
inline void poison_image(const detail::Device& device, const detail::Image& image,
                         VkImageLayout final_layout) {
    const std::size_t n = std::size_t{image.extent.width} * image.extent.height *
                          detail::bytes_per_texel(image.format);
    upload_image(device, image, std::vector<std::uint8_t>(n, 0xCD), final_layout);
}

// Reads `image` (in `layout`) back tightly packed. Leaves it in `layout`.
inline std::vector<std::uint8_t> read_image(const detail::Device& device,
                                            const detail::Image& image, VkImageLayout layout) {
    const std::size_t n = std::size_t{image.extent.width} * image.extent.height *
                          detail::bytes_per_texel(image.format);
    detail::BufferDesc desc;
    desc.size = n;
    desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    desc.preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    desc.name = "test readback";
    detail::Buffer staging = detail::create_buffer(device, desc);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, image.get(), layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
        const auto region = whole_image_region(image.extent.width, image.extent.height);
        vkCmdCopyImageToBuffer(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                               staging.get(), 1, &region);
        detail::image_barrier(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, layout,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                              VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
        detail::buffer_barrier(cmd, staging.get(), 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                               VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                               VK_ACCESS_2_HOST_READ_BIT);
    });
    detail::invalidate_buffer(device, staging);
    std::vector<std::uint8_t> out(n);
    std::memcpy(out.data(), staging.mapped, n);
    return out;
}

// What the tests plug into a link: band heights, GPU times, a call per band handed.
struct TestObserver final : detail::TransferObserver {
    std::vector<std::uint32_t> heights;
    bool gpu_times = false;
    std::function<void(std::uint32_t slot, std::uint32_t band)> handed;
    [[nodiscard]] std::vector<std::uint32_t> band_heights() const override { return heights; }
    [[nodiscard]] bool times_bands_on_gpus() const override { return gpu_times; }
    void on_band_handed(std::uint32_t slot, std::uint32_t band) noexcept override {
        if (handed) {
            handed(slot, band);
        }
    }
};

// Index of the first differing byte, or -1.
inline long first_difference(const std::vector<std::uint8_t>& a,
                             const std::vector<std::uint8_t>& b) {
    if (a.size() != b.size()) {
        return 0;
    }
    const auto it = std::mismatch(a.begin(), a.end(), b.begin());
    return it.first == a.end() ? -1 : static_cast<long>(it.first - a.begin());
}

// The host copying through both devices' mappings of the two stagings, in place of CUDA: what
// lets the cuda-peer path's Vulkan side (exports, ownership transfers to and from
// VK_QUEUE_FAMILY_EXTERNAL, band offsets, the stream's gate) run where there is no CUDA. With
// `streams` false it has no stream, so its copies run as the bridge's host step.
class MappedStagingCopier final : public detail::StagingCopier {
public:
    MappedStagingCopier(const detail::Device& worker, const detail::ExportableBuffer& from,
                        const detail::Device& primary, const detail::ExportableBuffer& to,
                        VkDeviceSize bytes, bool streams = true)
        : m_worker(worker), m_primary(primary), m_from(from.memory.get()), m_to(to.memory.get()),
          m_streams(streams) {
        for (const auto& [device, buffer] : {std::pair{&worker, &from}, std::pair{&primary, &to}}) {
            const VkMemoryPropertyFlags want =
                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
            if ((device->memory_flags(buffer->memory_type) & want) != want) {
                throw Error("The staging memory is not host-visible and coherent here");
            }
        }
        detail::vk_check(vkMapMemory(worker.handle(), m_from, 0, bytes, 0, &m_source), "map");
        detail::vk_check(vkMapMemory(primary.handle(), m_to, 0, bytes, 0, &m_target), "map");
    }
    ~MappedStagingCopier() override {
        vkUnmapMemory(m_worker.handle(), m_from);
        vkUnmapMemory(m_primary.handle(), m_to);
    }
    [[nodiscard]] std::string copy(VkDeviceSize offset,
                                   VkDeviceSize bytes) const noexcept override {
        std::memcpy(static_cast<std::byte*>(m_target) + offset,
                    static_cast<const std::byte*>(m_source) + offset, bytes);
        return {};
    }
    [[nodiscard]] std::unique_ptr<detail::StagingStream>
    stream(const detail::TimelineSemaphore& worker_timeline,
           detail::TimelineSemaphore& gate) const override {
        return m_streams ? StagingCopier::stream(worker_timeline, gate) : nullptr;
    }

private:
    const detail::Device& m_worker;
    const detail::Device& m_primary;
    VkDeviceMemory m_from;
    VkDeviceMemory m_to;
    void* m_source = nullptr;
    void* m_target = nullptr;
    bool m_streams;
};

// The factory of a MappedStagingCopier (TransferDesc::cuda_copier, CudaPeerPath).
inline detail::StagingCopierFactory host_staging_copier(bool streams = true) {
    return [streams](const detail::Device& worker, const detail::ExportableBuffer& from,
                     const detail::Device& primary, const detail::ExportableBuffer& to,
                     VkDeviceSize bytes) {
        return std::make_unique<MappedStagingCopier>(worker, from, primary, to, bytes, streams);
    };
}

} // namespace tandem::test
