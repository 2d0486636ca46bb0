// Lease: read access to the newest ready output of a task, on the primary device; or, from
// Runtime::acquire_on_worker, on the worker device whose work made it (Lease::on_worker).
//
// clang-format off
//     if (auto lease = runtime.acquire(task)) {
//         // In the frame's submission: wait on lease->wait_semaphore >= lease->wait_value,
//         // sample lease->view (layout lease->layout), and signal the runtime's primary
//         // timeline (Runtime::primary_timeline()) to `frame_value` when the reads are done.
//         runtime.release(*lease, frame_value);
//     }
// clang-format on
//
// The slot behind a lease is never rewritten until it is released and the primary timeline
// has reached the release value, and its image, view and semaphore stay valid until then even
// when the task moves, is reconfigured or is unregistered meanwhile. The image must be back in
// `layout` by then (a reader that copies from it transitions to TRANSFER_SRC_OPTIMAL and back).
//
// Each lease is its own ticket (Lease::ticket), as a swapchain image acquired in OpenXR is: two
// acquires of the same output are two leases, each released once. A second release of a ticket
// answers TaskError::LeaseNotHeld and frees nothing, so a slot another lease still holds is
// never rewritten. A lease held longer than max(10 of its task's periods between outputs, 1 s)
// is counted in TaskStats::leases_held_long and logged once, at warn.
#pragma once

#include <cstdint>
#include <optional>

#include <vulkan/vulkan_core.h>

#include "tandem/task.hpp"

namespace tandem {

struct Lease {
    TaskId task;
    // This lease's own ticket: issued by acquire(), never twice in the process (so never reused
    // within a runtime, and never one another runtime holds), ended by its first release().
    // 0 is never issued: a default Lease holds nothing.
    std::uint64_t ticket = 0;
    // The task's instance on `device` that made it: release() hands the lease straight back
    // there. Opaque; unique within the runtime.
    std::uint64_t instance = 0;
    std::uint32_t slot = 0;
    std::uint64_t generation = 0; // strictly newer on each newer output of the task
    std::uint32_t device = 0;     // the adapter whose work produced it
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
    // Wait on this timeline semaphore (a semaphore of the device the image belongs to) for
    // this value before reading; it has already been reached, the wait gives the memory
    // dependency.
    VkSemaphore wait_semaphore = VK_NULL_HANDLE;
    std::uint64_t wait_value = 0;
    // Queue family that may read the image (that device's main family).
    std::uint32_t queue_family = 0;
    // False: the image is on the primary, and release()'s value is on the primary timeline
    // (Runtime::primary_timeline()). True (Runtime::acquire_on_worker): the image is the one
    // the work wrote on worker device `device`, read there (Runtime::device_vulkan(device)),
    // and release()'s value is on that device's reads timeline (DeviceVulkan::reads_timeline).
    bool on_worker = false;
};

// What acquire() answered: a lease on the newest output, or none (before the first output, or
// with an error). Reads like std::optional<Lease>: `if (auto lease = runtime.acquire(task))`.
// Errors: UnknownTask (the id names no live task), OutOfMemory (host memory ran out; try again
// next frame), each with a sentence in `reason`. No lease and None: no output yet.
struct AcquireResult : CallResult {
    std::optional<Lease> lease;

    [[nodiscard]] explicit operator bool() const noexcept { return lease.has_value(); }
    [[nodiscard]] const Lease& operator*() const noexcept { return *lease; }
    [[nodiscard]] const Lease* operator->() const noexcept { return &*lease; }
};

} // namespace tandem
