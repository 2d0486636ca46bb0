#include "transfer/hand_off.hpp"

#include <vector>

#include "tandem/error.hpp"
#include "transfer/bridge_signal_hand_off.hpp"
#include "transfer/bridge_submit_hand_off.hpp"
#include "transfer/gpu_wait_hand_off.hpp"
#include "transfer/link_copy_queue.hpp"

namespace tandem::detail {

const char* to_string(BandHandOff hand_off) noexcept {
    return hand_off == BandHandOff::Signal ? "signal" : "submit";
}

void LinkFailure::fail(VkResult result, const std::string& message) noexcept {
    try {
        std::lock_guard lock(m_mutex);
        if (m_error.empty()) {
            m_error = m_prefix + ": " + message + " (" + tandem::to_string(result) + ")";
        }
    } catch (...) {
        // Out of memory while describing the failure: the flag below still reports it.
    }
    // release: error() readers that see the flag also see the message.
    m_failed.store(true, std::memory_order_release);
}

std::string LinkFailure::error() const {
    std::lock_guard lock(m_mutex);
    return m_error;
}

VkResult HandOff::submit_waiting_bands(const HandedTransfer& transfer,
                                       const TimelineSemaphore& gate,
                                       std::uint64_t first_wait) noexcept {
    try {
        BandBatches batches(m_context.recorder->primary_cmds(transfer.slot), gate, first_wait,
                            true);
        std::vector<VkSubmitInfo2>& submits = batches.submits;
        const VkSemaphoreSubmitInfo signal = m_context.primary_timeline->submit_info(
            transfer.primary_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        submits[transfer.bands - 1].signalSemaphoreInfoCount = 1;
        submits[transfer.bands - 1].pSignalSemaphoreInfos = &signal;
        const VkResult r = copy_queue(*m_context.primary).submit(submits);
        if (r != VK_SUCCESS) {
            fail(r, "submitting the primary side of a transfer failed");
            return r;
        }
    } catch (const std::bad_alloc&) {
        fail(VK_ERROR_OUT_OF_HOST_MEMORY, "submitting the primary side of a transfer failed");
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    note_submitted(transfer.primary_value);
    return VK_SUCCESS;
}

std::unique_ptr<HandOff> make_hand_off(const HandOffContext& context, bool gpu_side_wait,
                                       BandHandOff hand_off, const BridgeOptions& bridge) {
    if (gpu_side_wait) {
        return std::make_unique<GpuWaitHandOff>(context);
    }
    if (hand_off == BandHandOff::Signal) {
        return std::make_unique<BridgeSignalHandOff>(context, bridge);
    }
    return std::make_unique<BridgeSubmitHandOff>(context, bridge);
}

} // namespace tandem::detail
