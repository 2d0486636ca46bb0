#include <chrono>
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

// settle() waits for the work submitted before it and no longer than it is told: behind a
// batch held back by an unsignalled semaphore it times out, keeping its pending fence; once
// that batch is released it settles and destroys that fence.
TEST_F(DeviceQueues, SettleWaitsForEarlierWorkAndNoLonger) {
    detail::Device& device = open(0);
    EXPECT_EQ(device.settle(std::chrono::seconds(10)), VK_SUCCESS) << "an idle device";

    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    info.pNext = &type;
    VkSemaphore gate = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateSemaphore(device.handle(), &info, nullptr, &gate), VK_SUCCESS);
    VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    wait.semaphore = gate;
    wait.value = 1;
    wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    ASSERT_EQ(device.queue(detail::QueueRole::Transfer).submit_one(VK_NULL_HANDLE, {&wait, 1}),
              VK_SUCCESS);

    EXPECT_EQ(device.settle(std::chrono::milliseconds(50)), VK_TIMEOUT) << "held work";
    EXPECT_GE(device.unsettled_fences(), 1u);

    VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    signal.semaphore = gate;
    signal.value = 1;
    ASSERT_EQ(vkSignalSemaphore(device.handle(), &signal), VK_SUCCESS);
    EXPECT_EQ(device.settle(std::chrono::seconds(10)), VK_SUCCESS) << "released work";
    EXPECT_EQ(device.unsettled_fences(), 0u);
    std::uint64_t value = 0;
    ASSERT_EQ(vkGetSemaphoreCounterValue(device.handle(), gate, &value), VK_SUCCESS);
    EXPECT_EQ(value, 1u);
    vkDestroySemaphore(device.handle(), gate, nullptr);
}

} // namespace
} // namespace tandem::test
