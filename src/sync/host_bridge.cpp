#include "sync/host_bridge.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "tandem/error.hpp"

namespace tandem::detail {

namespace {
// The bridge polls the worker's counter instead of blocking in vkWaitSemaphores: a blocking wait
// can wake milliseconds late (seen with CUDA-signalled semaphores on NVIDIA), and polling lets
// stop() be noticed at once. It spins for Options::spin (most waits are short), then sleeps in
// growing steps up to Options::max_sleep so a long wait costs little CPU.
constexpr auto k_first_sleep = std::chrono::microseconds(10);
} // namespace

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

HostBridge::HostBridge(TimelineSemaphore& worker, Options options)
    : m_worker(worker), m_options(std::move(options)) {
    m_thread = std::thread([this] { run(); });
}

HostBridge::~HostBridge() {
    stop();
}

void HostBridge::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_queue.clear();
        // Relaxed: only a hint that ends the polling loop early; m_stop under the lock decides.
        m_stop_requested.store(true, std::memory_order_relaxed);
    }
    m_cv.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    State expected = State::Running;
    // Keep a failure state if one was reached; otherwise record the orderly stop.
    m_state.compare_exchange_strong(expected, State::Stopped, std::memory_order_acq_rel);
}

bool HostBridge::try_forward(std::uint64_t wait_value, Action action) {
    std::lock_guard lock(m_mutex);
    if (m_stop || state() != State::Running || m_queue.size() >= m_options.capacity ||
        wait_value <= m_last_wait_accepted || !action) {
        return false;
    }
    m_last_wait_accepted = wait_value;
    m_queue.push_back({wait_value, std::move(action)});
    m_cv.notify_one();
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

void HostBridge::fail(State state, std::string message) {
    spdlog::error("{}: {}", m_options.name, message);
    std::lock_guard lock(m_mutex);
    m_error = std::move(message);
    m_queue.clear();
    // Release: error() readers that see the state also see the message (it is under the lock
    // too, but state() is read without it).
    m_state.store(state, std::memory_order_release);
}

VkResult HostBridge::wait_for_worker(std::uint64_t target) {
    const auto start = std::chrono::steady_clock::now();
    auto deadline = start + m_options.timeout;
    std::uint64_t progress = m_options.progress ? m_options.progress() : 0;
    auto sleep = k_first_sleep;
    for (;;) {
        std::uint64_t current = 0;
        const VkResult result = m_worker.value(current);
        if (result != VK_SUCCESS) {
            return result;
        }
        if (current >= target) {
            return VK_SUCCESS;
        }
        if (m_stop_requested.load(std::memory_order_relaxed)) {
            return VK_NOT_READY;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline && m_options.progress) {
            if (const std::uint64_t p = m_options.progress(); p != progress) {
                progress = p; // the device is busy with work queued ahead: not hung
                deadline = now + m_options.timeout;
            }
        }
        if (now >= deadline) {
            return VK_TIMEOUT;
        }
        if (now - start < m_options.spin) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(sleep);
            sleep = std::min(sleep * 2, m_options.max_sleep);
        }
    }
}

void HostBridge::run() {
    run_forwards();
    if (m_options.on_exit) {
        m_options.on_exit();
    }
}

void HostBridge::run_forwards() {
    for (;;) {
        Forward next;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [this] { return m_stop || !m_queue.empty(); });
            if (m_stop) {
                return;
            }
            next = m_queue.front();
        }

        VkResult result = wait_for_worker(next.wait_value);
        if (result == VK_NOT_READY) {
            return; // stop() was called
        }
        if (result == VK_TIMEOUT) {
            fail(State::TimedOut, m_worker.name() + " did not reach " +
                                      std::to_string(next.wait_value) + " within " +
                                      std::to_string(m_options.timeout.count()) + " ms");
            return;
        }
        if (result != VK_SUCCESS) {
            fail(State::Failed, "waiting for " + m_worker.name() + " failed (" +
                                    std::string(tandem::to_string(result)) + ")");
            return;
        }
        try {
            result = next.action();
        } catch (const std::exception& e) {
            fail(State::Failed, std::string("bridge action failed: ") + e.what());
            return;
        }
        if (result != VK_SUCCESS) {
            fail(State::Failed, "the primary-side step after " + m_worker.name() + " reached " +
                                    std::to_string(next.wait_value) + " failed (" +
                                    std::string(tandem::to_string(result)) + ")");
            return;
        }
        // Release: a reader that sees the new value also sees what the action wrote.
        m_forwarded.store(next.wait_value, std::memory_order_release);
        std::lock_guard lock(m_mutex);
        if (!m_queue.empty()) {
            m_queue.pop_front();
        }
    }
}

} // namespace tandem::detail
