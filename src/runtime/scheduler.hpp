// Scheduler: the runtime's placement of auto tasks (tandem/scheduler.hpp has the contract). It
// owns the cost model (a profile when SchedulerOptions::profile names one, refined by the
// timings the runtime measures) and the Placer (sched/placement.hpp: the rule, the margin, the
// hysteresis, capacity), and acts on the tasks: observes each instance's recent timings, runs
// trial jobs where a cost is unknown (on an instance of the task on that device, never counted
// as the application's jobs), decides, and moves a task by making (or reusing) its instance on
// the new device the task's pending one: the completion pass makes it active once it is
// prepared (CompletionTracker::settle_pending).
//
// What it learns is keyed by TaskId: a task's measurements go with it (the first step() that no
// longer lists it), and a new task of the same name starts from none of them. Trial jobs run
// only for tasks placed auto.
//
// It keeps the list of tasks it places (every task registered, until the first pump() after it
// was unregistered) and the schedule lock: registration, decisions, calibration and the link
// fallback (LinkFallback, which the pump runs first) one at a time.
//
// Threads: the public calls (pump, placement, calibrate, observe_execute, decisions) from any
// thread, each taking the schedule lock itself (pump only tries it); registration's calls from
// RuntimeImpl::register_task, which holds it (lock_schedule). pump() never blocks on a GPU;
// calibrate() releases the lock while its trial jobs run. It touches a task's instances only
// under the task's mutex (an instance may leave use at any time: unregister_task needs no
// schedule lock).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "runtime/task.hpp"
#include "sched/placement.hpp"
#include "tandem/runtime.hpp"
#include "tandem/scheduler.hpp"

namespace tandem::detail {

class RuntimeImpl;
class LinkFallback;

using TaskList = std::vector<std::shared_ptr<Task>>;

class Scheduler {
public:
    // Loads the profile (throws Error when it cannot be read or describes other adapters).
    Scheduler(RuntimeImpl& runtime, const SchedulerOptions& options,
              std::optional<TransferPath> forced_path);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // The runtime's calls (tandem::Runtime has their contracts).
    // The pump's part: forgets the tasks unregistered since, starts the link fallback of tasks
    // whose link failed, and decides when a decision is due (the interval passed, or an active
    // worker was lost): observes, runs trials and decides. Skipped when a registration or a
    // calibration holds the lock (a later pump decides).
    void pump() noexcept;
    [[nodiscard]] PlacementReport placement() const;
    // Decisions taken so far; any thread, without the schedule lock.
    [[nodiscard]] std::uint64_t decisions() const noexcept {
        return m_decisions.load(std::memory_order_relaxed);
    }
    // Blocks while `jobs` trial jobs run on each candidate device of the task. Throws Error for
    // jobs below the minimum; NotMeasured when no device ran them. It makes the task's instances
    // under the schedule lock, then releases it while they are prepared and the trial jobs run
    // (so that registrations, placement() and observe_execute go on), and takes it again to feed
    // the timings to the cost model.
    [[nodiscard]] CalibrationResult calibrate(TaskId id, std::span<const std::byte> bytes,
                                              std::uint32_t jobs);
    TaskError observe_execute(TaskId id, std::uint32_t device, double ms) noexcept;

    // Registration (RuntimeImpl::register_task), under lock_schedule()'s lock:
    [[nodiscard]] std::unique_lock<std::mutex> lock_schedule() const {
        return std::unique_lock(m_schedule);
    }
    // Whether a live task placed here has `key` (a new task of that name takes another).
    [[nodiscard]] bool key_taken(const std::string& key) const;
    // Where a new auto task starts: one decision over the known tasks and `task` (which has no
    // instance yet); the other tasks' moves in it are applied too.
    [[nodiscard]] std::uint32_t place_new(Task& task);
    // Takes `task`, registered with its first instance, among the tasks it places; a manual one
    // is decided over at once (its load counts in the next decisions' explanation).
    void admit(std::shared_ptr<Task> task, bool automatic);

    // Trial jobs may run (they need the tasks' latest snapshots).
    [[nodiscard]] bool measures() const noexcept { return m_options.background_calibration; }
    // What the scheduler knows of `task` on each device now.
    [[nodiscard]] std::vector<DeviceCost> costs(const Task& task) const;

private:
    // A decision now over `tasks`.
    void refresh(const TaskList& tasks);
    // The pump's decision, when due.
    void step(const TaskList& tasks, std::chrono::steady_clock::time_point now);
    // A task left (unregistered): its measurements go now.
    void forget(TaskId task);
    [[nodiscard]] CalibrationResult calibrate_task(Task& task, std::span<const std::byte> bytes,
                                                   std::uint32_t jobs);
    struct CalibrationRun; // calibrate_task's trial jobs (scheduler.cpp)
    void observe_task(Task& task, std::uint32_t device, double ms);
    [[nodiscard]] PlacementReport report(const TaskList& tasks) const;
    // Takes a trial job of `bytes` on `instance` and queues it on its worker; false when it was
    // not taken (Busy, not prepared, the task gone, or a task with inputs). Holds nothing.
    bool submit_trial(Task& task, TaskInstance& instance, std::span<const std::byte> bytes);

    // The name the cost model and the Placer know `task` by: its key, made unique among the
    // tasks the scheduler holds measurements of (an unregistered task holds its name until
    // step() drops it), given on first sight and kept for the task's life.
    const std::string& key_of(const Task& task);
    // key_of's name where given, else the task's key (const callers: nothing is known of it).
    [[nodiscard]] const std::string& known_key(const Task& task) const;
    // Forgets every task not among `tasks` (unregistered ones the pump erased).
    void drop_unlisted(const TaskList& tasks);
    // Whether `task` runs calibrate() now: its trial jobs and timings are calibrate's alone.
    [[nodiscard]] bool calibrating(const Task& task) const {
        return m_calibrating.contains(task.id);
    }

    [[nodiscard]] std::vector<PlacementTask> placement_tasks(const TaskList& tasks,
                                                             const Task* extra) const;
    // The one walk over the runtime's workers: every worker's adapter index, and the devices
    // that may run a task (the primary, then each worker neither lost nor refused). Notes in
    // m_lost the workers lost since the last walk.
    struct Devices {
        std::vector<std::uint32_t> workers;
        std::vector<std::uint32_t> live;
    };
    [[nodiscard]] Devices scan_devices();
    [[nodiscard]] DeviceSet device_set();
    // Takes each task's move failures into the report, and the devices they refused.
    void collect_failures(const TaskList& tasks);
    void observe(const TaskList& tasks);
    void run_trials(const TaskList& tasks);
    void decide(const TaskList& tasks);
    void apply(Task& task, std::uint32_t chosen);
    void note_failure(std::string why, std::optional<std::uint32_t> device);
    [[nodiscard]] bool needs_measuring(const Task& task, std::uint32_t device) const;
    [[nodiscard]] std::optional<TransferPath> path_of(std::uint32_t worker) const;
    // Negotiates each pair's path again when a path was dropped since the last time.
    void refresh_paths();
    [[nodiscard]] std::uint32_t primary() const;
    // How long calibrate() waits for each of a device's steps (its preparation, a trial job's
    // start, its completion): enough for a first job, and for a worker to be seen lost.
    [[nodiscard]] std::chrono::milliseconds calibration_step_timeout() const;
    // Waits (pumping) until the instance `serial` of `task` is prepared; false when it failed or
    // left the task.
    bool wait_prepared(Task& task, std::uint64_t serial);

    RuntimeImpl* m_runtime;
    mutable std::mutex m_schedule;
    TaskList m_tasks; // every task registered and not yet seen unregistered by a pump
    std::unique_ptr<LinkFallback> m_fallback;
    SchedulerOptions m_options;
    std::optional<TransferPath> m_forced_path;
    // The path each worker's output stream would take on its pair now (refresh_paths).
    std::map<std::uint32_t, TransferPath> m_paths;
    bool m_pairs_priced = false;
    std::uint64_t m_drops_priced = 0; // DevicePairs::drops() when m_paths was made
    std::unique_ptr<CostModel> m_model;
    std::unique_ptr<Placer> m_placer;
    PlacementPlan m_plan;
    std::vector<std::string> m_failures; // the newest k_max_failures
    std::string m_model_note;
    std::atomic<std::uint64_t> m_decisions{0};
    std::vector<std::uint32_t> m_lost; // lost or refused workers seen so far
    std::chrono::steady_clock::time_point m_last_decision{};
    std::map<TaskId, std::string> m_keys; // key_of's names
    std::multiset<TaskId> m_calibrating;  // one entry per calibrate() running
};

} // namespace tandem::detail
