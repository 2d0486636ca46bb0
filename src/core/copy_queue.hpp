// CopyQueueChoice: which of a device's queues copies device-local memory fastest, measured on the
// device itself. A dedicated transfer family (a copy engine) is not always the fastest way to
// copy within a GPU: the H200's copy engines copy buffers within it at about a fifth of its main
// queue's rate (its image copies, which the paths make, ran at the same rate on both). The
// transfer links of the device run their copies on the queue chosen here
// (transfer/link_copy_queue.hpp); the benchmark compares the device-local paths with their own
// copies on it.
//
// Measured once per Device, on first use (Device::copy_queue_choice(), thread-safe, blocking for
// a few milliseconds of copies), never on a frame: the runtime asks while it prepares a task.
// With one queue family that copies there is nothing to choose and nothing is measured.
// TANDEM_COPY_QUEUE=main|transfer overrides the choice (the reason then says so).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device.hpp"

namespace tandem::detail {

struct CopyQueueTiming {
    QueueRole role = QueueRole::Transfer;
    std::uint32_t family = 0;
    double gbps = 0; // image -> device-local buffer, 10^9 bytes per second (median)
};

struct CopyQueueChoice {
    QueueRole role = QueueRole::Transfer;
    std::uint32_t family = 0;
    bool measured = false;                // false: one candidate, or the override
    std::vector<CopyQueueTiming> timings; // every candidate measured, in role order
    std::string reason;                   // why this queue, in a sentence with the figures
};

// Times copies of a 1920x1080 RGBA8 optimal-tiled image into a device-local buffer (`batch`
// copies per submission, median of `runs`) on the main queue and on the transfer queue, where
// those are different families, and picks the transfer queue unless the main queue (which the
// application renders on) is over 1.2x faster. Throws Error when a Vulkan call fails.
[[nodiscard]] CopyQueueChoice measure_copy_queues(const Device& device, std::uint32_t batch = 4,
                                                  std::uint32_t runs = 3);

[[nodiscard]] const char* to_string(QueueRole role) noexcept;

} // namespace tandem::detail
