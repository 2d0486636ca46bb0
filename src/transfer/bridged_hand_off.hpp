// BridgedHandOff: what the two host-bridged strategies (BridgeSubmitHandOff,
// BridgeSignalHandOff) share: the link's HostBridge on its pair's bridge thread, one forward per
// band (once the worker timeline reaches the band's value, the strategy's on_band_done runs on
// that thread), the path's host step of each band (host copy's memcpy), and per slot which
// transfer it carries and how many of its bands were handed on.
//
// That record is one atomic per slot: the transfer's band-0 worker value (low 48 bits) and the
// bands handed (16 bits; a layout has at most 16384 bands). hand() sets it before the forwards
// are queued, the bridge thread advances it before each hand-off, since the caller may reuse the
// slot as soon as the last band's copy lands while forwards of the finished transfer (skipped:
// their bands went with an earlier hand-off) are still queued: they see another transfer there
// and do nothing. Threads and lifetime as HandOff; on_band_done and release_waiters run on the
// bridge thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "sync/host_bridge.hpp"
#include "transfer/hand_off.hpp"

namespace tandem::detail {

class BridgedHandOff : public HandOff {
public:
    ~BridgedHandOff() override;

    [[nodiscard]] bool host_bridged() const noexcept override { return true; }
    [[nodiscard]] bool can_take(std::uint32_t bands, std::size_t& pending) const noexcept override;
    [[nodiscard]] VkResult hand(const HandedTransfer& transfer) noexcept final;
    void drain(std::chrono::milliseconds timeout) noexcept override;
    [[nodiscard]] bool failed() const noexcept override;
    [[nodiscard]] std::string error() const override;

protected:
    explicit BridgedHandOff(const HandOffContext& context);
    // Attaches the link's HostBridge to the pair's thread: the last step of a strategy's
    // constructor, as the thread may call release_waiters from then on.
    void start(const BridgeOptions& options);
    // Stops the HostBridge (its on_exit calls release_waiters): a strategy's destructor calls it
    // before its own members go.
    void stop() noexcept;

    // In hand(), before the forwards are queued; `token` is passed to every on_band_done.
    [[nodiscard]] virtual VkResult before_forwards(const HandedTransfer& /*transfer*/,
                                                   std::uint64_t& /*token*/) noexcept {
        return VK_SUCCESS;
    }
    // On the bridge thread, once the worker finished `band` of `transfer`.
    [[nodiscard]] virtual VkResult on_band_done(const HandedTransfer& transfer, std::uint64_t token,
                                                std::uint32_t band) noexcept = 0;
    // The bridge has ended (stop, timeout, failure) or refused a forward: nothing more will be
    // handed, so release whatever waits for it.
    virtual void release_waiters() noexcept {}

    // Bands of the transfer starting at `first_value` handed on through `slot`, or nullopt when
    // the slot carries a later transfer (so this one is complete).
    [[nodiscard]] std::optional<std::uint32_t> handed(std::uint32_t slot,
                                                      std::uint64_t first_value) const noexcept;
    void set_handed(std::uint32_t slot, std::uint64_t first_value, std::uint32_t bands) noexcept;
    // The last band of `transfer` that the worker has finished, at least `band`.
    [[nodiscard]] std::uint32_t last_finished_band(const HandedTransfer& transfer,
                                                   std::uint32_t band) const noexcept;
    // The path's host step for `band` of `slot`, if it has one; a failure is reported.
    [[nodiscard]] VkResult host_step(std::uint32_t slot, std::uint32_t band) const noexcept;
    // TransferObserver::on_band_handed for bands [first_band, end_band) of `slot`.
    void report_handed(std::uint32_t slot, std::uint32_t first_band,
                       std::uint32_t end_band) const noexcept;

private:
    [[nodiscard]] std::size_t capacity() const noexcept;

    std::unique_ptr<std::atomic<std::uint64_t>[]> m_handed; // per slot
    std::unique_ptr<HostBridge> m_bridge;
};

} // namespace tandem::detail
