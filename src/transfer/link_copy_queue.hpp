// The queue a link's copies run on, on either side of it: the one place that chooses it (core's
// Device::copy_queue_choice() measures which queue copies fastest; this decides what links use).
// Everything that names that queue asks here: the band recorder's command pools, the hand-offs'
// submissions, the images' queue families, the paths' queue-family transfers and the GPU timers'
// query pools. It is the queue Device::copy_queue_choice() measured for the device: its transfer
// queue (a copy engine where it has one) unless the main queue copies within it over 1.2x
// faster; one queue for every path of the device, as its images are created for it.
// Threads: any (the first call per Device measures, for a few ms). The answer for a Device never
// changes during its life.
#pragma once

#include "core/device.hpp"

namespace tandem::detail {

[[nodiscard]] QueueRole copy_queue_role(const Device& device) noexcept;

[[nodiscard]] inline const Queue& copy_queue(const Device& device) noexcept {
    return device.queue(copy_queue_role(device));
}

} // namespace tandem::detail
