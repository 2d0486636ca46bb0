// AutoPlacer: tasks on a running Runtime whose device the scheduler (sched/placement.hpp) may
// choose and change while they run. The runtime places a task once, at registration; to move a
// task the AutoPlacer registers it again on the new device (one runtime TaskId per (task,
// device), made the first time the task is placed there), routes submits to the active one and
// hands out the newest output it can lease: the active device's once it delivered a generation
// after the task moved there, until then the output shown before (the previous device's last
// one), so a display surface never goes blank. A lost worker's last output stays leasable.
//
// Once per primary frame decide() reads the runtime's per-task statistics (lost workers; job
// timings for the cost model), asks the Placer and registers auto tasks where it put them. The
// first decision registers and waits (set-up); a later move registers in the background
// (Runtime::register_task_async: pipelines and uploads on a Tandem thread, never in a frame)
// and the task keeps running where it was until the new registration is prepared; only then
// does it switch, so a move costs the frame nothing.
// Tasks with a manual placement are registered at add() where they asked and never moved; they
// count in the devices' loads. Execute timings measured outside the runtime (a workload's GPU
// timestamps) come in through observe_execute(); without them the runtime's submit -> worker
// done latency stands in. Delivery (worker done -> ready on the primary) is observed from the
// runtime's recent latencies (RuntimeImpl::pulse: the median of each stage's newest samples,
// cheap enough for every frame) in each frame in which a registration published new outputs,
// once it published more than two (the first ones carry uploads and pipeline warm-up).
//
// Threads: the application's frame loop only (not thread-safe). Lifetime: the Runtime and the
// CostModel outlive it; register_task failures at add() or on a move throw / are reported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sched/cost_model.hpp"
#include "sched/placement.hpp"
#include "tandem/runtime.hpp"

namespace tandem::detail {

struct AutoTask {
    // What the runtime registers. desc.name must be unique among the AutoPlacer's tasks;
    // desc.placement is used only when `automatic` is false.
    TaskDesc desc;
    bool automatic = true;
    WorkloadShape shape; // what the cost model predicts one update from
    double rate_hz = 30.0;
};

struct AutoOptions {
    PlacementOptions placement;
    // The runtime's forced transfer path (RuntimeOptions::transfer_path), if any. Without it the
    // cost model prices each worker's results over the path the runtime negotiates for the pair.
    std::optional<TransferPath> forced_path;
};

class AutoPlacer {
public:
    AutoPlacer(Runtime& runtime, CostModel& model, AutoOptions options = {});

    // Adds a task; a manual one is registered with the runtime now. Returns its index. Throws
    // Error (bad shape or rate, a duplicate name, what register_task throws).
    std::size_t add(const AutoTask& task);

    // One decision, once per primary frame and before the frame's submits: feeds the cost model
    // what the runtime measured since the last call, passes lost workers to the Placer, decides
    // and registers auto tasks on newly chosen devices. Never throws: a registration that fails
    // keeps the task where it was and excludes that device from auto placement from then on (see
    // failures()).
    const PlacementPlan& decide();
    // The last decision moved a task, or was the first.
    [[nodiscard]] bool changed() const noexcept { return m_changed; }
    [[nodiscard]] const PlacementPlan& plan() const noexcept { return m_plan; }

    // GPU time of one update of `task` on adapter `device` measured elsewhere.
    void observe_execute(std::size_t task, std::uint32_t device, double ms);

    [[nodiscard]] SubmitResult submit(std::size_t task, std::span<const std::byte> snapshot);
    // The output to show for `task` now (see the contract above); release it with release().
    [[nodiscard]] std::optional<Lease> acquire(std::size_t task);
    void release(const Lease& lease, std::uint64_t primary_value);

    [[nodiscard]] std::size_t size() const noexcept { return m_tasks.size(); }
    [[nodiscard]] const AutoTask& task(std::size_t task) const { return m_tasks.at(task).spec; }
    // The adapter the task runs on now, and its runtime id there (auto tasks: after decide()).
    [[nodiscard]] std::optional<std::uint32_t> device(std::size_t task) const;
    [[nodiscard]] std::optional<TaskId> active_id(std::size_t task) const;
    // Every (adapter, runtime id) the task was registered on, in registration order.
    [[nodiscard]] std::vector<std::pair<std::uint32_t, TaskId>>
    registrations(std::size_t task) const;
    // Workers seen lost so far.
    [[nodiscard]] const std::vector<std::uint32_t>& lost() const noexcept { return m_lost; }
    // Registrations that failed on a move, one sentence each.
    [[nodiscard]] const std::vector<std::string>& failures() const noexcept { return m_failures; }

private:
    struct Registration {
        std::uint32_t device = 0;
        TaskId id = 0;
        std::uint64_t ready_seen = 0;      // TaskStats::ready at the last observation
        std::uint64_t activated_after = 0; // newest generation when it last became active
        double submit_to_done_p50_ms = -1; // the last value fed to the model
    };
    struct Entry {
        AutoTask spec;
        std::vector<Registration> regs;
        std::optional<std::size_t> active;  // index into regs
        std::optional<std::size_t> pending; // a move's registration still being prepared
        std::optional<TaskId> shown;        // the registration whose output was shown last
        bool external_execute = false;      // observe_execute() was called for it
        std::vector<std::uint32_t> refused; // devices where registration failed
    };
    // The registration of `entry` on `device`, made now (waiting for it when `wait`) if there
    // is none. Throws Error.
    [[nodiscard]] std::size_t ensure_registered(Entry& entry, std::uint32_t device, bool wait);
    // Makes a prepared pending registration active; drops a failed one (the device is then
    // excluded, as for a registration that throws).
    void settle_pending(Entry& entry);
    void refuse_device(Entry& entry, std::uint32_t device, const std::string& reason);
    void observe_runtime();

    Runtime* m_runtime;
    CostModel* m_model;
    AutoOptions m_options;
    Placer m_placer;
    std::vector<Entry> m_tasks;
    std::map<std::uint32_t, TransferPath> m_paths; // worker -> the runtime's path to the primary
    std::vector<std::uint32_t> m_lost;
    std::vector<std::string> m_failures;
    PlacementPlan m_plan;
    bool m_changed = false;
};

} // namespace tandem::detail
