#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "core/resources.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

class DeviceQueues : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }
};

// The second transfer queue is a copy engine of its own exactly when the transfer-only family
// has two queues, and the transfer queue itself otherwise: never a queue of another family.
TEST_F(DeviceQueues, SecondTransferQueueIsAnotherQueueOfTheTransferFamilyOrTheSameOne) {
    for (std::uint32_t a = 0; a < adapters().size(); ++a) {
        detail::Device& device = open(a);
        const detail::Queue& first = device.queue(detail::QueueRole::Transfer);
        const detail::Queue& second = device.queue(detail::QueueRole::SecondTransfer);
        ASSERT_NE(second.handle(), VK_NULL_HANDLE);
        EXPECT_EQ(second.family(), first.family());
        const auto& family = device.info().queue_families.at(first.family());
        const bool expected = device.has_dedicated_transfer_family() && family.count >= 2;
        EXPECT_EQ(device.has_second_transfer_queue(), expected) << device.info().name;
        if (expected) {
            EXPECT_NE(second.index(), first.index());
        }
    }
}

// Work submitted to the second transfer queue runs: a fill lands, byte for byte.
TEST_F(DeviceQueues, SecondTransferQueueRunsCopies) {
    detail::Device& device = open(0);
    detail::BufferDesc desc;
    desc.size = 4096;
    desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    desc.name = "second transfer queue fill";
    const detail::Buffer buffer = detail::create_buffer(device, desc);
    std::memset(buffer.mapped, 0, desc.size);
    detail::flush_buffer(device, buffer);
    detail::submit_and_wait(device, detail::QueueRole::SecondTransfer, [&](VkCommandBuffer cmd) {
        vkCmdFillBuffer(cmd, buffer.get(), 0, VK_WHOLE_SIZE, 0xa5c3e10fu);
        detail::buffer_barrier(cmd, buffer.get(), 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                               VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                               VK_ACCESS_2_HOST_READ_BIT);
    });
    detail::invalidate_buffer(device, buffer);
    std::vector<std::uint32_t> words(desc.size / 4);
    std::memcpy(words.data(), buffer.mapped, desc.size);
    for (std::size_t i = 0; i < words.size(); ++i) {
        ASSERT_EQ(words[i], 0xa5c3e10fu) << "word " << i;
    }
}

} // namespace
} // namespace tandem::test
