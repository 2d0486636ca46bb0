// HandOff: how a link hands each band of a transfer from the worker to the primary once the
// worker's side is submitted. Three strategies, one file each: GpuWaitHandOff (the primary's
// copies submitted at once, each waiting GPU-side on the worker timeline imported into the
// primary), BridgeSubmitHandOff (the pair's bridge thread submits each band's primary copy once
// the worker finished it) and BridgeSignalHandOff (the primary's copies submitted at once, each
// waiting on a gate semaphore of the primary that the bridge signals from the host). The
// same-device path needs none: its one batch signals both timelines.
//
// Contract: hand() never blocks or throws; a strategy reports each failure once into the link's
// LinkFailure (and answers failed()/error() for what failed on its own, a bridge timeout).
// Threads: hand(), can_take() and drain() from the link's submit() thread; failed(), error() and
// primary_submitted() from any thread. Lifetime: the link drains it before destroying it, and
// everything in its HandOffContext outlives it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "sync/pair_bridge.hpp"
#include "sync/timeline_semaphore.hpp"
#include "transfer/band_recorder.hpp"
#include "transfer/transfer_desc.hpp"
#include "transfer/transfer_observer.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

// A link's failure: the first one is kept as a sentence ("<path> transfer <name>: <what>
// (<VkResult>)"). Thread-safe.
class LinkFailure {
public:
    explicit LinkFailure(std::string prefix) : m_prefix(std::move(prefix)) {}
    void fail(VkResult result, const std::string& message) noexcept;
    [[nodiscard]] bool failed() const noexcept { return m_failed.load(std::memory_order_acquire); }
    [[nodiscard]] std::string error() const;

private:
    std::string m_prefix;
    std::atomic<bool> m_failed{false};
    mutable std::mutex m_mutex;
    std::string m_error; // guarded by m_mutex
};

// What a strategy works with, all owned by the link.
struct HandOffContext {
    const Device* primary = nullptr;
    const TransferPathBackend* path = nullptr; // its host steps
    const BandRecorder* recorder = nullptr;    // the primary's band command buffers
    TimelineSemaphore* worker_timeline = nullptr;
    const TimelineSemaphore* primary_timeline = nullptr;
    LinkFailure* failure = nullptr;
    TransferObserver* observer = nullptr; // may be null
};

// One transfer whose worker side was submitted: band b signals the worker timeline at
// first_worker_value + b; the primary's last band must signal primary_value.
struct HandedTransfer {
    std::uint32_t slot = 0;
    std::uint32_t bands = 0;
    std::uint64_t first_worker_value = 0;
    std::uint64_t primary_value = 0;
};

// What a host-bridged strategy is given besides its context.
struct BridgeOptions {
    std::string name;
    std::shared_ptr<PairBridge> pair; // null: a thread of the link's own
    std::chrono::milliseconds timeout{5000};
    std::function<std::uint64_t()> worker_progress;
    std::chrono::microseconds spin{0};
};

class HandOff {
public:
    explicit HandOff(const HandOffContext& context) : m_context(context) {}
    virtual ~HandOff() = default;
    HandOff(const HandOff&) = delete;
    HandOff& operator=(const HandOff&) = delete;

    // True when a host thread (the pair's bridge) hands the bands on.
    [[nodiscard]] virtual bool host_bridged() const noexcept = 0;
    // False when a transfer of `bands` cannot be taken now (the bridge's queue is full); then
    // `pending` says how many hand-offs wait. Nothing is submitted then.
    [[nodiscard]] virtual bool can_take(std::uint32_t /*bands*/,
                                        std::size_t& /*pending*/) const noexcept {
        return true;
    }
    // After the worker side of `transfer` was submitted: hands its bands on.
    [[nodiscard]] virtual VkResult hand(const HandedTransfer& transfer) noexcept = 0;
    // Teardown: lets what was handed reach the primary's queue (up to `timeout`), then ends.
    virtual void drain(std::chrono::milliseconds /*timeout*/) noexcept {}
    [[nodiscard]] virtual bool failed() const noexcept { return false; }
    [[nodiscard]] virtual std::string error() const { return {}; }
    // True when every batch counted by primary_submitted() is on the primary's queue with
    // nothing left for a host thread to do before it runs (no gate a host signals): a batch may
    // then wait GPU-side for its value at once. The bridge's submitted copies only.
    [[nodiscard]] virtual bool submits_ready_batches() const noexcept { return false; }
    // The last primary value whose batch was queued (the link's teardown waits for it).
    [[nodiscard]] std::uint64_t primary_submitted() const noexcept {
        return m_primary_submitted.load(std::memory_order_acquire);
    }

protected:
    // Every band's primary copy of `transfer` in one vkQueueSubmit2, band b waiting on `gate` at
    // first_wait + b, the last signalling the primary value.
    [[nodiscard]] VkResult submit_waiting_bands(const HandedTransfer& transfer,
                                                const TimelineSemaphore& gate,
                                                std::uint64_t first_wait) noexcept;
    void note_submitted(std::uint64_t primary_value) noexcept {
        // release: teardown readers that see the value also see the submission behind it.
        m_primary_submitted.store(primary_value, std::memory_order_release);
    }
    void fail(VkResult result, const std::string& message) const noexcept {
        m_context.failure->fail(result, message);
    }

    HandOffContext m_context;

private:
    std::atomic<std::uint64_t> m_primary_submitted{0};
};

// The strategy for a link of two devices: GPU-side wait where the pair shares a semaphore and the
// path has no host step, else the bridge with `hand_off`. Throws Error (set-up).
[[nodiscard]] std::unique_ptr<HandOff> make_hand_off(const HandOffContext& context,
                                                     bool gpu_side_wait, BandHandOff hand_off,
                                                     const BridgeOptions& bridge);

} // namespace tandem::detail
