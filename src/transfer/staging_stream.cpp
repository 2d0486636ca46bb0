#include "transfer/staging_stream.hpp"

#include <exception>
#include <thread>

#include "tandem/error.hpp"
#include "transfer/staging_copier.hpp"

namespace tandem::detail {

namespace {

HostBridge::Options stream_bridge_options() {
    HostBridge::Options o;
    o.name = "host stream";
    o.timeout =
        std::chrono::hours(24); // as CUDA's stream: it waits for the worker as long as it takes
    o.capacity = std::size_t{1} << 20; // the link bounds what is in flight (its slots)
    o.spin = std::chrono::microseconds(0);
    return o;
}

} // namespace

std::unique_ptr<StagingStream> StagingCopier::stream(const TimelineSemaphore& worker_timeline,
                                                     TimelineSemaphore& gate) const {
    return std::make_unique<HostStagingStream>(*this, worker_timeline, gate);
}

HostStagingStream::HostStagingStream(const StagingCopier& copier,
                                     const TimelineSemaphore& worker_timeline,
                                     TimelineSemaphore& gate)
    : m_copier(copier), m_gate(gate), m_bridge(worker_timeline, stream_bridge_options()) {}

std::string HostStagingStream::enqueue(VkDeviceSize offset, VkDeviceSize bytes, std::uint64_t after,
                                       std::uint64_t signal) noexcept {
    try {
        if (std::string why = poll(); !why.empty()) {
            return why;
        }
        if (!m_bridge.try_forward(
                after, [this, offset, bytes, signal] { return run_one(offset, bytes, signal); })) {
            return "the host stream refused the copy (" + std::string(to_string(m_bridge.state())) +
                   ")";
        }
    } catch (const std::exception& e) { // std::bad_alloc
        return e.what();
    }
    return {};
}

std::string HostStagingStream::poll() noexcept {
    try {
        {
            std::lock_guard lock(m_mutex);
            if (!m_error.empty()) {
                return m_error;
            }
        }
        return m_bridge.state() == HostBridge::State::Running ? std::string() : m_bridge.error();
    } catch (...) {
        return "the host stream's error could not be read";
    }
}

bool HostStagingStream::finish(std::chrono::milliseconds timeout) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (m_bridge.state() == HostBridge::State::Running && m_bridge.pending() > 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

VkResult HostStagingStream::run_one(VkDeviceSize offset, VkDeviceSize bytes,
                                    std::uint64_t signal) noexcept {
    std::string why = m_copier.copy(offset, bytes);
    VkResult r = why.empty() ? VK_SUCCESS : VK_ERROR_UNKNOWN;
    // The hand-off may have opened the gate past this value already (a drain that timed out):
    // a timeline's value never goes back.
    if (std::uint64_t current = 0;
        r == VK_SUCCESS && (m_gate.value(current) != VK_SUCCESS || current < signal)) {
        r = m_gate.signal(signal);
        if (r != VK_SUCCESS) {
            why = std::string("signalling the primary's band gate failed (") +
                  tandem::to_string(r) + ")";
        }
    }
    if (r != VK_SUCCESS) {
        try {
            std::lock_guard lock(m_mutex);
            m_error = std::move(why);
        } catch (...) {
            // The bridge still reports the failure.
        }
    }
    return r;
}

} // namespace tandem::detail
