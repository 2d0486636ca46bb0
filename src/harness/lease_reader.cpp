#include "harness/lease_reader.hpp"

#include <string>
#include <vector>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "harness/adopted_primary.hpp"
#include "readback/lease_copy.hpp"
#include "sync/timeline_semaphore.hpp"

namespace tandem::harness {

using detail::Buffer;
using detail::BufferDesc;
using detail::CommandPool;
using detail::Device;
using detail::lease_copy_wait;
using detail::QueueRole;
using detail::record_lease_copy;
using detail::vk_check;
using detail::vk_status;

struct LeaseReader::State {
    struct Frame {
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        Buffer buffer;
        std::uint64_t value = 0;
    };
    State(const Runtime& runtime)
        : primary(runtime.primary_vulkan(), "lease reader"), device(primary.device()),
          timeline(runtime.primary_timeline()),
          pool(device, device.queue(QueueRole::Main).family(), "lease reader pool") {}
    AdoptedPrimary primary;
    const Device& device;
    VkSemaphore timeline;
    CommandPool pool;
    std::vector<Frame> frames;
    std::uint64_t value = 0;
};

LeaseReader::LeaseReader(const Runtime& runtime, std::uint32_t frames, std::uint32_t max_width,
                         std::uint32_t max_height)
    : m_state(std::make_unique<State>(runtime)) {
    State& s = *m_state;
    // Continue from the timeline's value: an earlier reader may have signalled it.
    vk_check(vkGetSemaphoreCounterValue(s.device.handle(), s.timeline, &s.value),
             "vkGetSemaphoreCounterValue lease reader");
    for (std::uint32_t i = 0; i < frames; ++i) {
        State::Frame f;
        f.cmd = s.pool.allocate("lease reader frame " + std::to_string(i));
        BufferDesc desc;
        desc.size = static_cast<VkDeviceSize>(max_width) * max_height * 4;
        desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        desc.preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        desc.name = "lease reader buffer " + std::to_string(i);
        f.buffer = create_buffer(s.device, desc);
        s.frames.push_back(std::move(f));
    }
}

LeaseReader::~LeaseReader() {
    (void)wait(m_state->value, std::chrono::seconds(10));
}

VkResult LeaseReader::wait(std::uint64_t value, std::chrono::nanoseconds timeout) const {
    return wait_timeline(m_state->device, m_state->timeline, value, timeout,
                         "vkWaitSemaphores lease reader");
}

std::uint64_t LeaseReader::read(const Lease& lease, bool whole_image) {
    State& s = *m_state;
    State::Frame& f = s.frames[s.value % s.frames.size()];
    if (wait(f.value, std::chrono::seconds(10)) != VK_SUCCESS) {
        return 0;
    }
    const VkDeviceSize bytes =
        static_cast<VkDeviceSize>(lease.extent.width) * lease.extent.height * 4;
    if (bytes > f.buffer.size) {
        return 0;
    }
    VkCommandBuffer cmd = f.cmd;
    if (vk_status(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer reader") != VK_SUCCESS) {
        return 0;
    }
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (vk_status(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer reader") != VK_SUCCESS) {
        return 0;
    }
    record_lease_copy(cmd, lease, f.buffer.get(), whole_image ? lease.extent : VkExtent2D{1, 1});
    if (vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer reader") != VK_SUCCESS) {
        return 0;
    }
    const std::uint64_t value = s.value + 1;
    const VkSemaphoreSubmitInfo wait_info = lease_copy_wait(lease);
    VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    signal.semaphore = s.timeline;
    signal.value = value;
    signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    if (s.device.queue(QueueRole::Main).submit_one(cmd, {&wait_info, 1}, {&signal, 1}) !=
        VK_SUCCESS) {
        return 0;
    }
    s.value = value;
    f.value = value;
    return value;
}

const std::uint8_t* LeaseReader::pixels(std::uint64_t value) const {
    for (const auto& f : m_state->frames) {
        if (f.value == value) {
            invalidate_buffer(m_state->device, f.buffer);
            return static_cast<const std::uint8_t*>(f.buffer.mapped);
        }
    }
    return nullptr;
}

} // namespace tandem::harness
