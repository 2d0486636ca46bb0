// LeaseReader: reads leased outputs on the primary the way an application's frame does: one
// submission on the primary's main queue that waits on the lease's semaphore, copies the image
// (one texel, or all of it for verification) into a host-visible buffer with the commands every
// lease reader shares (readback/lease_copy.hpp), and signals the runtime's primary timeline,
// whose value is then the lease's release value; it does not wait for its reads, as a frame
// would not (tandem::LeaseReadback, which waits, is the public API's readback for checks).
// Built on the public Runtime (primary_vulkan, primary_timeline). Used by `tandem stream`'s
// simulated frame loop, the benchmarks and the tests.
//
// Threads: one thread at a time (the frame loop). While it lives it is the only signaller of
// the runtime's primary timeline (values must grow); it continues from the timeline's value.
// Lifetime: destroy before the runtime; the destructor waits for its submissions.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include <vulkan/vulkan_core.h>

#include "tandem/lease.hpp"
#include "tandem/runtime.hpp"

namespace tandem::harness {

class LeaseReader {
public:
    // `frames` reads may be in flight; each reads at most max_width x max_height RGBA8 texels.
    // Throws tandem::Error when the primary cannot be adopted or the buffers not created.
    LeaseReader(const Runtime& runtime, std::uint32_t frames, std::uint32_t max_width,
                std::uint32_t max_height);
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
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace tandem::harness
