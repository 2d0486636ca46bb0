// The queue a link's copies run on, on either side of it: the one place that chooses it (core's
// Device::copy_queue_choice() measures which queue copies fastest; this decides what links use).
// Everything that names that queue asks here: the band recorder's command pools, the hand-offs'
// submissions, the images' queue families, the paths' queue-family transfers and the GPU timers'
// query pools. Today the device's transfer queue (a copy engine where the device has one).
// Threads: any. The answer for a Device never changes during its life.
#pragma once

#include "core/device.hpp"

namespace tandem::detail {

[[nodiscard]] QueueRole copy_queue_role(const Device& device) noexcept;

[[nodiscard]] inline const Queue& copy_queue(const Device& device) noexcept {
    return device.queue(copy_queue_role(device));
}

} // namespace tandem::detail
