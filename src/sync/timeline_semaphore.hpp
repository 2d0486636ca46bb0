// TimelineSemaphore: an owned VkSemaphore of timeline type whose values only grow. It may be made
// exportable (opaque fd) and imported into another device with equal device and driver UUIDs, so
// the primary can wait GPU-side on a worker's timeline. All operations after construction are on
// the per-frame path: they never throw and return the VkResult. Any thread.
//
// Host access (value, signal, wait) is serialised per device while validation is on
// (Device::host_semaphore_guard), and
// wait() polls the counter instead of blocking in vkWaitSemaphores. Both keep the validation
// layer's timeline tracking consistent when one thread signals from the host while another reads
// a semaphore of the same device (it otherwise reports state timeouts), and polling wakes at once
// where a blocking wait can wake late.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"

namespace tandem::detail {

class TimelineSemaphore {
public:
    // `exportable`: the payload can be exported as an opaque fd (the device must enable
    // VK_KHR_external_semaphore_fd and support timeline export; throws Error otherwise).
    TimelineSemaphore(const Device& device, const std::string& name, std::uint64_t initial = 0,
                      bool exportable = false);

    // A new semaphore on `device` sharing `source`'s payload (opaque fd). Both devices need
    // equal device and driver UUIDs; throws Error with the reason otherwise.
    [[nodiscard]] static TimelineSemaphore
    import_from(const Device& device, const TimelineSemaphore& source, const std::string& name);

    // A new opaque fd of this (exportable) semaphore's payload, which the caller owns until an
    // import takes it (another API's, e.g. CUDA's timeline import). Throws Error (set-up).
    [[nodiscard]] int export_fd() const;

    TimelineSemaphore(TimelineSemaphore&&) noexcept = default;
    TimelineSemaphore& operator=(TimelineSemaphore&&) noexcept = default;

    [[nodiscard]] VkSemaphore handle() const noexcept { return m_semaphore.get(); }
    [[nodiscard]] const Device& device() const noexcept { return *m_device; }
    [[nodiscard]] const std::string& name() const noexcept { return m_name; }

    // Current counter value (vkGetSemaphoreCounterValue).
    [[nodiscard]] VkResult value(std::uint64_t& out) const noexcept;
    // Host signal. `value` must be greater than the current value (values only grow).
    [[nodiscard]] VkResult signal(std::uint64_t value) noexcept;
    // Blocks up to `timeout` for the counter to reach `value`: VK_SUCCESS or VK_TIMEOUT.
    [[nodiscard]] VkResult wait(std::uint64_t value,
                                std::chrono::nanoseconds timeout) const noexcept;

    // Submit-info helpers for vkQueueSubmit2.
    [[nodiscard]] VkSemaphoreSubmitInfo submit_info(std::uint64_t value,
                                                    VkPipelineStageFlags2 stage) const noexcept;

private:
    TimelineSemaphore() = default;
    const Device* m_device = nullptr;
    Handle<VkSemaphore> m_semaphore;
    std::string m_name;
};

// A vkQueueSubmit2 wait or signal of `semaphore` (any timeline semaphore, Tandem's or the
// application's) at `value` in `stage`.
[[nodiscard]] VkSemaphoreSubmitInfo semaphore_submit_info(VkSemaphore semaphore,
                                                          std::uint64_t value,
                                                          VkPipelineStageFlags2 stage) noexcept;

// Blocks up to `timeout` until timeline `semaphore` of `device` reaches `value` (VK_SUCCESS or
// VK_TIMEOUT; value 0 returns at once). For semaphores Tandem does not own as a
// TimelineSemaphore (the runtime's primary timeline seen from a reader); never throws.
[[nodiscard]] VkResult wait_timeline(const Device& device, VkSemaphore semaphore,
                                     std::uint64_t value, std::chrono::nanoseconds timeout,
                                     const char* context) noexcept;

} // namespace tandem::detail
