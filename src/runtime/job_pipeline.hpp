// JobPipeline: a job's way from submit() to the transport. take() (the application's thread,
// under the task's mutex) takes a Free slot of the task's instance, assigns the job's generation
// and copies its bytes: a lock and a copy, and for a task with inputs the submit of their copies
// on the primary (task_inputs.hpp), never a wait on a GPU; the caller then queues the job on
// the instance's worker. Before its work, the job thread walks the instance's input sources
// (input_sources.hpp: the application's inputs sent to the device, other tasks' outputs found
// where their producers left them, each with the waits its batch needs), and while it waits
// sends the inputs of the jobs queued behind it (send_ahead); a producer's job waits for the
// consumers that read its slot before. On
// the worker's job thread, process_job() records the job (the job timer's first timestamp, the
// workload's commands, the second timestamp, the layout the transfer wants) and submits it,
// signalling the worker's work timeline; it then queues submit_transfer() on the worker's transfer
// thread, which hands the written image to the slot's transport and publishes the slot as
// WorkerInFlight. A job the worker drops at shutdown retires its slot (drop_job); a transfer whose
// path failed retires the instance's link (LinkFailures); a job whose submit or transfer fails
// otherwise loses the worker (fail_job, through the CompletionTracker). A job whose workload failed
// (its record() threw) fails alone: its slot goes back to Free, the task counts the failure, and
// only max_consecutive_failures in a row stop the task. It owns no state: the slots and samples
// belong to their instances.
//
// Threads: take on the application's threads (and the scheduler's, for trial jobs); process_job
// on the worker's job thread; submit_transfer on its transfer thread; drop_job where Worker calls
// it. Lock order: the worker's threads take an instance's mutex with nothing else held, or the
// task's mutex and then the instance's (a failed job); they touch an instance only while one of
// its slots is in flight and leave it under its mutex (task_instance.hpp); the job timer's lock
// is released before the instance's mutex is taken.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/completion_tracker.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/task.hpp"
#include "runtime/task_chains.hpp"
#include "runtime/task_inputs.hpp"
#include "runtime/trace_log.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

class JobPipeline {
public:
    // InputsFailed: the copy of the job's inputs could not be submitted to the primary's queue;
    // PrimaryLost: that submit answered VK_ERROR_DEVICE_LOST.
    enum class Take { Accepted, Busy, OutOfMemory, InputsFailed, PrimaryLost };

    // `reads`: the primary timeline the application signals (a job on the primary's own device
    // waits GPU-side for the reads of its image); `timeout_ms`: the runtime's worker timeout;
    // `max_failures`: RuntimeOptions::max_consecutive_failures.
    JobPipeline(CompletionTracker& completion, LinkFailures& links, const TimelineSemaphore& reads,
                InputCopier& inputs, TraceLog& trace, const std::atomic<std::int64_t>& timeout_ms,
                std::uint32_t max_failures)
        : m_completion(completion), m_links(links), m_reads(reads), m_inputs(inputs),
          m_trace(trace), m_timeout_ms(timeout_ms), m_max_failures(max_failures) {}
    JobPipeline(const JobPipeline&) = delete;
    JobPipeline& operator=(const JobPipeline&) = delete;

    // Takes a Free slot of the prepared `instance` for a job of `bytes`: an application job
    // gets generation ++task.generations (returned in `job`), a trial job ++trial_generations.
    // Busy (no slot free) and OutOfMemory change nothing. Caller holds the instance's task's
    // mutex; on Accepted it queues `job` on instance.worker once it released it.
    // With `inputs` (the instance's task has inputs; InputCopier::check passed), their copies
    // are submitted into the slot and `inputs_released` is the input timeline value they signal.
    // With `chained` (hold_chained's holds for this job), the slot takes them over on Accepted.
    // With `lent_slot` (a loan of the instance, Runtime::lend_inputs), the job takes that slot
    // (Lent -> Recording), whose images inputs `lent` (a bit each) name: nothing of those is
    // copied; the slot stays Lent when the answer is not Accepted.
    [[nodiscard]] Take take(Task& task, TaskInstance& instance, std::span<const std::byte> bytes,
                            bool trial, WorkerJob& job, std::span<const InputImage> inputs = {},
                            std::uint64_t* inputs_released = nullptr,
                            std::vector<ChainedRead>* chained = nullptr,
                            std::optional<std::uint32_t> lent_slot = std::nullopt,
                            std::uint32_t lent = 0) noexcept;
    // A Free slot of `instance`, now Recording, whose last input copy ran (the holds of an
    // earlier job of it that never ran let go); none when every slot is in use. take() and
    // lend_inputs start here. Caller holds the instance's mutex.
    [[nodiscard]] std::optional<std::uint32_t> take_free_slot(TaskInstance& instance) noexcept;
    // The job thread's part: records and submits the job's work, then queues submit_transfer
    // on the worker's transfer thread.
    void process_job(Worker& worker, const WorkerJob& job) noexcept;
    // The worker dropped the job (stop()): its slot retires if the job still owns it.
    void drop_job(const WorkerJob& job) noexcept;

private:
    // The jobs queued behind its own whose inputs the job thread sends at most (send_ahead):
    // more in flight would not keep the primary's copies any busier.
    static constexpr std::size_t k_jobs_sent_ahead = 8;

    // What process_job's stages hand on, read from the slot as the job starts (start_job).
    struct JobStart {
        FeedList feeds;     // the chain feeds this job fills
        bool timed = false; // the job timer brackets this job's commands
    };

    // process_job's stages, in order. Each answers false once the job is over (failed, or its
    // slot retired), having let the job go: the caller then returns.
    // Every reader of the slot's previous output, as waits for the job's batch: the transport's
    // read of the worker image, the application's reads (on one device, and those on the
    // worker), and the chain's consumers that read it in place. Caller holds the instance's
    // mutex. Throws std::bad_alloc only.
    void previous_readers(Worker& worker, const TaskInstance& instance, const SlotRecord& s,
                          std::vector<VkSemaphoreSubmitInfo>& waits) const;
    // Under the instance's mutex: the slot still the job's, its feeds, and appended to `waits`
    // what its batch waits for before it rewrites the slot (previous_readers, and each feed's
    // link's last read of its sender image).
    [[nodiscard]] bool start_job(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                                 JobStart& start,
                                 std::vector<VkSemaphoreSubmitInfo>& waits) noexcept;
    // Walks the instance's input sources (input_sources.hpp) until each gave its JobInput and
    // waits: the application's inputs sent to the device, chained ones found where their
    // producers left them. Once its own inputs are on their links, and while it waits, it sends
    // those of the jobs queued behind it (send_ahead).
    [[nodiscard]] bool gather_inputs(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                                     std::vector<VkSemaphoreSubmitInfo>& waits,
                                     std::vector<JobInput>& inputs) noexcept;
    // The timestamps, the workload's commands, the feeds' copies and the layout the transfer
    // wants (`written_layout`), into the slot's command buffer.
    [[nodiscard]] bool record_job(Worker& worker, const WorkerJob& job, const JobStart& start,
                                  const Image& target_image, std::span<const JobInput> inputs,
                                  VkImageLayout written_layout) noexcept;
    // Submits the recorded work after `waits` (the slot's previous readers and the job's
    // inputs), signalling the worker's work timeline at `work_value` (`signal`).
    [[nodiscard]] bool submit_work(Worker& worker, const WorkerJob& job,
                                   std::span<const VkSemaphoreSubmitInfo> waits,
                                   std::uint64_t& work_value,
                                   VkSemaphoreSubmitInfo& signal) noexcept;

    // Sends the inputs of the jobs queued on `worker` behind the one its job thread holds (at
    // most k_jobs_sent_ahead, in queue order, each once, only those inputs_to_send_ahead), so
    // that the primary's next download is in flight while that job waits for its own. Stops at
    // the first a link does not take; that job's own turn sends again and reports a failure.
    void send_ahead(Worker& worker) noexcept;
    void submit_transfer(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                         Clock::time_point t_submit, std::uint64_t work_value,
                         VkSemaphoreSubmitInfo signal, VkImage worker_image,
                         VkImageLayout written_layout, std::span<const std::size_t> feeds) noexcept;
    // The worker is lost for `reason` and the job's slot retires (a JobFailed event names it:
    // lose_worker's, or this one's when the worker was lost already).
    void fail_job(Worker& worker, const WorkerJob& job, const std::string& reason) noexcept;
    // The job failed alone (`why`; `code` WorkloadFailed: its workload's record() threw): its
    // slot goes back to Free, the task counts it, and a JobFailed event names its generation
    // (with TaskStopped when it was the last failure the task allows in a row).
    void workload_failed(const WorkerJob& job, const std::string& why,
                         TaskError code = TaskError::WorkloadFailed) noexcept;

    CompletionTracker& m_completion;
    LinkFailures& m_links;
    const TimelineSemaphore& m_reads;
    InputCopier& m_inputs;
    TraceLog& m_trace;
    const std::atomic<std::int64_t>& m_timeout_ms;
    std::uint32_t m_max_failures;
};

} // namespace tandem::detail
