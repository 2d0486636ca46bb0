#include "transfer/bridge_submit_hand_off.hpp"

#include "transfer/link_copy_queue.hpp"

namespace tandem::detail {
namespace {
// The most bands one hand-off submits at once (the rest follow with later hand-offs).
constexpr std::uint32_t k_max_coalesced_bands = 16;
} // namespace

BridgeSubmitHandOff::BridgeSubmitHandOff(const HandOffContext& context, const BridgeOptions& bridge)
    : BridgedHandOff(context) {
    start(bridge);
}

BridgeSubmitHandOff::~BridgeSubmitHandOff() {
    stop();
}

VkResult BridgeSubmitHandOff::on_band_done(const HandedTransfer& transfer, std::uint64_t /*token*/,
                                           std::uint32_t band) noexcept {
    const auto from = handed(transfer.slot, transfer.first_worker_value);
    if (!from || band < *from) {
        return VK_SUCCESS; // went with an earlier band's submission
    }
    // Every band the worker has finished by now goes in this submission.
    const std::uint32_t last = last_finished_band(transfer, band);
    const std::vector<VkCommandBuffer>& band_cmds = m_context.recorder->primary_cmds(transfer.slot);
    VkCommandBufferSubmitInfo cmds[k_max_coalesced_bands];
    VkSubmitInfo2 submits[k_max_coalesced_bands];
    const VkSemaphoreSubmitInfo signal = m_context.primary_timeline->submit_info(
        transfer.primary_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    std::uint32_t n = 0;
    for (std::uint32_t b = band; b <= last && n < k_max_coalesced_bands; ++b, ++n) {
        const VkResult r = host_step(transfer.slot, b);
        if (r != VK_SUCCESS) {
            return r;
        }
        cmds[n] = VkCommandBufferSubmitInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        cmds[n].commandBuffer = band_cmds[b];
        submits[n] = VkSubmitInfo2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submits[n].commandBufferInfoCount = 1;
        submits[n].pCommandBufferInfos = &cmds[n];
        if (b + 1 == transfer.bands) {
            submits[n].signalSemaphoreInfoCount = 1;
            submits[n].pSignalSemaphoreInfos = &signal;
        }
    }
    // Before the submission: once the last band signals the primary value, the caller may submit
    // the slot's next transfer at once, and hand() resets this count for it; written after, it
    // could overwrite that reset and the next transfer's band 0 would never be submitted.
    set_handed(transfer.slot, transfer.first_worker_value, band + n);
    const bool complete = band + n == transfer.bands; // read nothing of the slot after the submit
    const VkResult r = copy_queue(*m_context.primary).submit({submits, n});
    if (r != VK_SUCCESS) {
        fail(r, "submitting the primary side of a transfer failed");
        return r;
    }
    if (complete) {
        note_submitted(transfer.primary_value);
    }
    report_handed(transfer.slot, band, band + n);
    return VK_SUCCESS;
}

} // namespace tandem::detail
