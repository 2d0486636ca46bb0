#include "transfer/staging_stream.hpp"

#include <exception>

#include "tandem/error.hpp"
#include "transfer/staging_copier.hpp"

namespace tandem::detail {

namespace {

// How long the host stream's thread waits on the worker timeline before it looks for a stop.
constexpr auto k_wait_slice = std::chrono::milliseconds(2);

} // namespace

std::unique_ptr<StagingStream> StagingCopier::stream(const TimelineSemaphore& worker_timeline,
                                                     TimelineSemaphore& gate) const {
    return std::make_unique<HostStagingStream>(*this, worker_timeline, gate);
}

HostStagingStream::HostStagingStream(const StagingCopier& copier,
                                     const TimelineSemaphore& worker_timeline,
                                     TimelineSemaphore& gate)
    : m_copier(copier), m_worker_timeline(worker_timeline), m_gate(gate),
      m_thread([this] { run(); }) {}

HostStagingStream::~HostStagingStream() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_changed.notify_all();
    m_thread.join();
}

std::string HostStagingStream::enqueue(VkDeviceSize offset, VkDeviceSize bytes, std::uint64_t after,
                                       std::uint64_t signal) noexcept {
    try {
        std::lock_guard lock(m_mutex);
        if (!m_error.empty()) {
            return m_error;
        }
        m_queue.push_back({offset, bytes, after, signal});
    } catch (const std::exception& e) { // std::bad_alloc
        return e.what();
    }
    m_changed.notify_all();
    return {};
}

std::string HostStagingStream::poll() noexcept {
    try {
        std::lock_guard lock(m_mutex);
        return m_error;
    } catch (...) {
        return "the host stream's error could not be read";
    }
}

bool HostStagingStream::finish(std::chrono::milliseconds timeout) noexcept {
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(
        lock, timeout, [this] { return !m_error.empty() || (m_queue.empty() && !m_running_one); });
}

void HostStagingStream::run() {
    std::unique_lock lock(m_mutex);
    while (true) {
        m_changed.wait(lock, [this] { return m_stop || !m_queue.empty(); });
        if (m_stop) {
            return;
        }
        const Copy copy = m_queue.front();
        m_queue.pop_front();
        m_running_one = true;
        lock.unlock();
        std::string why;
        try {
            why = run_one(copy);
        } catch (const std::exception& e) {
            why = e.what();
        }
        lock.lock();
        m_running_one = false;
        if (!why.empty() && !m_stop) {
            m_error = std::move(why);
            m_queue.clear();
        }
        m_changed.notify_all();
    }
}

std::string HostStagingStream::run_one(const Copy& copy) {
    while (true) {
        const VkResult r = m_worker_timeline.wait(copy.after, k_wait_slice);
        if (r == VK_SUCCESS) {
            break;
        }
        if (r != VK_TIMEOUT) {
            return std::string("waiting for the worker's band failed (") + tandem::to_string(r) +
                   ")";
        }
        std::lock_guard lock(m_mutex);
        if (m_stop) {
            return "stopped";
        }
    }
    if (std::string why = m_copier.copy(copy.offset, copy.bytes); !why.empty()) {
        return why;
    }
    // The hand-off may have opened the gate past this value already (a drain that timed out):
    // a timeline's value never goes back.
    if (std::uint64_t current = 0; m_gate.value(current) == VK_SUCCESS && current >= copy.signal) {
        return {};
    }
    if (const VkResult r = m_gate.signal(copy.signal); r != VK_SUCCESS) {
        return std::string("signalling the primary's band gate failed (") + tandem::to_string(r) +
               ")";
    }
    return {};
}

} // namespace tandem::detail
