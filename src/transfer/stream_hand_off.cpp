#include "transfer/stream_hand_off.hpp"

#include <new>

#include "core/instance.hpp"
#include "tandem/error.hpp"
#include "transfer/cuda_peer_path.hpp"

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
        // Unsupported: this path's copier cannot stream; the link falls back to the bridge.
        throw Error(ErrorCategory::Unsupported, std::string("The ") +
                                                    tandem::to_string(context.path->kind()) +
                                                    " path's copier has no stream of its copies");
    }
}

VkResult StreamHandOff::hand(const HandedTransfer& transfer) noexcept {
    try {
        VkResult injected = VK_SUCCESS;
        if (const std::string why = injected_cuda_copy_fault(injected); !why.empty()) {
            return fail_copy(injected, why);
        }
    } catch (const std::bad_alloc&) {
        return fail_copy(VK_ERROR_OUT_OF_HOST_MEMORY, {});
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
    return why.empty() ? why : cuda_copy_failure(why);
}

VkResult StreamHandOff::fail_copy(VkResult result, const std::string& why) noexcept {
    try {
        fail(result, cuda_copy_failure(why));
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
}

} // namespace tandem::detail
