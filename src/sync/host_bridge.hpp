// HostBridge: carries a worker's completion to the primary from a host thread, for device pairs
// that cannot share a semaphore; one per link, served by the PairBridge thread of its device pair
// (pair_bridge.hpp), which it shares with the pair's other links. Each forward says: once the
// worker timeline reaches `wait_value`, run `action` on the pair's thread. The action is the
// primary side's part: an optional host step (the host-copy path's memcpy) and the primary queue
// submission that signals the primary's timeline. So the application thread never waits on
// anything, and every semaphore is signalled by a queue operation (no host signal, no
// wait-before-signal), which keeps drivers and the validation layer's timeline tracking on their
// best-tested path.
//
// Contract: try_forward() never blocks (bounded queue; false when full). Wait values must grow.
// A wait longer than `timeout` puts the bridge in TimedOut and stops it: reported, never a hang
// (a timeout of 0 never times out: for an owner that watches the worker for hangs itself).
// An action that returns an error or throws puts it in Failed; so does the pair's device failing
// (PairBridge's failure rule). stop() and the destructor detach it even with forwards pending
// (they are dropped; their actions never run): once they return, no action of it runs. Other
// HostBridges of the pair carry on. Thread-safe; not to be stopped from its own actions.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "sync/pair_bridge.hpp"
#include "sync/timeline_semaphore.hpp"

namespace tandem::detail {

// How long a wait's sleeps stay at their shortest before they grow: the span in which the
// transfers a bridge waits for usually finish (a 1920x1080 RGBA8 frame's download on the H200
// takes about 170 us), so that their end is seen within one short sleep instead of the half of
// a doubled one.
inline constexpr std::chrono::microseconds k_short_sleeps_for{500};

class HostBridge {
public:
    enum class State { Running, TimedOut, Failed, Stopped };

    struct Options {
        std::string name = "bridge";
        std::chrono::milliseconds timeout{5000}; // 0: never
        std::size_t capacity = 64; // pending forwards before try_forward answers false
        // How long a wait polls without sleeping before it backs off to sleeps growing up to
        // `max_sleep`. Spinning keeps the hand-off within microseconds of the worker finishing;
        // sleeping keeps an idle bridge cheap. Latency-critical runs (benchmarks, a machine
        // with cores to spare) raise `spin`.
        std::chrono::microseconds spin{1000};
        std::chrono::microseconds max_sleep{100};
        // Called once as the bridge ends, whatever the reason: on the pair's thread after a
        // timeout or failure (once state() says so), else in stop() once no action of it runs.
        // For releasing what the dropped forwards held back. Must not throw.
        std::function<void()> on_exit;
        // When set, a count that grows while the worker's device makes progress (any of its
        // work completing): a wait then times out only after `timeout` without progress, so a
        // slow worker with a long queue ahead of this wait is not taken for a hung one.
        std::function<std::uint64_t()> progress;
    };

    // The action's result: VK_SUCCESS, or the failure that stops the bridge.
    using Action = std::function<VkResult()>;

    // On `pair`'s thread; a thread of its own (a PairBridge named after it) when `pair` is null.
    HostBridge(const TimelineSemaphore& worker, Options options,
               std::shared_ptr<PairBridge> pair = nullptr);
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

    [[nodiscard]] const std::shared_ptr<PairBridge>& pair() const noexcept { return m_pair; }

    // Detaches from the pair's thread; pending forwards are dropped. Idempotent.
    void stop();

private:
    friend class PairBridge;
    struct Forward {
        std::uint64_t wait_value;
        Action action;
    };
    // What one poll() found, for the pair's thread.
    struct Poll {
        bool ran = false;     // some action ran
        bool pending = false; // a forward still waits for its worker value
        bool spin = false;    // ... and wants polling without sleeping
        bool young = false;   // ... and began less than k_short_sleeps_for ago
        bool sleeps = false;  // ... on a bridge that never spins (Options::spin 0)
        std::chrono::microseconds max_sleep{0};
        std::string device_failure; // set when the pair's device failed (VK_ERROR_DEVICE_LOST)
    };
    // On the pair's thread: runs every forward whose worker value was reached, in order, and
    // checks the one still waiting against the timeout.
    [[nodiscard]] Poll poll() noexcept;
    void fail(State state, std::string message) noexcept;
    void exit_once() noexcept;

    const TimelineSemaphore& m_worker;
    Options m_options;
    std::shared_ptr<PairBridge> m_pair;
    mutable std::mutex m_mutex;
    std::deque<Forward> m_queue;
    bool m_stop = false;
    std::string m_error;
    std::atomic<State> m_state{State::Running};
    std::atomic<std::uint64_t> m_forwarded{0};
    std::atomic<bool> m_exited{false};
    std::uint64_t m_last_wait_accepted = 0; // guarded by m_mutex
    // The pair's thread only: the wait on the front forward (start, deadline, progress seen).
    bool m_waiting = false;
    std::chrono::steady_clock::time_point m_wait_start;
    std::chrono::steady_clock::time_point m_deadline;
    std::uint64_t m_progress = 0;
};

[[nodiscard]] const char* to_string(HostBridge::State state) noexcept;

} // namespace tandem::detail
