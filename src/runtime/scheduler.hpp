// Scheduler: the runtime's placement of "auto" tasks (tandem/scheduler.hpp has the contract).
// It owns the cost model (a profile when SchedulerOptions::profile names one, refined by the
// timings the runtime measures) and the Placer (sched/placement.hpp: the rule, the margin, the
// hysteresis, capacity), and acts on the logical tasks: observes each registration's recent
// timings, runs trial jobs where a cost is unknown, decides, and registers a moving task on its
// new device (RuntimeImpl::register_instance: prepared on the preparation thread) before
// switching its submits there once that registration is prepared.
//
// Threads: every method runs under the caller's schedule lock (TaskRouter::m_schedule), so one
// at a time; step() is called from pump() and never blocks on a GPU.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/logical_task.hpp"
#include "sched/placement.hpp"
#include "tandem/scheduler.hpp"

namespace tandem::detail {

class RuntimeImpl;

class Scheduler {
public:
    // Loads the profile (throws Error when it cannot be read or describes other adapters).
    Scheduler(RuntimeImpl& runtime, const SchedulerOptions& options,
              std::optional<TransferPath> forced_path);

    // Where a new auto task starts: one decision over the known tasks and `task` (whose
    // registrations are still empty); the other tasks' moves in it are applied too.
    [[nodiscard]] std::uint32_t place_new(std::vector<LogicalTask*> tasks, LogicalTask& task);

    // A decision now (a manual task was registered: the loads and explanations include it).
    void refresh(const std::vector<LogicalTask*>& tasks);
    // One pump's part: settles moves whose registration is prepared, and when a decision is due
    // (the interval passed, or an active worker was lost) observes, runs trials and decides.
    void step(const std::vector<LogicalTask*>& tasks, std::chrono::steady_clock::time_point now);

    // Runtime::calibrate: blocks while `jobs` jobs run on each candidate device of `task`.
    [[nodiscard]] std::vector<DeviceCost> calibrate(const std::vector<LogicalTask*>& tasks,
                                                    LogicalTask& task,
                                                    std::span<const std::byte> snapshot,
                                                    std::uint32_t jobs);
    void observe_execute(LogicalTask& task, std::uint32_t device, double ms);

    // Trial jobs may run (they need the tasks' latest snapshots).
    [[nodiscard]] bool measures() const noexcept { return m_options.background_calibration; }
    [[nodiscard]] PlacementReport report(const std::vector<LogicalTask*>& tasks) const;
    // Decisions taken so far; any thread, without the schedule lock.
    [[nodiscard]] std::uint64_t decisions() const noexcept {
        return m_decisions.load(std::memory_order_relaxed);
    }
    // What the scheduler knows of `task` on each device now.
    [[nodiscard]] std::vector<DeviceCost> costs(const LogicalTask& task) const;

private:
    [[nodiscard]] std::vector<PlacementTask> placement_tasks(const std::vector<LogicalTask*>& tasks,
                                                             const LogicalTask* extra) const;
    // The one walk over the runtime's workers: every worker's adapter index, and the devices
    // that may run a task (the primary, then each worker neither lost nor refused). Notes in
    // m_lost the workers lost since the last walk.
    struct Devices {
        std::vector<std::uint32_t> workers;
        std::vector<std::uint32_t> live;
    };
    [[nodiscard]] Devices scan_devices();
    [[nodiscard]] DeviceSet device_set();
    void observe(const std::vector<LogicalTask*>& tasks);
    void run_trials(const std::vector<LogicalTask*>& tasks);
    void decide(const std::vector<LogicalTask*>& tasks);
    void apply(LogicalTask& task, std::uint32_t chosen);
    // Makes a prepared pending registration active; drops a failed one.
    void settle(LogicalTask& task);
    // The registration of `task` on `device`, registered now (prepared off the thread) if
    // there is none. Throws Error.
    std::size_t ensure_registered(LogicalTask& task, std::uint32_t device);
    void refuse(LogicalTask& task, std::size_t reg, const std::string& reason);
    [[nodiscard]] bool needs_measuring(const LogicalTask& task, std::uint32_t device) const;
    [[nodiscard]] std::optional<TransferPath> path_of(std::uint32_t worker) const;
    // Negotiates each pair's path again when a path was dropped since the last time.
    void refresh_paths();
    [[nodiscard]] std::uint32_t primary() const;

    RuntimeImpl* m_runtime;
    SchedulerOptions m_options;
    std::optional<TransferPath> m_forced_path;
    // Each worker -> primary pair, and the path its links negotiate now (refresh_paths).
    std::vector<PairInfo> m_pairs;
    std::map<std::uint32_t, TransferPath> m_paths;
    bool m_pairs_priced = false;
    std::uint64_t m_drops_priced = 0; // PathHealth::drops() when m_paths was made
    std::unique_ptr<CostModel> m_model;
    std::unique_ptr<Placer> m_placer;
    PlacementPlan m_plan;
    std::vector<std::string> m_failures;
    std::string m_model_note;
    std::atomic<std::uint64_t> m_decisions{0};
    std::vector<std::uint32_t> m_lost; // lost workers seen so far
    std::chrono::steady_clock::time_point m_last_decision{};
};

} // namespace tandem::detail
