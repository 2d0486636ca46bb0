// Explanations of placement decisions: for each task, the numbers the decision saw on every
// device, each with its source (task: the profile measured this very task; profile: calibration
// or its reference workloads; measured: the runtime's own timings): the execute cost, the move's
// preparation and either its transfer, synchronisation and reintegration apart or the delivery
// measured as one figure, the gain and the margin; where it went and one or two sentences saying
// why (an adapter that is an opening of the same physical device as the primary, or as the task's
// device, frees nothing, and is named so). For the whole decision, each device's load (openings
// of one device counted together) and the primary's predicted frame time. What `tandem run
// --explain` prints and the JSON report carries (schema: docs/explanation-json.md).
// Plain values: copy freely, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/placement.hpp"
#include "sched/cost_model.hpp"

namespace tandem::detail {

// What one device would cost for one task, as the decision saw it.
struct DeviceEstimate {
    std::uint32_t device = 0;
    bool primary = false;
    bool candidate = false; // the task could be placed here this decision
    std::string excluded;   // why not, when not a candidate
    std::optional<Prediction> execute;
    std::optional<MoveCost> move; // workers only
    // Workers: the adapter this one is an opening of the same physical device as (the primary,
    // or the worker the task runs on), and whether the two are treated as separate devices.
    std::optional<std::uint32_t> opening_of;
    bool treated_as_separate = false;
    // Workers: the primary's execute time freed per update (0 on an opening of the primary's
    // device, unless treated as separate: the same device does the work).
    double gain_ms = 0.0;
    double charge_ms = 0.0;     // primary: execute; workers: move total (the rule's sides)
    double load_fraction = 0.0; // execute x rate as a fraction of one second
};

struct Explanation {
    std::string task;
    WorkloadShape shape;
    Placement request;
    double rate_hz = 0.0;
    std::optional<std::uint32_t> previous; // where it ran before this decision
    std::uint32_t chosen = 0;
    bool moved = false;     // chosen differs from previous
    bool lost_move = false; // moved because its device was lost
    double margin_ms = 0.0;
    std::vector<DeviceEstimate> devices; // the primary first, then each worker
    std::string reason;                  // one or two sentences
    // A chain placed as a unit: the task whose device this one takes (empty: its own), and for
    // the chain's first task the tasks placed with it.
    std::string with;
    std::vector<std::string> chain;
};

struct DeviceLoad {
    std::uint32_t device = 0;
    bool primary = false;
    bool lost = false;
    double load_fraction = 0.0; // sum of execute x rate over its tasks, of one second
    // The other adapters that are openings of this one's physical device and share its capacity
    // (none when openings are treated as separate), and the load of all of them together.
    std::vector<std::uint32_t> shares_with;
    double device_load_fraction = 0.0;
    // Workers: PlacementOptions::capacity; 0 for openings of the primary's device, which the
    // primary's second bounds instead.
    double capacity = 0.0;
    // Workers: the device's load (device_load_fraction) is past capacity (only manual placements
    // can do that). The primary, and openings of its device: its own frames plus the tasks of
    // every opening need more than every second has; some rates will not be met.
    bool over_capacity = false;
    std::vector<std::string> tasks;
};

struct PlacementPlan {
    std::uint64_t decision = 0;     // counts decide() calls, from 1
    std::string method;             // "exhaustive" or "greedy"
    std::vector<Explanation> tasks; // one per task, in input order
    std::vector<DeviceLoad> devices;
    // Base + amortised primary-side task costs: execution on the primary, and reintegration
    // where it is known apart (a delivery measured as a whole has no known primary share).
    double predicted_primary_frame_ms = 0.0;
    // Which adapters are openings of one physical device and how they are treated, one sentence
    // per device; empty when every adapter is a device of its own.
    std::vector<std::string> openings;
    bool openings_are_separate = false;
    [[nodiscard]] std::optional<std::uint32_t> device_of(std::string_view task) const;
    [[nodiscard]] std::size_t moves() const noexcept;
};

// Where a figure came from, as explanations name it: "task" (the profile measured this very
// task), "profile" or "measured".
[[nodiscard]] const char* source_of(const Prediction& prediction) noexcept;
// "prepare 0.020 ms (profile) + transfer 0.577 ms over host-imported (profile) + sync ...", or
// "prepare 0.020 ms (profile) + delivery 3.100 ms over host-copy (measured, as a whole)".
[[nodiscard]] std::string describe_move(const MoveCost& move);

[[nodiscard]] nlohmann::json to_json(const DeviceEstimate& estimate);
[[nodiscard]] nlohmann::json to_json(const Explanation& explanation);
[[nodiscard]] nlohmann::json to_json(const PlacementPlan& plan);
// The readable form `tandem run --explain` prints: a table of devices and the reason per task.
[[nodiscard]] std::string to_text(const Explanation& explanation);
[[nodiscard]] std::string to_text(const PlacementPlan& plan);

} // namespace tandem::detail
