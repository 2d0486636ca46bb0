// Lease: read access to the newest ready output of a task, on the primary device.
//
//     if (auto lease = runtime.acquire(task)) {
//         // In the frame's submission: wait on lease->wait_semaphore >= lease->wait_value,
//         // sample lease->view (layout lease->layout), and signal the runtime's primary
//         // timeline (Runtime::primary_timeline()) to `frame_value` when the reads are done.
//         runtime.release(*lease, frame_value);
//     }
//
// The slot behind a lease is never rewritten until it is released and the primary timeline
// has reached the release value. The image must be back in `layout` by then (a reader that
// copies from it transitions to TRANSFER_SRC_OPTIMAL and back).
#pragma once

#include <cstdint>

#include <vulkan/vulkan_core.h>

#include "tandem/task.hpp"

namespace tandem {

struct Lease {
    TaskId task = 0;
    std::uint32_t slot = 0;
    std::uint64_t generation = 0; // strictly newer on each newer output of the task
    std::uint32_t device = 0;     // the adapter whose work produced it
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
    // Wait on this timeline semaphore (a primary-device semaphore) for this value before
    // reading; it has already been reached, the wait gives the memory dependency.
    VkSemaphore wait_semaphore = VK_NULL_HANDLE;
    std::uint64_t wait_value = 0;
    // Queue family that may read the image (the primary's main family).
    std::uint32_t queue_family = 0;
};

} // namespace tandem
