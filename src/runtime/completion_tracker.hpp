// CompletionTracker: how the runtime learns that work finished, and where what it no longer
// uses leaves. It owns the completion thread and does what pump() does: for every task it
// settles the instance being prepared to replace the active one (Task::pending: a move, a
// fallback, a reconfiguration), and for every instance it reads the primary's counters (the
// transport's copy timeline, the application's primary timeline) and what the worker's watcher
// published (Worker::completed_work, host memory), moves the slots on (worker done, copy done,
// reads finished), publishes the application's outputs oldest first, recycles slots (a trial
// job's at once: never published; a chain's producer's once its consumers let them go),
// releases a chain's consumer jobs' holds once they completed, records the stage latencies, retires
// a link whose path failed (LinkFailures), and loses a worker whose device reported an error, whose
// transfer failed with it or that made no progress for longer than its allowance
// (Worker::allowance), retiring its slots. Instances that left use go to the RetireList once
// quiescent; a task that was unregistered leaves the table once its last instance did; and the
// completion thread collects what the RetireList can free (only it: objects are never destroyed on
// the application's thread). On the worker's watcher thread it takes each completed job's GPU time
// and tells the workload (job_completed). At shutdown, drain() waits, bounded, for the GPU.
//
// Threads: pump() on the application's threads and the completion thread; job_completed on a
// worker's watcher; lose_worker on any thread holding nothing (the first caller retires);
// drain() once, after every other thread stopped. Nothing here blocks on a GPU except drain()
// (bounded), and the completion thread polls counters rather than waiting in vkWaitSemaphores.
// Lock order: one task's mutex at a time, then its instances' one at a time; under an instance's
// mutex a worker's lock may be taken (asking what its threads are doing). lose_worker is called
// with nothing held. Memory order: the watcher reports a job before it publishes the completed
// value (release), and the pump reads that value with acquire, so a job seen done through it had
// its GPU time counted.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/device.hpp"
#include "runtime/lease_table.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/task_table.hpp"
#include "runtime/trace_log.hpp"
#include "sync/retire_list.hpp"
#include "sync/timeline_semaphore.hpp"

namespace tandem::detail {

class EventQueue;
class TaskPreparer;

class CompletionTracker {
public:
    // `reads`: the primary timeline the application signals; `timeout_ms`: the runtime's
    // worker timeout (changed by a test hook while running); `first_job_timeout`:
    // RuntimeOptions::first_job_timeout; `events`: where a lost worker, its failed jobs and the
    // tasks that moved are reported.
    CompletionTracker(TaskTable& tasks, LeaseTable& leases, LinkFailures& links,
                      TaskPreparer& preparer, RetireList& retire, const Device& primary,
                      const TimelineSemaphore& reads, const TimelineSemaphore& input_copies,
                      TraceLog& trace, const std::atomic<std::int64_t>& timeout_ms,
                      std::chrono::milliseconds first_job_timeout, EventQueue& events);
    ~CompletionTracker();
    CompletionTracker(const CompletionTracker&) = delete;
    CompletionTracker& operator=(const CompletionTracker&) = delete;

    // Starts the completion thread; stop() joins it (idempotent). `poll`: whether the runtime's
    // threads may poll (core/cpu.hpp may_poll); where they may not, it sleeps with a tight timer
    // slack (tighten_timer_slack).
    void start(bool poll);
    void stop() noexcept;
    // Something will complete that the completion thread does not know of yet (a job's transfer
    // was submitted, a lease released): it stops sleeping and polls from its shortest interval.
    // Any thread; never blocks beyond a short lock.
    void kick() noexcept;
    // How many rounds the completion thread has made (each a pump and a poll or a sleep): the
    // tests' witness that an idle runtime sleeps.
    [[nodiscard]] std::uint64_t rounds() const noexcept {
        return m_rounds.load(std::memory_order_relaxed);
    }

    // Observes every task's completions now, retires what left use (Runtime::pump).
    void pump() noexcept;
    // The worker saw the job's GPU work complete (its watcher thread): counts the job's GPU
    // time and hands the completion to the workload.
    void job_completed(const WorkerJob& job) noexcept;
    // The worker is lost for `reason`: its instances' Free and in-flight slots retire (Ready and
    // Leased ones keep the last outputs readable), then it is marked retired. A DeviceLost
    // event says so, and a JobFailed event names each application job that was in flight.
    void lose_worker(Worker& worker, const std::string& reason) noexcept;
    // Moves `task`'s quiescent retiring instances to the RetireList (their counters into the
    // task's). Caller holds task.mutex.
    void retire_quiescent(Task& task) noexcept;
    // Waits until `deadline` at the latest for every instance's and every retired object's
    // known GPU work, then destroys the retired objects. Shutdown only, once the other threads
    // stopped; false when some wait did not end in success.
    [[nodiscard]] bool drain(std::chrono::steady_clock::time_point deadline) noexcept;

    [[nodiscard]] std::chrono::milliseconds timeout() const noexcept {
        return std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
    }
    [[nodiscard]] std::chrono::milliseconds first_job_timeout() const noexcept {
        return m_first_job_timeout;
    }

private:
    void pump_all() noexcept;
    // One task: settles its pending instance, pumps each instance, retires the quiescent ones.
    // Returns the workers it found lost (lost_reason per worker), for the caller to lose with
    // nothing held; `removable` when an unregistered task has nothing left.
    struct Losses {
        std::vector<std::pair<Worker*, std::string>> workers;
    };
    void pump_task(Task& task, std::uint64_t reads_value, Losses& losses, bool& removable) noexcept;
    // One instance's slots; a loss found goes to `losses`. Caller holds the task's mutex.
    void pump_instance(Task& task, TaskInstance& instance, std::uint64_t reads_value,
                       Losses& losses) noexcept;
    // The pending instance, once its preparation ended: active (prepared) or refused. Caller
    // holds task.mutex.
    void settle_pending(Task& task) noexcept;
    // The completion thread: observes completions (what pump() does) without the application,
    // so outputs are published and slots recycled at the rate the devices deliver them,
    // whatever the application's frame rate. It polls the primary's counters with a sleep that
    // grows while nothing completes (never blocking in vkWaitSemaphores).
    void run() noexcept;

    TaskTable& m_tasks;
    EventQueue& m_events;
    LeaseTable& m_leases;
    LinkFailures& m_links;
    TaskPreparer& m_preparer;
    RetireList& m_retire;
    const Device& m_primary;
    const TimelineSemaphore& m_reads;
    const TimelineSemaphore& m_input_copies; // what a retired instance's input copies signal
    TraceLog& m_trace;
    std::uint32_t m_trace_app = 0;
    const std::atomic<std::int64_t>& m_timeout_ms;
    std::chrono::milliseconds m_first_job_timeout;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    std::mutex m_kick_mutex;
    std::condition_variable m_kick_cv; // kick() and stop(), to the completion thread's sleep
    bool m_kicked = false;             // guarded by m_kick_mutex
    std::atomic<std::uint64_t> m_rounds{0};
};

} // namespace tandem::detail
