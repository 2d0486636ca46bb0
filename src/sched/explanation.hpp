// Explanations of placement decisions: for each task, the numbers the decision saw on every
// device (predicted execute cost and where it came from, the move's preparation, transfer,
// synchronisation and reintegration costs, the gain and the margin), where it went and one or
// two sentences saying why; and for the whole decision, each device's load and the primary's
// predicted frame time. What `tandem run --explain` prints and the JSON report carries.
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
    double gain_ms = 0.0;         // workers: the primary's execute time freed per update
    double charge_ms = 0.0;       // primary: execute; workers: move total (the rule's sides)
    double load_fraction = 0.0;   // execute x rate as a fraction of one second
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
};

struct DeviceLoad {
    std::uint32_t device = 0;
    bool primary = false;
    bool lost = false;
    double load_fraction = 0.0; // sum of execute x rate over its tasks, of one second
    double capacity = 0.0;      // workers: PlacementOptions::capacity
    // Workers: the load is past capacity (only manual placements can do that). The primary: its
    // own frames plus its tasks need more than every second has; some rates will not be met.
    bool over_capacity = false;
    std::vector<std::string> tasks;
};

struct PlacementPlan {
    std::uint64_t decision = 0;     // counts decide() calls, from 1
    std::string method;             // "exhaustive" or "greedy"
    std::vector<Explanation> tasks; // one per task, in input order
    std::vector<DeviceLoad> devices;
    double predicted_primary_frame_ms = 0.0; // base + amortised primary-side task costs
    [[nodiscard]] std::optional<std::uint32_t> device_of(std::string_view task) const;
    [[nodiscard]] std::size_t moves() const noexcept;
};

[[nodiscard]] nlohmann::json to_json(const DeviceEstimate& estimate);
[[nodiscard]] nlohmann::json to_json(const Explanation& explanation);
[[nodiscard]] nlohmann::json to_json(const PlacementPlan& plan);
// The readable form `tandem run --explain` prints: a table of devices and the reason per task.
[[nodiscard]] std::string to_text(const Explanation& explanation);
[[nodiscard]] std::string to_text(const PlacementPlan& plan);

} // namespace tandem::detail
