// CompletionTracker: how the runtime learns that work finished. It owns the completion thread
// and does what pump() does: for every prepared registration it reads the primary's counters
// (the transport's copy timeline, the application's primary timeline) and what the worker's
// watcher published (Worker::completed_work, host memory), moves the slots on (worker done,
// copy done, reads finished), publishes outputs oldest first, recycles slots, records the stage
// latencies, retires a link whose path failed (LinkFailures), and loses a worker whose device
// reported an error, whose transfer failed with it or whose work is overdue (retiring its
// slots). On the worker's watcher thread it takes each completed
// job's GPU time and tells the workload (job_completed). At shutdown, drain() waits, bounded,
// for every registration's last known work.
//
// Threads: pump() on the application's threads and the completion thread; job_completed on a
// worker's watcher; lose_worker on any thread (the first caller retires); drain() once, after
// every other thread stopped. Nothing here blocks on a GPU except drain() (bounded by the
// timeout), and the completion thread polls counters rather than waiting in vkWaitSemaphores.
// Lock order: one task's mutex at a time; under it a worker's lock may be taken (pump_task asks
// the worker what its threads are doing), never the other way round. The watcher's call
// (job_completed) takes the job timer's lock and then, with nothing held, the task's mutex.
// The primary's host-semaphore guard is taken with nothing else held. Memory order: the
// watcher reports a job before it publishes the completed value (release), and pump_task reads
// that value with acquire, so a job seen done through it has had its GPU time counted (one seen
// done through its copy first is counted once the watcher or the next recording of its slot
// gets to it).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "core/device.hpp"
#include "runtime/lease_table.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/task_registry.hpp"
#include "runtime/trace_log.hpp"
#include "sync/timeline_semaphore.hpp"

namespace tandem::detail {

class CompletionTracker {
public:
    // `reads`: the primary timeline the application signals; `timeout_ms`: the runtime's
    // worker timeout (changed by a test hook while running).
    CompletionTracker(const TaskRegistry& tasks, LeaseTable& leases, LinkFailures& links,
                      const Device& primary, const TimelineSemaphore& reads, TraceLog& trace,
                      const std::atomic<std::int64_t>& timeout_ms);
    ~CompletionTracker();
    CompletionTracker(const CompletionTracker&) = delete;
    CompletionTracker& operator=(const CompletionTracker&) = delete;

    // Starts the completion thread; stop() joins it (idempotent).
    void start();
    void stop() noexcept;

    // Observes every registration's completions now (Runtime::pump).
    void pump() noexcept;
    // The worker saw the job's GPU work complete (its watcher thread): counts the job's GPU
    // time and hands the completion to the workload.
    void job_completed(const WorkerJob& job) noexcept;
    // The worker is lost for `reason`: its tasks' Free and in-flight slots retire (Ready and
    // Leased ones keep the last outputs readable), then it is marked retired.
    void lose_worker(Worker& worker, const std::string& reason) noexcept;
    // Waits, bounded by the timeout, for every task's last known GPU work; false when some
    // wait did not end in success. Shutdown only, once the other threads stopped.
    [[nodiscard]] bool drain() noexcept;

private:
    [[nodiscard]] std::chrono::milliseconds timeout() const noexcept {
        return std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
    }
    void pump_all() noexcept;
    void pump_task(Task& task, std::uint64_t reads_value) noexcept;
    // The completion thread: observes completions (what pump() does) without the application,
    // so outputs are published and slots recycled at the rate the devices deliver them,
    // whatever the application's frame rate. It polls the primary's counters with a sleep that
    // grows while nothing completes (never blocking in vkWaitSemaphores).
    void run() noexcept;

    const TaskRegistry& m_tasks;
    LeaseTable& m_leases;
    LinkFailures& m_links;
    const Device& m_primary;
    const TimelineSemaphore& m_reads;
    TraceLog& m_trace;
    std::uint32_t m_trace_app = 0;
    const std::atomic<std::int64_t>& m_timeout_ms;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

} // namespace tandem::detail
