// HostBridge: carries a worker's completion to the primary from a thread of its own, for device
// pairs that cannot share a semaphore. Each forward says: once the worker timeline reaches
// `wait_value`, run `action` on the bridge thread. The action is the primary side's part: an
// optional host step (the host-copy path's memcpy) and the primary queue submission that
// signals the primary's timeline. So the application thread never waits on anything, and every
// semaphore is signalled by a queue operation (no host signal, no wait-before-signal), which
// keeps drivers and the validation layer's timeline tracking on their best-tested path.
//
// Contract: try_forward() never blocks (bounded queue; false when full). Wait values must grow.
// A wait longer than `timeout` puts the bridge in TimedOut and stops it: reported, never a hang.
// An action that returns an error or throws puts it in Failed. The destructor stops the thread
// even with forwards pending (they are dropped; their actions never run) and joins it.
// Thread-safe.
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
        // How long a wait polls without sleeping before it backs off to sleeps growing up to
        // `max_sleep`. Spinning keeps the hand-off within microseconds of the worker finishing;
        // sleeping keeps an idle bridge cheap. Latency-critical runs (benchmarks, a machine
        // with cores to spare) raise `spin`.
        std::chrono::microseconds spin{1000};
        std::chrono::microseconds max_sleep{100};
        // Called once on the bridge thread as it ends, whatever the reason (stop, timeout or
        // failure; after a timeout or failure, once state() says so): for releasing what the
        // dropped forwards held back. Must not throw.
        std::function<void()> on_exit;
        // When set, a count that grows while the worker's device makes progress (any of its
        // work completing): a wait then times out only after `timeout` without progress, so a
        // slow worker with a long queue ahead of this wait is not taken for a hung one.
        std::function<std::uint64_t()> progress;
    };

    // The action's result: VK_SUCCESS, or the failure that stops the bridge.
    using Action = std::function<VkResult()>;

    HostBridge(TimelineSemaphore& worker, Options options);
    ~HostBridge();
    HostBridge(const HostBridge&) = delete;
    HostBridge& operator=(const HostBridge&) = delete;

    [[nodiscard]] bool try_forward(std::uint64_t wait_value, Action action);

    [[nodiscard]] State state() const noexcept { return m_state.load(std::memory_order_acquire); }
    // A sentence describing the failure once state() is TimedOut or Failed.
    [[nodiscard]] std::string error() const;
    // The wait value of the last forward whose action completed (0 before the first).
    [[nodiscard]] std::uint64_t forwarded() const noexcept {
        return m_forwarded.load(std::memory_order_acquire);
    }
    [[nodiscard]] std::size_t pending() const;

    // Stops the thread; pending forwards are dropped. Idempotent.
    void stop();

private:
    struct Forward {
        std::uint64_t wait_value;
        Action action;
    };
    void run();
    void run_forwards(); // until stop, a timeout or a failure
    // VK_SUCCESS once the worker reached `target`; VK_TIMEOUT past the timeout; VK_NOT_READY
    // when stop() was called; any other result is a device failure.
    [[nodiscard]] VkResult wait_for_worker(std::uint64_t target);
    void fail(State state, std::string message);

    TimelineSemaphore& m_worker;
    Options m_options;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Forward> m_queue;
    bool m_stop = false;
    std::atomic<bool> m_stop_requested{false};
    std::string m_error;
    std::atomic<State> m_state{State::Running};
    std::atomic<std::uint64_t> m_forwarded{0};
    std::uint64_t m_last_wait_accepted = 0; // guarded by m_mutex
    std::thread m_thread;
};

[[nodiscard]] const char* to_string(HostBridge::State state) noexcept;

} // namespace tandem::detail
