// GpuWaitHandOff: for a pair that shares a semaphore (PairInfo::gpu_side_sync: opaque-fd
// timelines, equal UUIDs) on a path without a host step. It imports the link's exportable worker
// timeline into the primary, and hands a transfer on by submitting every band's primary copy at
// once, band b waiting GPU-side for the worker's band b: no host thread, and band k's upload
// overlaps band k+1's download. Threads and lifetime as HandOff.
#pragma once

#include <memory>

#include "transfer/hand_off.hpp"

namespace tandem::detail {

class GpuWaitHandOff final : public HandOff {
public:
    // The context's worker timeline must be exportable. Throws Error when the import fails.
    explicit GpuWaitHandOff(const HandOffContext& context);

    [[nodiscard]] bool host_bridged() const noexcept override { return false; }
    [[nodiscard]] VkResult hand(const HandedTransfer& transfer) noexcept override;

private:
    TimelineSemaphore m_imported_worker; // the worker timeline, on the primary
};

} // namespace tandem::detail
