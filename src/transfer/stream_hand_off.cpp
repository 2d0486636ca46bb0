#include "transfer/stream_hand_off.hpp"

#include "core/instance.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

// The gate's name: marked host-signalled for a stream the host signals it from (the stand-in).
std::string gate_name(const std::string& name, bool from_host) {
    return name + " band gate" + (from_host ? std::string(k_host_signalled_only) : std::string());
}

// How long release_waiters waits for a failed stream's queued work before it opens the gate.
constexpr auto k_failed_stream_wait = std::chrono::milliseconds(1000);

} // namespace

StreamHandOff::StreamHandOff(const HandOffContext& context, const std::string& name)
    : HandOff(context),
      m_gate(*context.primary, gate_name(name, context.path->stream_signals_from_host()), 0,
             !context.path->stream_signals_from_host()),
      m_stream(context.path->make_stream(*context.worker_timeline, m_gate)) {
    if (!m_stream) {
        throw Error(std::string("The ") + tandem::to_string(context.path->kind()) +
                    " path has no stream of its copies");
    }
}

StreamHandOff::~StreamHandOff() {
    // The link drained it; a hand-off destroyed without that still lets no copy wait forever.
    if (!m_released && m_context.failure->failed()) {
        release_waiters(k_failed_stream_wait);
    }
}

VkResult StreamHandOff::hand(const HandedTransfer& transfer) noexcept {
    // Fault injection (core/vk_check.hpp) stands for a failed CUDA copy here, for the tests.
    if (const VkResult injected = vk_status(VK_SUCCESS, "CUDA copy cuda-peer");
        injected != VK_SUCCESS) {
        return fail_copy(injected, std::string("an injected fault (") +
                                       tandem::to_string(injected) + ") in place of a CUDA error");
    }
    if (const std::string why = m_stream->poll(); !why.empty()) {
        const VkResult failed = fail_copy(VK_ERROR_UNKNOWN, why);
        release_waiters(k_failed_stream_wait);
        return failed;
    }
    const std::uint64_t base = m_gate_next;
    m_gate_next += transfer.bands;
    m_gate_assigned = base + transfer.bands - 1;
    const VkResult r = submit_waiting_bands(transfer, m_gate, base);
    if (r != VK_SUCCESS) {
        return r; // reported; nothing waits on this transfer's gate values
    }
    const StagingLayout& layout = m_context.path->layout();
    for (std::uint32_t b = 0; b < transfer.bands; ++b) {
        const Band band = layout.band(b);
        const std::string why =
            m_stream->enqueue(layout.slot_offset(transfer.slot) + band.offset, band.bytes,
                              transfer.first_worker_value + b, base + b);
        if (!why.empty()) {
            const VkResult failed = fail_copy(VK_ERROR_UNKNOWN, why);
            release_waiters(k_failed_stream_wait);
            return failed;
        }
    }
    return VK_SUCCESS;
}

void StreamHandOff::drain(std::chrono::milliseconds timeout) noexcept {
    const bool finished = m_stream->finish(timeout);
    if (const std::string why = m_stream->poll(); !why.empty()) {
        (void)fail_copy(VK_ERROR_UNKNOWN, why);
    }
    if (!finished || m_context.failure->failed()) {
        release_waiters(std::chrono::milliseconds(0));
    }
}

bool StreamHandOff::failed() const noexcept {
    return !m_stream->poll().empty();
}

std::string StreamHandOff::error() const {
    const std::string why = m_stream->poll();
    return why.empty() ? why : "the CUDA copy between the GPUs failed: " + why;
}

VkResult StreamHandOff::fail_copy(VkResult result, const std::string& why) noexcept {
    try {
        fail(result, "the CUDA copy between the GPUs failed: " + why);
    } catch (...) {
        fail(result, std::string()); // out of memory for the words: the link still fails
    }
    return result;
}

void StreamHandOff::release_waiters(std::chrono::milliseconds timeout) noexcept {
    // After the stream's own signals, so the gate's value never goes back.
    (void)m_stream->finish(timeout);
    std::uint64_t value = 0;
    if (m_gate.value(value) == VK_SUCCESS && value < m_gate_assigned) {
        (void)m_gate.signal(m_gate_assigned);
    }
    m_released = true;
}

} // namespace tandem::detail
