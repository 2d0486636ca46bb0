// Stream: drives one task from a timer at a target rate. Each tick submits the task's snapshot;
// an optional limit caps the *accepted* submits (Busy and Failed do not count), after which the
// stream stops ticking. Statistics: timer ticks, accepted, busy, failed, and from the runtime
// the ready count, slots in flight and per-stage latencies, with each effective rate.
//
// Threads: the timer runs on the stream's own thread; start/stop/stats from any thread.
// Lifetime: the stream must die before the runtime; the destructor stops and joins.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tandem/runtime.hpp"

namespace tandem::harness {

struct StreamOptions {
    double rate_hz = 60.0;              // positive and finite (parse_rate_hz)
    std::optional<std::uint64_t> limit; // accepted submits; none: until stopped
    bool quiet = false;                 // no log line for failures
};

struct StreamStats {
    double elapsed_s = 0;
    double target_hz = 0;
    std::uint64_t ticks = 0;
    std::uint64_t accepted = 0;
    std::uint64_t busy = 0;
    std::uint64_t failed = 0;
    std::uint64_t ready = 0; // generations published since the stream started
    std::uint32_t in_flight = 0;
    double tick_hz = 0;
    double accepted_hz = 0;
    double busy_hz = 0;
    double failed_hz = 0;
    double ready_hz = 0;
    bool finished = false; // the limit was reached
    TaskStats task;        // the runtime's view (latencies per stage)
};

class Stream {
public:
    // Throws tandem::Error when the rate is not positive and finite.
    Stream(Runtime& runtime, TaskId task, const StreamOptions& options,
           std::vector<std::byte> snapshot = {});
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    void start();
    void stop();
    [[nodiscard]] bool finished() const noexcept {
        return m_finished.load(std::memory_order_acquire);
    }
    [[nodiscard]] StreamStats stats() const;

private:
    void run();

    Runtime& m_runtime;
    TaskId m_task;
    StreamOptions m_options;
    std::vector<std::byte> m_snapshot;
    std::uint64_t m_ready_base = 0;
    std::chrono::steady_clock::time_point m_start{};
    std::chrono::steady_clock::time_point m_end{};

    // Counters written by the timer thread; relaxed: each is an independent statistic.
    alignas(64) std::atomic<std::uint64_t> m_ticks{0};
    std::atomic<std::uint64_t> m_accepted{0};
    std::atomic<std::uint64_t> m_busy{0};
    std::atomic<std::uint64_t> m_failed{0};
    std::atomic<bool> m_finished{false};
    std::atomic<bool> m_running{false};

    mutable std::mutex m_mutex; // guards m_stop, m_end, m_start
    std::condition_variable m_cv;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace tandem::harness
