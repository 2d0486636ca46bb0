#include "transfer/bridge_signal_hand_off.hpp"

#include <string>

#include "core/instance.hpp"

namespace tandem::detail {

BridgeSignalHandOff::BridgeSignalHandOff(const HandOffContext& context, const BridgeOptions& bridge)
    : BridgedHandOff(context),
      m_gate(*context.primary, bridge.name + " band gate" + std::string(k_host_signalled_only)) {
    start(bridge);
}

BridgeSignalHandOff::~BridgeSignalHandOff() {
    stop(); // opens the gate while it still exists
}

VkResult BridgeSignalHandOff::before_forwards(const HandedTransfer& transfer,
                                              std::uint64_t& token) noexcept {
    token = m_gate_next;
    m_gate_next += transfer.bands;
    // Before the copies exist: release_waiters() must cover every value one waits on.
    m_gate_assigned.store(token + transfer.bands - 1, std::memory_order_release);
    return submit_waiting_bands(transfer, m_gate, token);
}

VkResult BridgeSignalHandOff::on_band_done(const HandedTransfer& transfer, std::uint64_t gate_base,
                                           std::uint32_t band) noexcept {
    const auto from = handed(transfer.slot, transfer.first_worker_value);
    if (!from || band < *from) {
        return VK_SUCCESS; // released with an earlier band
    }
    const std::uint32_t last = last_finished_band(transfer, band);
    for (std::uint32_t b = *from; b <= last; ++b) {
        const VkResult r = host_step(transfer.slot, b);
        if (r != VK_SUCCESS) {
            return r;
        }
    }
    // Before the signal: once the last band's copy signals the primary value, the caller may
    // submit the slot's next transfer at once, and hand() resets this count for it.
    set_handed(transfer.slot, transfer.first_worker_value, last + 1);
    const VkResult r = raise_gate(gate_base + last);
    if (r != VK_SUCCESS) {
        fail(r, "signalling the primary's band gate failed");
        return r;
    }
    report_handed(transfer.slot, *from, last + 1);
    return r;
}

VkResult BridgeSignalHandOff::raise_gate(std::uint64_t value) noexcept {
    std::lock_guard lock(m_gate_mutex);
    if (value <= m_gate_raised) {
        return VK_SUCCESS; // already open that far (release_waiters() went first)
    }
    const VkResult r = m_gate.signal(value);
    if (r == VK_SUCCESS) {
        m_gate_raised = value;
    }
    return r;
}

void BridgeSignalHandOff::release_waiters() noexcept {
    (void)raise_gate(m_gate_assigned.load(std::memory_order_acquire));
}

} // namespace tandem::detail
