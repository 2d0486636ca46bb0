// RuntimeImpl: the state behind tandem::Runtime: instance, primary and worker devices, the
// workers' threads, the tasks, the primary timeline the application signals, the trace log, and
// the test hooks. Its code is in five files by concept: runtime_impl.cpp (set-up, shutdown,
// leases, statistics), runtime_tasks.cpp (placement, registration, preparation),
// runtime_jobs.cpp (submit and the jobs on the worker's threads), runtime_completion.cpp (the
// pump and the completion thread), runtime_link_failure.cpp (a transfer path that fails in use).
// Public methods mirror tandem::Runtime and keep its contract (thread-safe;
// submit/pump/acquire/release never block on a GPU and never throw).
//
// Lock order: a task's mutex may be taken before a worker's queue lock, never after. The
// worker's thread takes a task's mutex only while holding nothing else.
//
// Nothing the application thread calls (submit, pump, acquire, release, stats, pulse) reads,
// waits on or locks against a worker's device: worker progress arrives through the worker's
// completion watcher as host memory (Worker::completed_work), and a task's preparation
// (workload pipelines, uploads, transfer resources) runs on the runtime's preparation thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "core/placement.hpp"
#include "runtime/task_state.hpp"
#include "runtime/trace_log.hpp"
#include "runtime/worker.hpp"
#include "sync/pair_bridge.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/runtime.hpp"

namespace tandem::detail {

// Microseconds from `from` to `to`.
[[nodiscard]] inline double micros(Clock::time_point from, Clock::time_point to) noexcept {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

// The fault-injection context of a worker's job submissions (force_device_lost).
[[nodiscard]] inline std::string worker_submit_context(const Worker& worker) {
    return "worker submit " + worker.label();
}

// TaskDesc::placement read as a Placement (core/placement.hpp); text of no other form is a
// device selector. Empty: auto.
[[nodiscard]] Placement task_placement(const TaskDesc& desc);

struct TaskPulse {
    TaskStats counters;          // the latency fields hold only counts
    double worker_submit_us = 0; // medians of the newest samples, from each request
    double worker_done_us = 0;
    double ready_us = 0;
};

class RuntimeImpl {
public:
    static constexpr std::size_t k_max_tasks = 256;

    explicit RuntimeImpl(const RuntimeOptions& options);
    RuntimeImpl(const EmbedInfo& embed, const RuntimeOptions& options);
    ~RuntimeImpl();
    RuntimeImpl(const RuntimeImpl&) = delete;
    RuntimeImpl& operator=(const RuntimeImpl&) = delete;

    // Throws Error for what is wrong with the description itself (size, slots, an unknown
    // workload name, an unknown forced transfer path).
    void check_description(const TaskDesc& desc) const;
    // Registers one device's instance of a task: on `adapter` when given, else where
    // desc.placement says (place()); its generations come from `generations` (shared by the
    // registrations of one logical task). The id is usable at once: the task is prepared on the
    // preparation thread and answers Preparing until then. Throws Error.
    TaskId register_instance(const TaskDesc& desc, std::optional<std::uint32_t> adapter,
                             std::shared_ptr<GenerationCounter> generations);
    // Waits until the registration is prepared; rethrows what its preparation threw.
    void wait_prepared(TaskId id);
    SubmitResult submit(TaskId id, std::span<const std::byte> snapshot) noexcept;
    void pump() noexcept;
    // A lease on the registration's newest output when its generation is at least `at_least`.
    std::optional<Lease> acquire(TaskId id, std::uint64_t at_least = 0) noexcept;
    // False (and nothing changed) when `lease` (lease.task: this registration) is not held.
    bool release(const Lease& lease, std::uint64_t primary_value) noexcept;
    [[nodiscard]] VkSemaphore primary_timeline() const noexcept { return m_reads->handle(); }
    [[nodiscard]] TaskStats stats(TaskId id) const;
    // What a scheduler polls every frame: stats()'s counters, newest generation and loss, with
    // each stage's latency as the median of its newest `recent` samples instead of percentiles
    // over every sample (which sort them all). Cheap: copies at most `recent` values per stage.
    [[nodiscard]] TaskPulse pulse(TaskId id, std::size_t recent = 16) const;

    [[nodiscard]] const Device& primary() const noexcept { return *m_primary; }
    [[nodiscard]] const Instance& instance() const noexcept { return *m_instance; }
    [[nodiscard]] std::vector<const Worker*> workers() const;
    [[nodiscard]] const Worker& task_worker(TaskId id) const;
    [[nodiscard]] std::string task_transfer_path(TaskId id) const;
    // Transfer paths (runtime_link_failure.cpp). Whether the registration's link failed for its
    // path (not its device), and why; the paths dropped for its (device, primary) pair.
    [[nodiscard]] bool link_failed(TaskId id) const noexcept;
    [[nodiscard]] std::string link_failure(TaskId id) const;
    [[nodiscard]] std::vector<DroppedTransferPath> dropped_paths(TaskId id) const;
    [[nodiscard]] TraceLog& trace() noexcept { return m_trace; }
    [[nodiscard]] const TraceLog& trace() const noexcept { return m_trace; }

    // Test hooks.
    // The job of `generation` waits on the worker's thread until release_held(task).
    void hold_generation(TaskId id, std::uint64_t generation);
    void release_held(TaskId id);
    // The next worker submit of the task's worker reports VK_ERROR_DEVICE_LOST.
    void force_device_lost(TaskId id);
    [[nodiscard]] std::chrono::milliseconds worker_timeout() const noexcept {
        return std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
    }
    void set_worker_timeout(std::chrono::milliseconds timeout) noexcept {
        m_timeout_ms.store(timeout.count(), std::memory_order_relaxed);
    }
    [[nodiscard]] std::vector<SlotState> slot_states(TaskId id) const;

private:
    void open_workers(const std::vector<std::uint32_t>& worker_adapters);
    void start_worker_threads();
    // Builds the task's workload, transport and slot resources (preparation thread).
    void prepare(Task& task);
    void preparation_loop() noexcept;
    // Stops the preparation thread; tasks still queued fail (shutdown).
    void stop_preparation() noexcept;
    // The worker saw the job's GPU work complete (its watcher thread).
    void job_completed(const WorkerJob& job) noexcept;
    [[nodiscard]] Task* find(TaskId id) const noexcept;
    [[nodiscard]] Worker& place(const TaskDesc& desc);
    // The primary's context or the worker on adapter `adapter`; null when none.
    [[nodiscard]] Worker* worker_of(std::uint32_t adapter) const noexcept;
    // The job thread's part: records and submits the job's work, then queues submit_transfer
    // on the worker's transfer thread.
    void process_job(Worker& worker, const WorkerJob& job) noexcept;
    void submit_transfer(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                         Clock::time_point t_submit, std::uint64_t work_value,
                         VkSemaphoreSubmitInfo signal, VkImage worker_image) noexcept;
    void drop_job(const WorkerJob& job) noexcept;
    // The worker is lost for `reason` and the job's slot retires.
    void fail_job(Worker& worker, const WorkerJob& job, const std::string& reason) noexcept;
    void pump_task(Task& task, std::uint64_t reads_value) noexcept;
    void lose_worker(Worker& worker, const std::string& reason) noexcept;
    // The task's transport failed: true when its path is to blame (dropped for the pair, the
    // task's link retired: link_failed), false when its worker's device is (the caller loses
    // the worker). `from_pump`: the pump noticed it (a bridge timeout is then the device's).
    [[nodiscard]] bool retire_failed_link(Task& task, bool from_pump) noexcept;
    // Ready -> Free, or Retired when the worker is lost. Caller holds task.mutex.
    void recycle(Task& task, std::uint32_t slot) noexcept;
    // Waits, bounded by the timeout, for every task's last known GPU work; false when some
    // wait did not end in success.
    [[nodiscard]] bool drain() noexcept;
    // The completion thread: observes completions (what pump() does) without the application,
    // so outputs are published and slots recycled at the rate the devices deliver them,
    // whatever the application's frame rate. It polls the primary's counters with a sleep that
    // grows while nothing completes (never blocking in vkWaitSemaphores).
    void completion_loop() noexcept;
    void pump_all() noexcept;

    RuntimeOptions m_options;
    bool m_poll = false; // Tandem's threads may poll before sleeping (core/cpu.hpp may_poll)
    std::unique_ptr<Instance> m_instance;
    std::vector<Adapter> m_adapters;
    std::unique_ptr<Device> m_primary;
    std::vector<std::unique_ptr<Device>> m_worker_devices;
    std::vector<std::unique_ptr<Worker>> m_workers; // [0]: the primary's own context
    PairBridgeRegistry m_bridges; // one host bridge thread per worker -> primary pair, shared
    std::unique_ptr<TimelineSemaphore> m_reads; // signalled by the application
    std::atomic<std::uint64_t> m_reads_seen{0}; // last value pump() observed
    std::atomic<std::int64_t> m_timeout_ms{5000};
    TraceLog m_trace;
    std::uint32_t m_trace_app = 0;

    std::mutex m_register_mutex;
    std::vector<std::unique_ptr<Task>> m_tasks; // capacity k_max_tasks, never reallocates
    // Tasks [0, m_task_count) are fully built; release on registration, acquire on lookup.
    std::atomic<std::size_t> m_task_count{0};

    std::atomic<bool> m_stop_completion{false};
    std::thread m_completion;

    // Tasks waiting for the preparation thread, FIFO; m_prepared_cv tells blocking
    // registrations that a preparation ended.
    std::mutex m_prepare_mutex;
    std::condition_variable m_prepare_cv;
    std::condition_variable m_prepared_cv;
    std::deque<Task*> m_to_prepare;
    bool m_stop_prepare = false;
    std::thread m_preparer;

    // Which paths of each pair passed their self-test and which were dropped (null without
    // src/transfer); preparations consult it, retire_failed_link drops paths in it.
    std::shared_ptr<PathHealth> m_path_health = make_path_health();
};

} // namespace tandem::detail
