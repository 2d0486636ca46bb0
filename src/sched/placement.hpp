// Placement: which device runs each task, decided once per primary frame from the cost model.
// The rule: a task moves to a worker only when the primary time it frees (the gain) exceeds
// what moving costs (preparation + transfer + synchronisation + reintegration) by a margin;
// a task already placed stays unless another device is better by that margin (hysteresis), so
// placements do not flap. Every worker's load (sum of cost x rate) stays below its capacity;
// manual placements are kept; a lost worker's tasks move in the very next decision. Adapters that
// are openings of one physical device (equal device UUIDs) share one capacity: moving a task
// between them frees nothing, so no task moves between them for a gain (unless the DeviceSet
// asks to treat them as separate, and the explanation then says so).
// A chain is placed as a unit: a task `with` another takes that task's device, and the devices
// its chain may go to are weighed with every member's costs added (on the primary each one's
// execution, on a worker each one's delivery to the primary: the chain's transfers), so a chain
// moves when the whole of it pays. A member whose cost on a device is not known yet adds
// nothing there; one that cannot run there (a lost device, a manual placement elsewhere, no
// capacity) keeps the chain off it.
// Every decision carries an Explanation with the numbers behind it (JSON and text).
// Placer keeps the current placement between decisions and reads a CostModel it does not own
// (which must outlive it). Not thread-safe: the thread that owns the CostModel calls decide().
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/cost_model.hpp"
#include "sched/explanation.hpp"

namespace tandem::detail {

struct PlacementTask {
    std::string name; // unique among the tasks of one decision
    WorkloadShape shape;
    double rate_hz = 30.0; // updates per second the task needs
    // Auto, Primary, Worker (any worker: the scheduler picks which) or Device with its adapter
    // resolved (a Device without one is treated as not available).
    Placement request;
    // A chain placed as a unit: the task whose output this one reads, and whose device it takes
    // (empty, or a name not in the decision: placed on its own). Its request must be Auto.
    std::string with;
    // Why a task placed auto is held where it runs (`request` names that device): said as its
    // reason instead of a manual placement's. Empty for every other task.
    std::string held;
};

// Throws Error with a sentence naming the task when its rate is not a positive finite number
// or its shape is empty. Set-up code calls it; decide() tolerates bad specs (primary, with why).
void check_placement_task(const PlacementTask& task);

struct DeviceSet {
    std::uint32_t primary = 0;
    std::vector<std::uint32_t> workers;
    std::vector<std::uint32_t> lost;         // workers whose device was lost: never chosen
    std::optional<TransferPath> forced_path; // --transfer: use only this path
    // The path each worker's results take when the runtime has already chosen it (its
    // negotiated path); takes precedence over forced_path for that worker.
    std::map<std::uint32_t, TransferPath> worker_paths;
    // Each adapter's DeviceInfo::device_uuid (identify() fills it): adapters with equal UUIDs are
    // openings of one physical device. An adapter without an entry is a device of its own.
    std::map<std::uint32_t, Uuid> device_uuids;
    // Treat openings of one physical device as separate devices, each with a capacity of its
    // own (SchedulerOptions::openings_are_separate): for tests and demos that need moves between
    // them. The explanations say that they are treated so.
    bool openings_are_separate = false;

    // Fills device_uuids from the adapters' identities.
    void identify(const std::vector<DeviceInfo>& adapters);
    [[nodiscard]] std::optional<TransferPath> path_of(std::uint32_t worker) const;
    [[nodiscard]] bool is_lost(std::uint32_t device) const noexcept;
    [[nodiscard]] bool is_worker(std::uint32_t device) const noexcept;
    // Two different adapters that are openings of one physical device, however they are treated.
    [[nodiscard]] bool one_device(std::uint32_t a, std::uint32_t b) const;
    // one_device, and not treated as separate: one capacity, and a move between them frees
    // nothing.
    [[nodiscard]] bool share_capacity(std::uint32_t a, std::uint32_t b) const;
};

struct PlacementOptions {
    double capacity = 0.9;               // a worker may be busy this fraction of each second
    double margin_ms = 0.05;             // hysteresis margin per update: the larger of this...
    double margin_fraction = 0.10;       // ...and this fraction of the task's primary cost
    double primary_frame_rate_hz = 60.0; // to amortise per-update costs over primary frames
    double primary_base_frame_ms = 0.0;  // the application's own frame time, for the report
    std::size_t exhaustive_limit = 4096; // search every assignment when there are this few
    bool explain = true; // compose the reason sentences (the numbers are always kept)
};

class Placer {
public:
    explicit Placer(const CostModel& model, PlacementOptions options = {});

    // One decision, for one primary frame: never blocks, and bad input (an impossible rate, an
    // unknown device, a lost one) is placed and explained rather than thrown. Tasks absent from
    // `tasks` are forgotten; a task seen for the first time starts from the primary, so it too
    // needs the margin to move. Assignments are searched exhaustively when there are at most
    // options.exhaustive_limit of them, else greedily (largest gain first, each to its cheapest
    // device with capacity left). Capacity holds whenever some assignment keeps it; when none
    // does (requests for workers that cannot hold them all) the least overloaded one is taken.
    [[nodiscard]] PlacementPlan decide(const std::vector<PlacementTask>& tasks,
                                       const DeviceSet& devices);

    // Where each task runs now (after the last decision).
    [[nodiscard]] const std::map<std::string, std::uint32_t>& placements() const noexcept {
        return m_current;
    }
    [[nodiscard]] const PlacementOptions& options() const noexcept { return m_options; }

private:
    const CostModel* m_model;
    PlacementOptions m_options;
    std::map<std::string, std::uint32_t> m_current;
    std::uint64_t m_decisions = 0;
};

} // namespace tandem::detail
