// The device's memory pool and pipeline shelf, on a real device: buffers and images are ranges of
// shared blocks that never overlap and hold what was written to them; a block that empties is
// kept only while it is its kind's only empty one, so thousands of objects created and destroyed
// leave the pool as it was; an image destroyed is reused for the next one of its kind, never for
// another kind, and at most k_idle_kept wait; a pipeline is built once per key and shared, and
// at most k_idle_kept unused ones stay.
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/image_cache.hpp"
#include "core/memory_pool.hpp"
#include "core/pipeline_shelf.hpp"
#include "core/resources.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using detail::Buffer;
using detail::BufferDesc;
using detail::Image;
using detail::ImageDesc;

class MemoryPoolTest : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }

    static BufferDesc host_buffer(VkDeviceSize size) {
        return {size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                "pool test buffer"};
    }
    static ImageDesc image(std::uint32_t width, std::uint32_t height) {
        ImageDesc desc;
        desc.width = width;
        desc.height = height;
        desc.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                     VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        desc.name = "pool test image";
        return desc;
    }
};

TEST_F(MemoryPoolTest, RangesOfOneBlockNeverOverlapAndKeepTheirBytes) {
    detail::Device& device = open(0);
    std::vector<Buffer> buffers;
    for (std::uint32_t i = 0; i < 64; ++i) {
        buffers.push_back(detail::create_buffer(device, host_buffer(1000 + 37 * i)));
        std::memset(buffers.back().mapped, static_cast<int>(i), buffers.back().size);
    }
    // One block holds them all, each at its own offset, with no two ranges overlapping.
    EXPECT_EQ(device.memory_pool().blocks(), 1u);
    std::set<std::pair<VkDeviceSize, VkDeviceSize>> ranges;
    for (const Buffer& b : buffers) {
        EXPECT_EQ(b.memory.get(), buffers.front().memory.get());
        ranges.insert({b.memory_offset, b.memory_offset + b.size});
    }
    VkDeviceSize end = 0;
    for (const auto& [first, last] : ranges) {
        EXPECT_GE(first, end) << "ranges overlap";
        end = last;
    }
    for (std::uint32_t i = 0; i < buffers.size(); ++i) {
        const auto* bytes = static_cast<const std::uint8_t*>(buffers[i].mapped);
        for (VkDeviceSize k = 0; k < buffers[i].size; ++k) {
            ASSERT_EQ(bytes[k], i) << "buffer " << i << " byte " << k;
        }
    }
    EXPECT_EQ(device.live_allocations(), 64u);
    buffers.clear();
    EXPECT_EQ(device.live_allocations(), 0u);
    EXPECT_EQ(device.live_bytes(), 0u);
    EXPECT_EQ(device.memory_pool().blocks(), 1u) << "the only empty block is kept";
}

TEST_F(MemoryPoolTest, ThousandsOfObjectsCreatedAndDestroyedLeaveThePoolAsItWas) {
    detail::Device& device = open(0);
    { // warm: one block of each kind
        const Buffer b = detail::create_buffer(device, host_buffer(4096));
        const Image i = detail::create_image(device, image(64, 48));
    }
    const std::uint64_t blocks = device.memory_pool().blocks();
    const std::uint64_t bytes = device.memory_pool().block_bytes();
    for (std::uint32_t cycle = 0; cycle < 2000; ++cycle) {
        const Image a = detail::create_image(device, image(64 + cycle % 7, 48));
        const Buffer b = detail::create_buffer(device, host_buffer(64 * 48 * 4 + cycle % 13));
        const Image c = detail::create_image(device, image(32, 32 + cycle % 5));
    }
    EXPECT_EQ(device.memory_pool().blocks(), blocks);
    EXPECT_EQ(device.memory_pool().block_bytes(), bytes);
    EXPECT_EQ(device.live_allocations(), device.image_cache().idle().first)
        << "only the images kept for reuse hold memory";
}

TEST_F(MemoryPoolTest, ABlockThatEmptiesIsFreedWhenAnotherEmptyOneIsKept) {
    detail::Device& device = open(0);
    // Two blocks' worth of buffers (each a quarter block, so four fill one).
    const VkDeviceSize quarter = detail::kPoolBlock / 4;
    std::vector<Buffer> buffers;
    for (int i = 0; i < 8; ++i) {
        buffers.push_back(detail::create_buffer(device, host_buffer(quarter)));
    }
    const std::uint64_t full = device.memory_pool().blocks();
    EXPECT_GE(full, 2u);
    buffers.clear();
    EXPECT_EQ(device.memory_pool().blocks(), 1u);
    // Larger than a block: a block of its own size, kept while it is the only empty one.
    {
        const Buffer big = detail::create_buffer(device, host_buffer(detail::kPoolBlock + 1));
        EXPECT_EQ(big.memory_offset, 0u);
        EXPECT_EQ(device.memory_pool().blocks(), 2u);
    }
    EXPECT_EQ(device.memory_pool().blocks(), 1u);
}

TEST_F(MemoryPoolTest, AnImageDestroyedIsReusedForTheNextOfItsKindOnly) {
    detail::Device& device = open(0);
    detail::ImageCache& cache = device.image_cache();
    VkImage first = VK_NULL_HANDLE;
    {
        const Image a = detail::create_image(device, image(64, 48));
        first = a.get();
    }
    EXPECT_EQ(cache.idle_entries(), 1u);
    for (int cycle = 0; cycle < 1000; ++cycle) {
        const Image again = detail::create_image(device, image(64, 48));
        ASSERT_EQ(again.get(), first) << "cycle " << cycle;
        EXPECT_EQ(again.extent.width, 64u);
        EXPECT_NE(again.view.get(), VK_NULL_HANDLE);
    }
    EXPECT_EQ(cache.reused(), 1000u);
    { // Another size, format or usage is another kind.
        const Image other_size = detail::create_image(device, image(48, 64));
        ImageDesc format = image(64, 48);
        format.format = VK_FORMAT_B8G8R8A8_UNORM;
        format.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
        const Image other_format = detail::create_image(device, format);
        EXPECT_NE(other_size.get(), first);
        EXPECT_NE(other_format.get(), first);
        EXPECT_EQ(other_format.format, VK_FORMAT_B8G8R8A8_UNORM);
        // Both alive at once: the second of a kind is a new image.
        const Image a = detail::create_image(device, image(64, 48));
        const Image b = detail::create_image(device, image(64, 48));
        EXPECT_NE(a.get(), b.get());
    }
    // A reused image works as a new one: written and read back exactly.
    {
        const Image target = detail::create_image(device, image(64, 48));
        const Buffer readback = detail::create_buffer(device, host_buffer(64 * 48 * 4));
        detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
            detail::image_barrier(cmd, target.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                                  VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                                  VK_ACCESS_2_TRANSFER_WRITE_BIT);
            const VkClearColorValue red{{1.0f, 0.0f, 0.0f, 1.0f}};
            const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
            vkCmdClearColorImage(cmd, target.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &red, 1,
                                 &range);
            detail::image_barrier(cmd, target.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
            VkBufferImageCopy copy{};
            copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            copy.imageExtent = {64, 48, 1};
            vkCmdCopyImageToBuffer(cmd, target.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                   readback.get(), 1, &copy);
            detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT,
                                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                                   VK_ACCESS_2_HOST_READ_BIT);
        });
        const auto* texels = static_cast<const std::uint32_t*>(readback.mapped);
        for (std::uint32_t i = 0; i < 64 * 48; ++i) {
            ASSERT_EQ(texels[i], 0xff0000ffu) << "texel " << i;
        }
    }
    // At most k_idle_kept wait for reuse.
    {
        std::vector<Image> many;
        for (std::size_t i = 0; i < detail::ImageCache::k_idle_kept + 10; ++i) {
            many.push_back(detail::create_image(device, image(16, 16)));
        }
    }
    EXPECT_EQ(cache.idle_entries(), detail::ImageCache::k_idle_kept);
    EXPECT_EQ(device.live_allocations(), detail::ImageCache::k_idle_kept)
        << "only the images kept hold memory";
}

TEST_F(MemoryPoolTest, APipelineIsBuiltOncePerKeyAndAtMostSomeIdleOnesStay) {
    detail::Device& device = open(0);
    detail::PipelineShelf& shelf = device.pipelines();
    const VkDevice dev = device.handle();
    // A pipeline layout stands in for the pipeline: what the shelf does is the same.
    auto build = [dev] {
        VkPipelineLayoutCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        VkPipelineLayout layout = VK_NULL_HANDLE;
        EXPECT_EQ(vkCreatePipelineLayout(dev, &info, nullptr, &layout), VK_SUCCESS);
        detail::PipelineObjects out;
        out.layout = detail::Handle<VkPipelineLayout>(
            layout, [dev](VkPipelineLayout l) { vkDestroyPipelineLayout(dev, l, nullptr); });
        return out;
    };
    {
        const auto a = shelf.get("a", build);
        const auto b = shelf.get("a", build);
        EXPECT_EQ(a.layout(), b.layout());
        EXPECT_EQ(shelf.builds(), 1u);
    }
    for (int cycle = 0; cycle < 1000; ++cycle) {
        const auto again = shelf.get("a", build);
    }
    EXPECT_EQ(shelf.builds(), 1u) << "an idle pipeline is kept for the next user";
    for (std::size_t i = 0; i < 3 * detail::PipelineShelf::k_idle_kept; ++i) {
        const auto other = shelf.get("key " + std::to_string(i), build);
    }
    EXPECT_EQ(shelf.size(), detail::PipelineShelf::k_idle_kept);
    // A held pipeline is never evicted, however many others come and go.
    const auto held = shelf.get("held", build);
    const VkPipelineLayout layout = held.layout();
    for (std::size_t i = 0; i < 3 * detail::PipelineShelf::k_idle_kept; ++i) {
        const auto other = shelf.get("more " + std::to_string(i), build);
    }
    const auto same = shelf.get("held", build);
    EXPECT_EQ(same.layout(), layout);
}

} // namespace
} // namespace tandem::test
