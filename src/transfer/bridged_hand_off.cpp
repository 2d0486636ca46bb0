#include "transfer/bridged_hand_off.hpp"

#include <algorithm>
#include <thread>

namespace tandem::detail {
namespace {

[[nodiscard]] std::uint64_t handed_state(std::uint64_t first_value, std::uint32_t bands) noexcept {
    return (first_value << 16) | bands;
}

} // namespace

BridgedHandOff::BridgedHandOff(const HandOffContext& context)
    : HandOff(context),
      m_handed(std::make_unique<std::atomic<std::uint64_t>[]>(context.path->layout().slots)) {}

BridgedHandOff::~BridgedHandOff() {
    stop();
}

void BridgedHandOff::start(const BridgeOptions& options) {
    HostBridge::Options bridge;
    bridge.name = options.name;
    bridge.timeout = options.timeout;
    bridge.progress = options.worker_progress;
    bridge.spin = options.spin;
    bridge.capacity = capacity();
    bridge.on_exit = [this] { release_waiters(); };
    m_bridge =
        std::make_unique<HostBridge>(*m_context.worker_timeline, std::move(bridge), options.pair);
}

void BridgedHandOff::stop() noexcept {
    if (m_bridge) {
        m_bridge->stop();
    }
}

std::size_t BridgedHandOff::capacity() const noexcept {
    // Every slot's bands, and those of a transfer whose copies completed while its last
    // forwards were still being handed off (they are skipped, but still queued).
    return std::size_t{m_context.recorder->bands()} * (m_context.path->layout().slots + 1) + 1;
}

bool BridgedHandOff::can_take(std::uint32_t bands, std::size_t& pending) const noexcept {
    pending = m_bridge->pending();
    return pending + bands <= capacity();
}

VkResult BridgedHandOff::hand(const HandedTransfer& transfer) noexcept {
    set_handed(transfer.slot, transfer.first_worker_value, 0);
    std::uint64_t token = 0;
    const VkResult r = before_forwards(transfer, token);
    if (r != VK_SUCCESS) {
        return r;
    }
    for (std::uint32_t b = 0; b < transfer.bands; ++b) {
        HostBridge::Action action = [this, transfer, token, b]() -> VkResult {
            return on_band_done(transfer, token, b);
        };
        if (!m_bridge->try_forward(transfer.first_worker_value + b, std::move(action))) {
            // Cannot happen while can_take() was asked first, unless the bridge just ended.
            fail(VK_ERROR_UNKNOWN, "the bridge refused a forward");
            release_waiters();
            return VK_ERROR_UNKNOWN;
        }
    }
    return VK_SUCCESS;
}

void BridgedHandOff::drain(std::chrono::milliseconds timeout) noexcept {
    // Let the bridge hand on what the worker delivers, unless it has failed; then stop it, so
    // no action runs on members being destroyed.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (m_bridge->state() == HostBridge::State::Running && m_bridge->pending() > 0 &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    m_bridge->stop(); // its on_exit releases what waits for the bridge
}

bool BridgedHandOff::failed() const noexcept {
    const HostBridge::State state = m_bridge->state();
    return state == HostBridge::State::TimedOut || state == HostBridge::State::Failed;
}

std::string BridgedHandOff::error() const {
    return m_bridge->state() != HostBridge::State::Running ? m_bridge->error() : std::string();
}

std::optional<std::uint32_t> BridgedHandOff::handed(std::uint32_t slot,
                                                    std::uint64_t first_value) const noexcept {
    const std::uint64_t state = m_handed[slot].load(std::memory_order_acquire);
    if ((state >> 16) != (handed_state(first_value, 0) >> 16)) {
        return std::nullopt;
    }
    return static_cast<std::uint32_t>(state & 0xffffu);
}

void BridgedHandOff::set_handed(std::uint32_t slot, std::uint64_t first_value,
                                std::uint32_t bands) noexcept {
    // release: the bridge thread that reads it sees the submissions made before.
    m_handed[slot].store(handed_state(first_value, bands), std::memory_order_release);
}

std::uint32_t BridgedHandOff::last_finished_band(const HandedTransfer& transfer,
                                                 std::uint32_t band) const noexcept {
    std::uint64_t reached = transfer.first_worker_value + band;
    if (band + 1 < transfer.bands) {
        std::uint64_t current = 0;
        if (m_context.worker_timeline->value(current) == VK_SUCCESS) {
            reached = std::max(reached, current);
        }
    }
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(transfer.bands - 1, reached - transfer.first_worker_value));
}

VkResult BridgedHandOff::host_step(std::uint32_t slot, std::uint32_t band) const noexcept {
    const TransferPathBackend& path = *m_context.path;
    if (!path.has_host_step()) {
        return VK_SUCCESS;
    }
    const VkResult r = path.host_step(slot, path.layout().band(band));
    if (r != VK_SUCCESS) {
        std::string why;
        try {
            why = path.host_step_error();
        } catch (...) {
            // The generic sentence below still says what failed.
        }
        fail(r, why.empty() ? "the host copy between the devices failed" : why);
    }
    return r;
}

void BridgedHandOff::report_handed(std::uint32_t slot, std::uint32_t first_band,
                                   std::uint32_t end_band) const noexcept {
    if (m_context.observer != nullptr) {
        for (std::uint32_t b = first_band; b < end_band; ++b) {
            m_context.observer->on_band_handed(slot, b);
        }
    }
}

} // namespace tandem::detail
