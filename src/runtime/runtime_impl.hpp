// RuntimeImpl: the state behind tandem::Runtime, as the thin owner of what the runtime's parts
// share: the instance, the primary and worker devices, the workers (and their threads), the
// primary timeline the application signals, the trace log, the worker timeout, and the parts
// themselves, each with its own contract:
//   TaskRegistry      (task_registry.hpp)      the table of registrations, lookup by id
//   TaskPreparer      (task_preparer.hpp)      the preparation thread and its queue
//   JobPipeline       (job_pipeline.hpp)       submit and each job on the worker's threads
//   CompletionTracker (completion_tracker.hpp) pump, the completion thread, losing a worker,
//                                              the shutdown drain
//   LeaseTable        (lease_table.hpp)        acquire, release and the reads they wait for
//   LinkFailures      (link_failures.hpp)      the paths' health, a link whose path failed
//   JobTimer          (core/job_timer.hpp)     each registration's GPU timestamps
// RuntimeImpl itself places tasks, checks descriptions, answers statistics (task_stats.hpp)
// and test hooks, and sequences start-up and shutdown. Public methods mirror tandem::Runtime and
// keep its contract (thread-safe; submit/pump/acquire/release never block on a GPU and never
// throw).
//
// Lock order: the registration lock (TaskRegistry) is the outermost; a task's mutex may be
// taken before a worker's queue lock, never after; the worker's threads take a task's mutex
// only while holding nothing else; the preparation lock and a job timer's lock are taken with
// nothing else held.
//
// Nothing the application thread calls (submit, pump, acquire, release, stats, pulse) reads,
// waits on or locks against a worker's device: worker progress arrives through the worker's
// completion watcher as host memory (Worker::completed_work), GPU times as host memory the
// jobs' own commands wrote, and a task's preparation (workload pipelines, uploads, transfer
// resources) runs on the runtime's preparation thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "core/placement.hpp"
#include "runtime/completion_tracker.hpp"
#include "runtime/job_pipeline.hpp"
#include "runtime/lease_table.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/task_preparer.hpp"
#include "runtime/task_registry.hpp"
#include "runtime/task_state.hpp"
#include "runtime/task_stats.hpp"
#include "runtime/trace_log.hpp"
#include "runtime/worker.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/runtime.hpp"

namespace tandem::detail {

// TaskDesc::placement read as a Placement (core/placement.hpp); text of no other form is a
// device selector. Empty: auto.
[[nodiscard]] Placement task_placement(const TaskDesc& desc);

class RuntimeImpl {
public:
    static constexpr std::size_t k_max_tasks = TaskRegistry::k_capacity;

    explicit RuntimeImpl(const RuntimeOptions& options);
    RuntimeImpl(const EmbedInfo& embed, const RuntimeOptions& options);
    ~RuntimeImpl();
    RuntimeImpl(const RuntimeImpl&) = delete;
    RuntimeImpl& operator=(const RuntimeImpl&) = delete;

    // Throws Error for what is wrong with the description itself (size, slots, an unknown
    // workload name, an unknown forced transfer path). Returns the factory of the workload it
    // names (empty with a TaskDesc::factory).
    WorkloadFactory check_description(const TaskDesc& desc) const;
    // Registers one device's instance of a task: on `adapter` when given, else where
    // desc.placement says (place()); its generations come from `generations` (shared by the
    // registrations of one logical task). The id is usable at once: the task is prepared on the
    // preparation thread and answers Preparing until then. Throws Error.
    TaskId register_instance(const TaskDesc& desc, std::optional<std::uint32_t> adapter,
                             std::shared_ptr<GenerationCounter> generations);
    // Waits until the registration is prepared; rethrows what its preparation threw.
    void wait_prepared(TaskId id);
    SubmitResult submit(TaskId id, std::span<const std::byte> snapshot) noexcept {
        return m_jobs->submit(id, snapshot);
    }
    void pump() noexcept { m_completion->pump(); }
    // A lease on the registration's newest output when its generation is at least `at_least`.
    std::optional<Lease> acquire(TaskId id, std::uint64_t at_least = 0) noexcept {
        return m_leases->acquire(id, at_least);
    }
    // False (and nothing changed) when `lease` (lease.task: this registration) is not held.
    bool release(const Lease& lease, std::uint64_t primary_value) noexcept {
        return m_leases->release(lease, primary_value);
    }
    [[nodiscard]] VkSemaphore primary_timeline() const noexcept { return m_reads->handle(); }
    [[nodiscard]] TaskStats stats(TaskId id) const;
    // What a scheduler polls every frame: stats()'s counters, newest generation and loss, with
    // each stage's latency as the median of its newest `recent` samples instead of percentiles
    // over every sample (which sort them all). Cheap: copies at most `recent` values per stage.
    [[nodiscard]] TaskPulse pulse(TaskId id, std::size_t recent = 16) const;
    // The registration's GPU time alone (stats()'s gpu_timed and gpu_us).
    [[nodiscard]] TaskGpuTime gpu_time(TaskId id) const;

    [[nodiscard]] const Device& primary() const noexcept { return *m_primary; }
    [[nodiscard]] const Instance& instance() const noexcept { return *m_instance; }
    [[nodiscard]] std::vector<const Worker*> workers() const;
    [[nodiscard]] const Worker& task_worker(TaskId id) const;
    [[nodiscard]] std::string task_transfer_path(TaskId id) const;
    // The paths each pair may still use (null in a build without src/transfer).
    [[nodiscard]] PathHealth* path_health() const noexcept { return m_links->health(); }
    // Transfer paths (LinkFailures). Whether the registration's link failed for its path (not
    // its device), and why; the paths dropped for its (device, primary) pair.
    [[nodiscard]] bool link_failed(TaskId id) const noexcept { return m_links->failed(id); }
    [[nodiscard]] std::string link_failure(TaskId id) const { return m_links->failure(id); }
    [[nodiscard]] std::vector<DroppedTransferPath> dropped_paths(TaskId id) const {
        return m_links->dropped_paths(id);
    }
    // The workloads tasks of this runtime may name (TaskDesc::workload).
    [[nodiscard]] WorkloadTable& workloads() noexcept { return m_workloads; }
    [[nodiscard]] TraceLog& trace() noexcept { return m_trace; }
    [[nodiscard]] const TraceLog& trace() const noexcept { return m_trace; }

    // Test hooks.
    // The job of `generation` waits on the worker's thread until release_held(task).
    void hold_generation(TaskId id, std::uint64_t generation);
    void release_held(TaskId id);
    // The next worker submit of the task's worker reports VK_ERROR_DEVICE_LOST.
    void force_device_lost(TaskId id);
    // The cuda-peer path copies with `copier` (TaskPreparer::stand_in_for_cuda). Before
    // registering tasks.
    void stand_in_for_cuda(StagingCopierFactory copier) {
        m_preparer->stand_in_for_cuda(std::move(copier));
    }
    [[nodiscard]] std::chrono::milliseconds worker_timeout() const noexcept {
        return std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
    }
    void set_worker_timeout(std::chrono::milliseconds timeout) noexcept {
        m_timeout_ms.store(timeout.count(), std::memory_order_relaxed);
    }
    [[nodiscard]] std::vector<SlotState> slot_states(TaskId id) const;

private:
    // Opens the worker devices and the primary timeline, makes the parts and starts the
    // threads (the workers', the completion thread, the preparation thread).
    void open_workers(const std::vector<std::uint32_t>& worker_adapters);
    // The registration `id`; throws Error when there is none.
    [[nodiscard]] Task& get(TaskId id) const;
    [[nodiscard]] Worker& place(const TaskDesc& desc);
    // The primary's context or the worker on adapter `adapter`; null when none.
    [[nodiscard]] Worker* worker_of(std::uint32_t adapter) const noexcept;

    // Declared in dependency order: destroyed (should a constructor throw) workers first, then
    // the parts, then the timeline and the devices they use, the instance last. ~RuntimeImpl
    // sequences the normal shutdown explicitly.
    RuntimeOptions m_options;
    bool m_poll = false; // Tandem's threads may poll before sleeping (core/cpu.hpp may_poll)
    std::unique_ptr<Instance> m_instance;
    std::vector<Adapter> m_adapters;
    std::unique_ptr<Device> m_primary;
    std::vector<std::unique_ptr<Device>> m_worker_devices;
    std::unique_ptr<TimelineSemaphore> m_reads; // signalled by the application
    std::atomic<std::int64_t> m_timeout_ms{5000};
    TraceLog m_trace;
    WorkloadTable m_workloads;

    TaskRegistry m_tasks;
    std::unique_ptr<LeaseTable> m_leases;
    std::unique_ptr<LinkFailures> m_links;
    std::unique_ptr<CompletionTracker> m_completion;
    std::unique_ptr<JobPipeline> m_jobs;
    std::unique_ptr<TaskPreparer> m_preparer;
    std::vector<std::unique_ptr<Worker>> m_workers; // [0]: the primary's own context
};

} // namespace tandem::detail
