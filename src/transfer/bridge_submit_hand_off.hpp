// BridgeSubmitHandOff (BandHandOff::Submit, the default): once the worker has finished a band,
// the bridge thread runs its host step and submits the band's primary copy, with every later
// band of the transfer the worker has finished too, in one vkQueueSubmit2 (at most 16 bands), so
// the bridge keeps up with narrow bands; a band already submitted that way is skipped. Every
// semaphore is then signalled by a queue, and the primary's copy queue holds nothing that waits.
// Threads and lifetime as BridgedHandOff.
#pragma once

#include "transfer/bridged_hand_off.hpp"

namespace tandem::detail {

class BridgeSubmitHandOff final : public BridgedHandOff {
public:
    BridgeSubmitHandOff(const HandOffContext& context, const BridgeOptions& bridge);
    ~BridgeSubmitHandOff() override;

    // Each transfer's copies are submitted by the bridge once the worker's band is done.
    [[nodiscard]] bool submits_ready_batches() const noexcept override { return true; }

private:
    [[nodiscard]] VkResult on_band_done(const HandedTransfer& transfer, std::uint64_t token,
                                        std::uint32_t band) noexcept override;
};

} // namespace tandem::detail
