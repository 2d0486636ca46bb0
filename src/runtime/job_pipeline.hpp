// JobPipeline: a job's way from submit() to the transport. submit() (the application's thread)
// takes a Free slot, assigns the next generation, copies the snapshot and queues the job on the
// registration's worker: a lock and a push, never a GPU call. On the worker's job thread,
// process_job() records the job (the job timer's first timestamp, the workload's commands, the
// second timestamp, the layout the transfer wants) and submits it, signalling the worker's work
// timeline; it then queues submit_transfer() on the worker's transfer thread, which hands the
// written image to the slot's transport and publishes the slot as WorkerInFlight. A job the
// worker drops at shutdown retires its slot (drop_job); a transfer whose path failed retires the
// task's link (LinkFailures); a job whose submit or transfer fails otherwise loses the worker
// (fail_job, through the CompletionTracker); a workload whose own code failed stops its task
// only. It owns no state: the slots and samples belong to their Tasks.
//
// Threads: submit on any thread (never blocks on a GPU, never throws); process_job on the
// worker's job thread; submit_transfer on its transfer thread; drop_job where Worker calls it.
// Lock order: a task's mutex is taken with nothing else held (on the worker's threads) and
// released before the worker's queue lock (enqueue); the job timer's lock is released before
// the task's mutex is taken.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/completion_tracker.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/task_registry.hpp"
#include "runtime/trace_log.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

class JobPipeline {
public:
    // `reads`: the primary timeline the application signals (a job on the primary's own device
    // waits GPU-side for the reads of its image); `timeout_ms`: the runtime's worker timeout.
    JobPipeline(const TaskRegistry& tasks, CompletionTracker& completion, LinkFailures& links,
                const TimelineSemaphore& reads, TraceLog& trace,
                const std::atomic<std::int64_t>& timeout_ms)
        : m_tasks(tasks), m_completion(completion), m_links(links), m_reads(reads), m_trace(trace),
          m_timeout_ms(timeout_ms) {}
    JobPipeline(const JobPipeline&) = delete;
    JobPipeline& operator=(const JobPipeline&) = delete;

    [[nodiscard]] SubmitResult submit(TaskId id, std::span<const std::byte> snapshot) noexcept;
    // The job thread's part: records and submits the job's work, then queues submit_transfer
    // on the worker's transfer thread.
    void process_job(Worker& worker, const WorkerJob& job) noexcept;
    // The worker dropped the job (stop()): its slot retires if the job still owns it.
    void drop_job(const WorkerJob& job) noexcept;

private:
    void submit_transfer(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                         Clock::time_point t_submit, std::uint64_t work_value,
                         VkSemaphoreSubmitInfo signal, VkImage worker_image) noexcept;
    // The worker is lost for `reason` and the job's slot retires.
    void fail_job(Worker& worker, const WorkerJob& job, const std::string& reason) noexcept;

    const TaskRegistry& m_tasks;
    CompletionTracker& m_completion;
    LinkFailures& m_links;
    const TimelineSemaphore& m_reads;
    TraceLog& m_trace;
    const std::atomic<std::int64_t>& m_timeout_ms;
};

} // namespace tandem::detail
