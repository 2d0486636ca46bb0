// LeaseReader: reads leased outputs on the primary the way an application's frame does: one
// submission on the primary's main queue that waits on the lease's semaphore, copies the image
// (one texel, or all of it for verification) into a host-visible buffer, and signals the
// runtime's primary timeline, whose value is then the lease's release value. Used by
// `tandem stream`'s simulated frame loop, the benchmarks and the tests.
//
// Threads: one thread at a time (the frame loop). While it lives it is the only signaller of
// the primary timeline it is given (values must grow); it continues from the timeline's value.
// Lifetime: destroy before the runtime; the destructor waits for its submissions.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/device.hpp"
#include "core/resources.hpp"
#include "tandem/lease.hpp"

namespace tandem::detail {

class LeaseReader {
public:
    LeaseReader(const Device& primary, VkSemaphore primary_timeline, std::uint32_t frames,
                std::uint32_t max_width, std::uint32_t max_height);
    ~LeaseReader();
    LeaseReader(const LeaseReader&) = delete;
    LeaseReader& operator=(const LeaseReader&) = delete;

    // Submits the read of `lease` (whole image or its first texel) and returns the primary
    // timeline value signalled when it finishes (release the lease with it), or 0 on failure.
    // Waits on the host only when the frame it reuses is still in flight.
    [[nodiscard]] std::uint64_t read(const Lease& lease, bool whole_image);
    // Blocks until `value` is reached (VK_SUCCESS, VK_TIMEOUT or an error).
    [[nodiscard]] VkResult wait(std::uint64_t value, std::chrono::nanoseconds timeout) const;
    // Tightly packed bytes read by the submission that signalled `value` (after wait()).
    [[nodiscard]] const std::uint8_t* pixels(std::uint64_t value) const;

private:
    struct Frame {
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        Buffer buffer;
        std::uint64_t value = 0;
    };
    const Device& m_device;
    VkSemaphore m_timeline;
    CommandPool m_pool;
    std::vector<Frame> m_frames;
    std::uint64_t m_value = 0;
};

} // namespace tandem::detail
