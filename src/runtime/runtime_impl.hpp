// RuntimeImpl: the state behind tandem::Runtime. It owns the instance, the primary and worker
// devices, the workers (and their threads), the primary timeline the application signals, the
// trace log, the task table, the retire list, and the runtime's parts, each with its own
// contract:
//   TaskTable         (task_table.hpp)         the tasks by id, no fixed capacity, ids never reused
//   Task              (task.hpp)               one task: its instances, its counters, its state
//   TaskInstance      (task_instance.hpp)      a task's objects on one device
//   TaskPreparer      (task_preparer.hpp)      the preparation thread and its queue
//   JobPipeline       (job_pipeline.hpp)       a job from submit to the transport
//   CompletionTracker (completion_tracker.hpp) pump, the completion thread, losing a worker,
//                                              retiring what left use, the shutdown drain
//   LeaseTable        (lease_table.hpp)        leases on an instance's outputs
//   InputCopier       (task_inputs.hpp)        a submit's inputs copied on the primary
//   TaskGraph         (task_graph.hpp)         chains: the links between tasks, where a chain
//                                              is placed, pins and feeds; the chain lock
//   chains            (task_chains.hpp)        a job's inputs that are other tasks' outputs
//   DevicePairs       (device_pairs.hpp)       each device pair, both directions: its paths'
//                                              health, bridges, every stream opened on it
//   LinkFailures      (link_failures.hpp)      a link whose path failed
//   Scheduler         (scheduler.hpp)          where auto tasks run, trial jobs, calibration,
//                                              the placement calls; the schedule lock, and the
//     LinkFallback    (link_fallback.hpp)      a task whose path failed, prepared again
//   RetireList        (sync/retire_list.hpp)   objects freed once the GPU passed them
// RuntimeImpl itself answers the public calls but the scheduler's (task_calls.cpp: every call
// that takes a TaskId checks the task's state once, under its mutex), makes instances, and
// sequences start-up and shutdown (runtime_impl.cpp).
//
// Lock order: the chain lock (a reconfigure that makes chains: their check and links); then
// the schedule lock (scheduler, fallback, registration); then one task's mutex; then one of its
// instances' mutexes (a consumer's may be followed by a producer's instance mutex: chains have
// no cycles); then a worker's queue lock or the preparer's lock. The application's per-frame calls
// never take the schedule lock (pump only tries it), so they never wait for a registration or a
// calibration on another thread.
//
// Nothing the application thread calls (submit, pump, acquire, release, stats, unregister)
// reads, waits on or locks against a worker's device: worker progress arrives through the
// worker's completion watcher as host memory (Worker::completed_work), GPU times as host memory
// the jobs' own commands wrote, an instance's preparation runs on the preparation thread, and
// retired objects are destroyed on the completion thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "core/log.hpp"
#include "core/placement.hpp"
#include "runtime/completion_tracker.hpp"
#include "runtime/device_pairs.hpp"
#include "runtime/event_queue.hpp"
#include "runtime/input_loans.hpp"
#include "runtime/job_pipeline.hpp"
#include "runtime/lease_table.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/task.hpp"
#include "runtime/task_chains.hpp"
#include "runtime/task_graph.hpp"
#include "runtime/task_inputs.hpp"
#include "runtime/task_preparer.hpp"
#include "runtime/task_stats.hpp"
#include "runtime/task_table.hpp"
#include "runtime/trace_log.hpp"
#include "runtime/worker.hpp"
#include "sync/retire_list.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/runtime.hpp"

namespace tandem::detail {

class Scheduler;

class RuntimeImpl {
public:
    explicit RuntimeImpl(const RuntimeOptions& options);
    RuntimeImpl(const EmbedInfo& embed, const RuntimeOptions& options);
    ~RuntimeImpl();
    RuntimeImpl(const RuntimeImpl&) = delete;
    RuntimeImpl& operator=(const RuntimeImpl&) = delete;

    // The public calls (tandem::Runtime has their contracts).
    [[nodiscard]] TaskId register_task(const TaskDesc& desc, bool wait);
    TaskError unregister_task(TaskId id) noexcept;
    TaskError reconfigure(TaskId id, const TaskDesc& desc);
    [[nodiscard]] SubmitResult submit(TaskId id, std::span<const std::byte> bytes,
                                      std::span<const InputImage> inputs) noexcept;
    void pump() noexcept;
    void leave_devices_open() noexcept;
    // Stops every thread, then waits until `deadline` for the GPU work in flight to finish, then,
    // with `halt_bridges`, ends the bridges' threads too: Runtime::stop_for_exit, and the
    // destructor's first step (the bridges ended with their links).
    void stop(std::chrono::steady_clock::time_point deadline, bool halt_bridges) noexcept;
    // `on_worker`: Runtime::acquire_on_worker's lease (the image the work wrote on its worker).
    [[nodiscard]] AcquireResult acquire(TaskId id, bool on_worker) noexcept;
    TaskError release(const Lease& lease, std::uint64_t value) noexcept;
    [[nodiscard]] TaskStats stats(TaskId id) const;
    [[nodiscard]] EventQueue& events() noexcept { return m_events; }
    [[nodiscard]] RuntimeResources resources() const;
    [[nodiscard]] VkSemaphore primary_timeline() const noexcept { return m_reads->handle(); }
    [[nodiscard]] VkSemaphore input_timeline() const noexcept {
        return m_input_copies->timeline().handle();
    }
    // True when the inputs' copies are recorded and submitted on the copier's own thread.
    [[nodiscard]] bool input_copies_deferred() const noexcept { return m_input_copies->deferred(); }

    // Throws Error for what is wrong with the description itself (size, slots, rate, an unknown
    // workload name, an unknown forced transfer path). Returns the factory of the workload it
    // names (empty with a TaskDesc::factory).
    WorkloadFactory check_description(const TaskDesc& desc) const;
    // A new instance of `task` with `desc`'s shape on the worker of adapter `device` (or where
    // desc's manual placement says when unset), queued for preparation, in task.instances.
    // Caller holds task.mutex. Throws Error (no such device) or std::bad_alloc.
    TaskInstance& add_instance(Task& task, const TaskDesc& desc,
                               std::optional<std::uint32_t> device);
    // The worker a manual placement names (never auto). Throws Error.
    [[nodiscard]] Worker& place(const TaskDesc& desc) const {
        return m_workers.place(desc.placement, m_adapters);
    }
    // Takes `instance` out of use (Task::retire), cancelling its preparation if it is still
    // being prepared. Caller holds task.mutex. Throws std::bad_alloc.
    void discard(Task& task, TaskInstance* instance);
    // `next`, just added, replaces the task's active instance: at once when that one was never
    // prepared (nothing of it was shown: true), else as the pending one of `kind` (false).
    // Caller holds task.mutex. Throws std::bad_alloc.
    bool take_over(Task& task, TaskInstance& next, PendingKind kind);
    // Waits until the instance's preparation ended; rethrows what it threw.
    void wait_prepared(const TaskInstance& instance) { m_preparer->wait_prepared(instance); }
    // The completion part of pump() alone (for the scheduler's calibration loop).
    void pump_completions() noexcept { m_completion->pump(); }
    [[nodiscard]] const CompletionTracker& completion() const noexcept { return *m_completion; }

    // The placement of auto tasks, and the calls about it (placement, calibrate, ...).
    [[nodiscard]] Scheduler& scheduler() const noexcept { return *m_scheduler; }
    // Where jobs are taken into slots (a submit's, a trial's) and run.
    [[nodiscard]] JobPipeline& jobs() const noexcept { return *m_jobs; }
    // The application's loans of input images (lend_inputs, return_inputs).
    [[nodiscard]] InputLoans& loans() const noexcept { return *m_loans; }
    // Where the runtime's messages go: each public call and each of its threads logs under it.
    [[nodiscard]] const Logger& logger() const noexcept { return *m_logger; }
    [[nodiscard]] const Device& primary() const noexcept { return *m_primary; }
    [[nodiscard]] const Instance& instance() const noexcept { return *m_instance; }
    // The primary's context and each worker device's (WorkerSet::workers, of).
    [[nodiscard]] const WorkerSet& workers() const noexcept { return m_workers; }
    // The runtime's device pairs: every cross-device stream, each pair's paths and bridges.
    [[nodiscard]] DevicePairs& pairs() const noexcept { return *m_pairs; }
    [[nodiscard]] const LinkFailures& links() const noexcept { return *m_links; }
    // The workloads tasks of this runtime may name (TaskDesc::workload).
    [[nodiscard]] WorkloadTable& workloads() noexcept { return m_workloads; }
    [[nodiscard]] TraceLog& trace() noexcept { return m_trace; }
    [[nodiscard]] const TraceLog& trace() const noexcept { return m_trace; }
    [[nodiscard]] const TaskTable& tasks() const noexcept { return m_tasks; }
    [[nodiscard]] std::chrono::milliseconds worker_timeout() const noexcept {
        return std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
    }
    [[nodiscard]] std::chrono::milliseconds first_job_timeout() const noexcept {
        return m_options.first_job_timeout;
    }

    // Tests only: the cuda-peer path copies with `copier` (DevicePairs::stand_in_for_cuda).
    // Before registering tasks. (The other test hooks are RuntimeProbe's.)
    void stand_in_for_cuda(StagingCopierFactory copier) {
        m_pairs->stand_in_for_cuda(std::move(copier));
    }

private:
    // Opens the worker devices and the primary timeline, makes the parts and starts the
    // threads (the workers', the completion thread, the preparation thread).
    void open_workers(const std::vector<std::uint32_t>& worker_adapters);
    // The application's submit on the task (its mutex held): the once-per-call state check.
    // The job's slot takes `holds` over when accepted.
    [[nodiscard]] SubmitResult submit_locked(Task& task, std::span<const std::byte> bytes,
                                             std::span<const InputImage> inputs, WorkerJob& job,
                                             SubmitHolds& holds) noexcept;
    // Unregister's part under the task's mutex; `links` takes the consumer's links (let go once
    // the mutex is not held).
    [[nodiscard]] TaskError unregister_locked(Task& task, DetachedLinks& links) noexcept;
    // Reconfigure's part under the task's mutex. Throws Error or std::bad_alloc.
    void reconfigure_locked(Task& task, const TaskDesc& desc,
                            std::optional<std::uint32_t> with_producers);

    // Declared in dependency order: destroyed (should a constructor throw) workers first, then
    // the parts, then the timeline and the devices they use, the instance last, the logger after
    // everything that may log. ~RuntimeImpl sequences the normal shutdown explicitly.
    std::shared_ptr<Logger> m_logger; // RuntimeOptions::log and log_level
    RuntimeOptions m_options;
    EventQueue m_events; // before every part that posts to it
    bool m_poll = false; // Tandem's threads may poll before sleeping (core/cpu.hpp may_poll)
    std::unique_ptr<Instance> m_instance;
    std::vector<Adapter> m_adapters;
    std::unique_ptr<Device> m_primary;
    // Embedded with no EmbedInfo::queue_mutex: the primary's main queue is Tandem's alone, and
    // the inputs' copies leave the application's thread (InputCopier).
    bool m_own_main_queue = false;
    std::vector<std::unique_ptr<Device>> m_worker_devices;
    std::unique_ptr<TimelineSemaphore> m_reads;  // signalled by the application
    std::unique_ptr<InputCopier> m_input_copies; // tasks' inputs copied at submit
    std::atomic<std::int64_t> m_timeout_ms{5000};
    TraceLog m_trace;
    WorkloadTable m_workloads;
    std::atomic<std::uint64_t> m_serials{0}; // instance serials (Lease::instance)

    TaskTable m_tasks;
    std::unique_ptr<RetireList> m_retire;
    std::unique_ptr<LeaseTable> m_leases;
    std::unique_ptr<DevicePairs> m_pairs;
    std::unique_ptr<LinkFailures> m_links;
    std::unique_ptr<TaskPreparer> m_preparer;
    std::unique_ptr<CompletionTracker> m_completion;
    std::unique_ptr<JobPipeline> m_jobs;
    std::unique_ptr<InputLoans> m_loans;
    WorkerSet m_workers; // the primary's own context first

    TaskGraph m_graph{*this}; // chains: the links between tasks, and the chain lock
    // The tasks it places, the schedule lock and the link fallback.
    std::unique_ptr<Scheduler> m_scheduler;
};

// The sentence of UnknownTask for `id`.
[[nodiscard]] std::string unknown_task(TaskId id);

// The instance that takes the task's submits now, or why none does (Preparing or Failed, counted
// as a submit's answer would be; a task stopped after `max_failures` failed jobs in a row): the
// state check submit and lend_inputs share. Caller holds the task's mutex. Throws only
// std::bad_alloc.
[[nodiscard]] TaskInstance* usable_instance(Task& task, std::uint32_t max_failures,
                                            SubmitResult& why);

// Tandem's own parts outside src/runtime (the trace export) and its tests reach the runtime's
// parts through this (not installed).
struct RuntimeAccess {
    [[nodiscard]] static RuntimeImpl& impl(Runtime& runtime) noexcept { return *runtime.m_impl; }
    [[nodiscard]] static const RuntimeImpl& impl(const Runtime& runtime) noexcept {
        return *runtime.m_impl;
    }
};

} // namespace tandem::detail
