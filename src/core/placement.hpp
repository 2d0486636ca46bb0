// Placement: where a task asks to run, one type for the tasks file (scene/tasks.hpp), the
// runtime (TaskDesc::placement) and the scheduler (sched/placement.hpp).
//
//   auto       the scheduler decides, and may move the task while it runs
//   primary    the primary device
//   worker     a worker: the runtime's one with the fewest tasks, fixed (the scheduler's
//              explanations call it "any worker")
//   worker:N   the N-th worker, from 0
//   2          the adapter with index 2
//   device:SEL the adapter a selector names (an index, a UUID prefix or part of a device name)
//
// Plain values: copy freely, any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tandem::detail {

enum class PlacementKind { Auto, Primary, Worker, Device };

struct Placement {
    PlacementKind kind = PlacementKind::Auto;
    // Worker: the worker's position ("worker:N"); unset for the runtime's choice.
    std::optional<std::uint32_t> worker;
    // Device: the selector as written; `adapter` once it names one adapter (a bare index does
    // by itself; other selectors are resolved against the adapters present).
    std::string device;
    std::optional<std::uint32_t> adapter;

    [[nodiscard]] static Placement on_primary() { return {PlacementKind::Primary, {}, {}, {}}; }
    [[nodiscard]] static Placement on_a_worker() { return {PlacementKind::Worker, {}, {}, {}}; }
    [[nodiscard]] static Placement on_adapter(std::uint32_t index) {
        return {PlacementKind::Device, {}, std::to_string(index), index};
    }
    [[nodiscard]] bool manual() const noexcept { return kind != PlacementKind::Auto; }
};

// One of the forms above; nullopt for anything else (an empty text too).
[[nodiscard]] std::optional<Placement> parse_placement(std::string_view text);
// "auto", "primary", "worker", "worker:N", the index, or "device:SEL".
[[nodiscard]] std::string to_string(const Placement& placement);

} // namespace tandem::detail
