#include "sync/host_bridge.hpp"

#include "core/log.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

const char* to_string(HostBridge::State state) noexcept {
    switch (state) {
    case HostBridge::State::Running:
        return "running";
    case HostBridge::State::TimedOut:
        return "timed-out";
    case HostBridge::State::Failed:
        return "failed";
    case HostBridge::State::Stopped:
        return "stopped";
    }
    return "?";
}

HostBridge::HostBridge(const TimelineSemaphore& worker, Options options,
                       std::shared_ptr<PairBridge> pair)
    : m_worker(worker), m_options(std::move(options)),
      m_pair(pair ? std::move(pair) : std::make_shared<PairBridge>(m_options.name)) {
    m_pair->attach(*this);
}

HostBridge::~HostBridge() {
    stop();
}

void HostBridge::stop() {
    {
        std::lock_guard lock(m_mutex);
        if (m_stop) {
            return;
        }
        m_stop = true; // poll() runs nothing more
    }
    // Once detached the pair's thread no longer touches this bridge, so its queue may go.
    m_pair->detach(*this);
    {
        std::lock_guard lock(m_mutex);
        m_queue.clear();
    }
    State expected = State::Running;
    // Keep a failure state if one was reached; otherwise record the orderly stop.
    m_state.compare_exchange_strong(expected, State::Stopped, std::memory_order_acq_rel);
    exit_once();
}

void HostBridge::exit_once() noexcept {
    if (!m_exited.exchange(true, std::memory_order_acq_rel) && m_options.on_exit) {
        m_options.on_exit();
    }
}

bool HostBridge::try_forward(std::uint64_t wait_value, Action action) {
    {
        std::lock_guard lock(m_mutex);
        if (m_stop || state() != State::Running || m_queue.size() >= m_options.capacity ||
            wait_value <= m_last_wait_accepted || !action) {
            return false;
        }
        m_last_wait_accepted = wait_value;
        m_queue.push_back({wait_value, std::move(action)});
    }
    m_pair->kick(); // after our lock: the pair's thread takes the pair's lock, then ours
    return true;
}

std::string HostBridge::error() const {
    std::lock_guard lock(m_mutex);
    return m_error;
}

std::size_t HostBridge::pending() const {
    std::lock_guard lock(m_mutex);
    return m_queue.size();
}

void HostBridge::fail(State state, std::string message) noexcept {
    try {
        log_error("sync", "{}: {}", m_options.name, message);
        std::lock_guard lock(m_mutex);
        m_error = std::move(message);
        m_queue.clear();
    } catch (...) {
        // Out of memory while describing the failure: the state below still reports it.
    }
    // Release: error() readers that see the state also see the message (it is under the lock
    // too, but state() is read without it).
    m_state.store(state, std::memory_order_release);
    exit_once();
}

HostBridge::Poll HostBridge::poll() noexcept {
    Poll out;
    if (state() != State::Running) {
        return out;
    }
    if (m_pair->device_failed()) {
        fail(State::Failed, "the device pair failed: " + m_pair->device_failure());
        return out;
    }
    for (;;) {
        Forward* front = nullptr;
        {
            std::lock_guard lock(m_mutex);
            if (m_stop || m_queue.empty()) {
                m_waiting = false;
                return out;
            }
            // Stays valid unlocked: only this thread pops, stop() clears only once detached, and
            // push_back leaves a deque's elements where they are.
            front = &m_queue.front();
        }
        std::uint64_t current = 0;
        VkResult result = m_worker.value(current);
        if (result != VK_SUCCESS) {
            std::string message = "waiting for " + m_worker.name() + " failed (" +
                                  std::string(tandem::to_string(result)) + ")";
            if (result == VK_ERROR_DEVICE_LOST) {
                out.device_failure = message;
            }
            fail(State::Failed, std::move(message));
            return out;
        }
        const auto now = std::chrono::steady_clock::now();
        if (current < front->wait_value) {
            if (!m_waiting) {
                m_waiting = true;
                m_wait_start = now;
                m_deadline = now + m_options.timeout;
                m_progress = m_options.progress ? m_options.progress() : 0;
            }
            const bool times_out = m_options.timeout.count() > 0;
            if (times_out && now >= m_deadline && m_options.progress) {
                if (const std::uint64_t p = m_options.progress(); p != m_progress) {
                    m_progress = p; // the device is busy with work queued ahead: not hung
                    m_deadline = now + m_options.timeout;
                }
            }
            if (times_out && now >= m_deadline) {
                fail(State::TimedOut, m_worker.name() + " did not reach " +
                                          std::to_string(front->wait_value) + " within " +
                                          std::to_string(m_options.timeout.count()) + " ms");
                return out;
            }
            out.pending = true;
            out.spin = now - m_wait_start < m_options.spin;
            out.young = now - m_wait_start < k_short_sleeps_for;
            out.sleeps = m_options.spin.count() == 0;
            out.max_sleep = m_options.max_sleep;
            return out;
        }
        m_waiting = false;
        try {
            result = front->action();
        } catch (const std::exception& e) {
            fail(State::Failed, std::string("bridge action failed: ") + e.what());
            return out;
        }
        if (result != VK_SUCCESS) {
            std::string message = "the primary-side step after " + m_worker.name() + " reached " +
                                  std::to_string(front->wait_value) + " failed (" +
                                  std::string(tandem::to_string(result)) + ")";
            if (result == VK_ERROR_DEVICE_LOST) {
                out.device_failure = message;
            }
            fail(State::Failed, std::move(message));
            return out;
        }
        out.ran = true;
        // Release: a reader that sees the new value also sees what the action wrote.
        m_forwarded.store(front->wait_value, std::memory_order_release);
        std::lock_guard lock(m_mutex);
        m_queue.pop_front();
    }
}

} // namespace tandem::detail
