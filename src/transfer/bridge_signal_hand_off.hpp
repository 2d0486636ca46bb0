// BridgeSignalHandOff (BandHandOff::Signal): the primary's copies of every band are submitted in
// hand(), each waiting on a gate timeline semaphore of the primary; the bridge thread runs each
// band's host step and signals the gate from the host up to the last band the worker has
// finished. A host signal wakes a waiting queue within microseconds where a submission takes
// tens, so a banded transfer's latency drops, but the primary's copy queue holds the waiting
// copies from submit() until the worker has finished, and whatever else is submitted to that
// queue meanwhile waits as long: for a link that has the primary's copy queue to itself. When the
// bridge ends early (timeout, failure, destruction) the gate is opened to every value handed
// out, so no copy waits forever: the primary value is then reached over unfinished data, and the
// link's failed(), set before, says so.
//
// The gate is named "... (host-signalled only)" (k_host_signalled_only): Debian 12's validation
// layer takes the copies' pending waits on it for pending signals and reports the host signals.
// Threads and lifetime as BridgedHandOff; the gate is raised from the bridge thread and, once the
// bridge has ended, from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "transfer/bridged_hand_off.hpp"

namespace tandem::detail {

class BridgeSignalHandOff final : public BridgedHandOff {
public:
    BridgeSignalHandOff(const HandOffContext& context, const BridgeOptions& bridge);
    ~BridgeSignalHandOff() override;

private:
    // Takes the transfer's gate values and submits its gated copies; `token`: the first value.
    [[nodiscard]] VkResult before_forwards(const HandedTransfer& transfer,
                                           std::uint64_t& token) noexcept override;
    // Runs the host steps of the bands not yet released and raises the gate to the last band
    // the worker has finished.
    [[nodiscard]] VkResult on_band_done(const HandedTransfer& transfer, std::uint64_t gate_base,
                                        std::uint32_t band) noexcept override;
    // Opens the gate to every value handed out.
    void release_waiters() noexcept override;
    // Signals the gate to `value` unless it is open that far already.
    [[nodiscard]] VkResult raise_gate(std::uint64_t value) noexcept;

    // Signalled from the host by the bridge only. Each transfer takes as many values as it has
    // bands (m_gate_next, hand()'s thread); m_gate_assigned is the highest value a copy waits on.
    TimelineSemaphore m_gate;
    std::uint64_t m_gate_next = 1;
    std::atomic<std::uint64_t> m_gate_assigned{0};
    std::mutex m_gate_mutex;
    std::uint64_t m_gate_raised = 0; // guarded by m_gate_mutex
};

} // namespace tandem::detail
