// Placement: where a task asks to run (TaskDesc::placement), one value type for the runtime, the
// scheduler, tasks files and the CLI. Its text forms, which Placement::parse reads and
// to_string() writes:
//
//   auto        the scheduler decides, and may move the task while it runs
//   primary     the primary device
//   worker      a worker: the runtime's one with the fewest tasks, then fixed
//   worker:N    the N-th worker, from 0
//   2           the adapter with index 2
//   device:SEL  the adapter a selector names (an index, a UUID prefix, "pci:" and a PCI address,
//               vendor:device in hex, or part of a device name)
//
// Plain values: copy freely, any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tandem/export.hpp"

namespace tandem {

enum class PlacementKind { Auto, Primary, Worker, Device };

struct TANDEM_API Placement {
    PlacementKind kind = PlacementKind::Auto;
    // Worker: the worker's position ("worker:N"); unset for the runtime's choice.
    std::optional<std::uint32_t> worker;
    // Device: the selector as written; `adapter` once it names one adapter (a bare index does by
    // itself; other selectors are resolved against the runtime's adapters).
    std::string device;
    std::optional<std::uint32_t> adapter;

    [[nodiscard]] static Placement automatic() { return {}; }
    [[nodiscard]] static Placement on_primary() { return {PlacementKind::Primary, {}, {}, {}}; }
    // The worker with the fewest tasks when the task is registered.
    [[nodiscard]] static Placement on_a_worker() { return {PlacementKind::Worker, {}, {}, {}}; }
    [[nodiscard]] static Placement on_worker(std::uint32_t n) {
        return {PlacementKind::Worker, n, {}, {}};
    }
    [[nodiscard]] static Placement on_adapter(std::uint32_t index) {
        return {PlacementKind::Device, {}, std::to_string(index), index};
    }
    // A selector: an index, a UUID prefix, a PCI address, vendor:device or part of a name.
    [[nodiscard]] static Placement on_device(std::string selector);

    // One of the text forms above; nullopt for anything else (an empty text too).
    [[nodiscard]] static std::optional<Placement> parse(std::string_view text);
    // "auto", "primary", "worker", "worker:N", the index, or "device:SEL".
    [[nodiscard]] std::string to_string() const;

    // Anything but auto: the scheduler never changes it.
    [[nodiscard]] bool manual() const noexcept { return kind != PlacementKind::Auto; }
    [[nodiscard]] bool operator==(const Placement&) const = default;
};

} // namespace tandem
