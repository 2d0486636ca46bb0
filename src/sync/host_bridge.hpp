// HostBridge: forwards one timeline (the worker's) to another (the primary's) from a thread of its
// own, for device pairs that cannot share a semaphore. Each forward says: once the worker timeline
// reaches `wait_value`, run `before_signal` (may be empty: the host-copy path's memcpy goes here),
// then signal the primary timeline to `signal_value`. The primary GPU waits on that value, so the
// application thread never waits on anything.
//
// Contract: try_forward() never blocks (bounded queue; false when full). Values passed to it must
// grow. A wait longer than `timeout` puts the bridge in TimedOut and stops it: it is reported,
// never a hang. The destructor stops the thread even with forwards pending (they are dropped;
// nothing is signalled for them) and joins it. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "sync/timeline_semaphore.hpp"

namespace tandem::detail {

class HostBridge {
public:
    enum class State { Running, TimedOut, Failed, Stopped };

    struct Options {
        std::string name = "bridge";
        std::chrono::milliseconds timeout{5000};
        std::size_t capacity = 64; // pending forwards before try_forward answers false
    };

    HostBridge(TimelineSemaphore& worker, TimelineSemaphore& primary, Options options);
    ~HostBridge();
    HostBridge(const HostBridge&) = delete;
    HostBridge& operator=(const HostBridge&) = delete;

    [[nodiscard]] bool try_forward(std::uint64_t wait_value, std::uint64_t signal_value,
                                   std::function<void()> before_signal = {});

    [[nodiscard]] State state() const noexcept { return m_state.load(std::memory_order_acquire); }
    // A sentence describing the failure once state() is TimedOut or Failed.
    [[nodiscard]] std::string error() const;
    // The last primary value this bridge signalled (0 before the first).
    [[nodiscard]] std::uint64_t forwarded() const noexcept {
        return m_forwarded.load(std::memory_order_acquire);
    }
    [[nodiscard]] std::size_t pending() const;

    // Stops the thread; pending forwards are dropped. Idempotent.
    void stop();

private:
    struct Forward {
        std::uint64_t wait_value;
        std::uint64_t signal_value;
        std::function<void()> before_signal;
    };
    void run();
    // VK_SUCCESS once the worker reached `target`; VK_TIMEOUT past the timeout; VK_NOT_READY
    // when stop() was called; any other result is a device failure.
    [[nodiscard]] VkResult wait_for_worker(std::uint64_t target);
    void fail(State state, std::string message);

    TimelineSemaphore& m_worker;
    TimelineSemaphore& m_primary;
    Options m_options;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Forward> m_queue;
    bool m_stop = false;
    std::atomic<bool> m_stop_requested{false};
    std::string m_error;
    std::atomic<State> m_state{State::Running};
    std::atomic<std::uint64_t> m_forwarded{0};
    std::uint64_t m_last_signal_accepted = 0; // guarded by m_mutex
    std::thread m_thread;
};

[[nodiscard]] const char* to_string(HostBridge::State state) noexcept;

} // namespace tandem::detail
