// StreamHandOff: for a path whose copies between the stagings a StagingStream orders on the GPUs
// (TransferPathBackend::has_stream(): the cuda-peer path), so that no host thread sits between
// the sides. hand() submits every band's primary copy at once, band b waiting GPU-side on the
// link's gate timeline (exportable: CUDA signals it), then queues each band's copy on the
// stream, to wait for the worker's band b on the worker timeline (exportable likewise) and to
// signal the gate for band b. Band k's upload overlaps band k+1's copy and download.
//
// A copy that cannot be queued, or one the stream reports failed (failed() sees it at once), is
// the link's failure ("the CUDA copy between the GPUs failed: ..."). The gate is then opened from
// the host once the stream has nothing pending (at the next hand() or at teardown), so no copy
// of the primary waits forever: the primary value is reached over unfinished data, and the
// link's failed(), set before, says so. A stream still
// waiting for the worker at teardown (a worker that never finished) is left waiting.
//
// Threads and lifetime as HandOff (no thread of its own; the stand-in stream has one).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "transfer/hand_off.hpp"
#include "transfer/staging_stream.hpp"

namespace tandem::detail {

class StreamHandOff final : public HandOff {
public:
    // The context's worker timeline must be exportable unless the path's stream signals from
    // the host (the gate is exportable likewise). Throws Error when the gate or the stream cannot
    // be made (CUDA refuses an import).
    StreamHandOff(const HandOffContext& context, const std::string& name);

    [[nodiscard]] bool host_bridged() const noexcept override { return false; }
    [[nodiscard]] VkResult hand(const HandedTransfer& transfer) noexcept override;
    void drain(std::chrono::milliseconds timeout) noexcept override;
    // A copy the stream reports failed, before hand() or drain() has made it the link's.
    [[nodiscard]] bool failed() const noexcept override;
    [[nodiscard]] std::string error() const override;

private:
    // Fails the link with the copy's words.
    VkResult fail_copy(VkResult result, const std::string& why) noexcept;
    // Opens the gate to every value handed out, once the stream has nothing pending (or after
    // `timeout`).
    void release_waiters(std::chrono::milliseconds timeout) noexcept;

    TimelineSemaphore m_gate;                // on the primary; signalled by the stream
    std::unique_ptr<StagingStream> m_stream; // after the gate: destroyed first
    std::uint64_t m_gate_next = 1;           // hand()'s thread
    std::uint64_t m_gate_assigned = 0;       // the highest value a copy waits on
};

} // namespace tandem::detail
