// Task: one task as the application knows it, for its whole life (one TaskId, never reused). It
// owns its instances (runtime/task_instance.hpp), one per device it runs, ran or was measured on,
// and knows which one takes the application's submits (`active`), which one is being prepared
// to replace it (`pending`: a move, a fallback to another transfer path, a reconfiguration),
// and which one made the output shown last (acquire's never-blank, never-back-in-time rule). The
// task's state is checked once per call, under `mutex`.
//
// Instances that leave use (a move's old device once the new one shows, a reconfiguration's old
// shape, a failed link's, every instance of an unregistered task) go to `retiring` until they
// are quiescent, then to the runtime's RetireList, which frees them once the GPU passed them;
// their counters are kept in `retired`. A live task holds at most one usable instance per
// device (and, while it moves or is reconfigured, one more being prepared), so a task's objects
// are bounded by the runtime's adapters, not by how often it moved.
//
// Threads: `mutex` guards everything below it. The application's threads read and change it in
// submit/acquire/release/stats/unregister/reconfigure; the pump and the completion thread settle
// pending instances and retire quiescent ones; the scheduler (under the runtime's schedule lock)
// adds instances. Lock order: a task's mutex before its instances' mutexes, never after; never
// two tasks' mutexes at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/task_graph.hpp"
#include "runtime/task_instance.hpp"
#include "sched/cost_model.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

class EventQueue;

// Why the pending instance is being prepared.
// Feeds: prepared again on its device to send its output to a worker where a new consumer of
// it runs (a chain across two workers, runtime/chain_feeds.hpp).
enum class PendingKind { Move, Fallback, Reconfigure, Feeds };

// Counters of instances that left the task (summed into its statistics).
struct RetiredCounters {
    std::uint64_t ready = 0;
    std::uint64_t superseded = 0;
    std::uint64_t failed_jobs = 0;
    std::uint64_t trial_jobs = 0;
};

// What the task's counters say, for TaskStats (task_stats.hpp sums them with its instances').
// Under the task's mutex, but for the atomics, which its job threads add to.
struct TaskCounters {
    // The application's submits, by answer.
    std::uint64_t accepted = 0;
    std::uint64_t busy = 0; // Busy or Preparing
    std::uint64_t failed = 0;
    std::uint64_t moves = 0;
    std::uint64_t reconfigurations = 0;
    RetiredCounters retired;
    // How its inputs travelled (TaskStats::input_copies, input_sends, chained_reads).
    std::uint64_t input_copies = 0;
    std::uint64_t chained_reads = 0;
    std::uint64_t lent_submits = 0;           // submits that named lent images
    std::uint64_t lent_signalled_submits = 0; // of those, submitting nothing
    GpuTimes input_copy_gpu; // TaskStats::input_copy_gpu_us, added by InputCopier::copy
    std::atomic<std::uint64_t> input_sends{0};       // the job threads count them
    std::atomic<std::uint64_t> input_sends_early{0}; // of those, for a queued job (send_ahead)
};

// What preparing its instances left behind: read by submit (a fallback that failed), stats and
// the scheduler. Under the task's mutex.
struct TaskPreparation {
    // A fallback that could not be prepared (no path left): submits answer Failed with it.
    std::string fallback_error;
    // A reconfiguration whose new shape could not be prepared (the old shape runs on).
    std::string reconfigure_error;
    std::vector<std::uint32_t> refused;     // devices a move or a trial could not use
    std::vector<std::string> move_failures; // why, for the scheduler's report (it takes them)
};

// The instance whose output was handed out last, and the newest generation handed out; when a
// new instance took over before anything was, the old one's newest output (shown until the new
// one has its own). Under the task's mutex.
struct TaskShown {
    std::uint64_t serial = 0;
    std::uint64_t generation = 0;
};

// Job failures in the workload: each fails its job; max_consecutive_failures in a row stop the
// task (submits answer Failed, TaskError::Stopped, with the last sentence). Under the task's
// mutex.
struct TaskFailures {
    std::uint32_t in_a_row = 0;
    std::string last;
    bool stopped = false;
};

// The latest submitted snapshot, while trial jobs may need it (the scheduler sets `keep`; the
// bytes are under the task's mutex).
struct TaskSnapshot {
    std::atomic<bool> keep{false};
    std::vector<std::byte> bytes;
    bool held = false;
};

struct Task {
    Task(TaskId task_id, std::string task_key, const TaskDesc& task_desc, WorkloadShape task_shape,
         bool automatic_placement)
        : id(task_id), key(std::move(task_key)), desc(task_desc), shape(std::move(task_shape)),
          automatic(automatic_placement) {}

    const TaskId id;
    const std::string key; // the scheduler's name for it (unique among the runtime's tasks)
    // Where what happens to it on Tandem's threads is reported (the runtime's; set before the
    // task is published, never changed).
    EventQueue* events = nullptr;

    mutable std::mutex mutex;
    TaskDesc desc;       // the shape the active instance has (or will have, before the first)
    WorkloadShape shape; // what predicts its cost (from desc)
    bool automatic;      // placement auto: the scheduler decides
    // False once unregistered: every call answers UnknownTask. Written under `mutex`; atomic for
    // whoever may not take it: the scheduler deciding for a follower (which holds the follower's
    // mutex) reads its leader's (acquire).
    std::atomic<bool> live{true};
    // The adapter of `active` (k_no_device without one), for a follower's completion pass, which
    // may not take its leader's mutex: written with `active` (set_active), under `mutex`.
    static constexpr std::uint32_t k_no_device = ~0u;
    std::atomic<std::uint32_t> active_device{k_no_device};

    std::vector<std::unique_ptr<TaskInstance>> instances; // in use, being prepared, or idle
    TaskInstance* active = nullptr;                       // takes the application's submits
    TaskInstance* pending = nullptr;                      // being prepared to replace it
    PendingKind pending_kind = PendingKind::Move;
    TaskPreparation preparation;
    TaskShown shown;

    std::vector<std::unique_ptr<TaskInstance>> retiring; // left use, not yet quiescent

    std::uint64_t generations = 0;       // the application's: submit assigns ++generations
    std::uint64_t trial_generations = 0; // trial jobs' own, never seen by the application
    TaskCounters counts;

    TaskFailures failures;
    TaskSnapshot snapshot;
    bool external_execute = false; // the application reports execute times itself

    // Its place in the task graph (runtime/task_graph.hpp): chains.
    TaskLinks links;

    // Whether the scheduler places it: placement auto, not pinned, and not a consumer that stays
    // with its producers (one that reads several, or none that it follows). Caller holds mutex.
    void update_automatic() noexcept;
    // `active` and active_device together. Caller holds mutex.
    void set_active(TaskInstance* instance) noexcept;

    // True while its move is prepared but waits for its matching consumers to read every
    // generation it made where it runs: it leaves only then (CompletionTracker::settle_pending),
    // and its submits answer Preparing meanwhile (RuntimeImpl::usable). Caller holds mutex.
    [[nodiscard]] bool move_waits_for_consumers() const noexcept;

    // The usable instance on `device` (not link-failed), if any. Caller holds mutex.
    [[nodiscard]] TaskInstance* on(std::uint32_t device) const noexcept;
    // The instance (usable, idle or retiring) with `serial`; null when it is gone.
    [[nodiscard]] TaskInstance* find(std::uint64_t serial) const noexcept;
    // Moves `instance` out of `instances` into `retiring`, clearing `active` and `pending` where
    // they name it (the shown output's instance stays acquirable until another's replaces it).
    // Caller holds mutex.
    void retire(TaskInstance* instance);
    // `shape_desc` becomes the task's shape (a reconfiguration took effect). Caller holds mutex.
    void adopt_shape(const TaskDesc& shape_desc);
};

// What predicts a task's cost from a profile: its hint, else the built-in pattern's kind, else
// a kind no reference workload has (measured only).
[[nodiscard]] WorkloadShape workload_shape(const TaskDesc& desc);

} // namespace tandem::detail
