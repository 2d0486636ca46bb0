// The device and queue a swapchain's frames go out on: the program's own (its queue, under the
// lock the program's calls and Tandem's share), or, with `display = worker`, the worker's (its
// main queue, under the lock Tandem holds around its own submits there: Runtime::device_vulkan).
// SwapchainGeneration makes its copies into the swapchain and its presents here, and takes the
// worker's frames as the leases this side reads (Runtime::acquire or acquire_on_worker),
// releasing them with values of this side's reads timeline.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <vulkan/vulkan.h>

#include "dispatch_table.hpp"

namespace tandem::layer {

class FrameCopyPipeline;

class DisplayQueue {
public:
    struct Desc {
        VkDevice device = VK_NULL_HANDLE;
        const DeviceDispatch* vk = nullptr; // the next layer's functions on `device`
        VkQueue queue = VK_NULL_HANDLE;
        std::uint32_t queue_family = 0;
        std::shared_ptr<std::mutex> queue_mutex;
        VkPhysicalDeviceMemoryProperties memory{};
        double timestamp_ns = 0;          // ns per tick
        std::uint32_t timestamp_bits = 0; // 0: the queue has no timestamps
        // The worker's: leases come from acquire_on_worker and are released on its reads
        // timeline. Else the program's, released on Runtime::primary_timeline().
        bool on_worker = false;
        VkSemaphore reads_timeline = VK_NULL_HANDLE;
    };

    explicit DisplayQueue(const Desc& desc);
    ~DisplayQueue();
    DisplayQueue(const DisplayQueue&) = delete;
    DisplayQueue& operator=(const DisplayQueue&) = delete;

    [[nodiscard]] VkDevice device() const noexcept { return m_desc.device; }
    [[nodiscard]] const DeviceDispatch& vk() const noexcept { return *m_desc.vk; }
    [[nodiscard]] VkQueue queue() const noexcept { return m_desc.queue; }
    [[nodiscard]] std::uint32_t queue_family() const noexcept { return m_desc.queue_family; }
    [[nodiscard]] const VkPhysicalDeviceMemoryProperties& memory() const noexcept {
        return m_desc.memory;
    }
    [[nodiscard]] double timestamp_ns() const noexcept { return m_desc.timestamp_ns; }
    [[nodiscard]] std::uint32_t timestamp_bits() const noexcept { return m_desc.timestamp_bits; }
    [[nodiscard]] bool on_worker() const noexcept { return m_desc.on_worker; }
    [[nodiscard]] VkSemaphore reads_timeline() const noexcept { return m_desc.reads_timeline; }

    // The next value of the reads timeline (leases' reads done); they only grow.
    [[nodiscard]] std::uint64_t next_release_value() noexcept { return ++m_release_value; }
    // vkQueueSubmit2 / vkQueuePresentKHR / vkQueueWaitIdle of the next layer on the queue, under
    // its lock.
    [[nodiscard]] VkResult submit(const VkSubmitInfo2& batch);
    [[nodiscard]] VkResult present(const VkPresentInfoKHR& info);
    VkResult wait_idle();
    // The compute copy's pipeline on this device (frame_copy.hpp), made at the first call and
    // kept while this lives. Throws std::runtime_error when it cannot be made (the next call
    // tries again). Any thread.
    [[nodiscard]] const FrameCopyPipeline& frame_copy_pipeline();

private:
    Desc m_desc;
    std::atomic<std::uint64_t> m_release_value{0};
    std::mutex m_frame_copy_mutex;
    std::unique_ptr<FrameCopyPipeline> m_frame_copy_pipeline;
};

} // namespace tandem::layer
