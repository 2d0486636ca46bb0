// The public tandem::Placement (tandem/placement.hpp) under the names the internal layers use:
// the tasks file (scene/tasks.hpp), the runtime and the scheduler (sched/placement.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tandem/placement.hpp"

namespace tandem::detail {

using tandem::Placement;
using tandem::PlacementKind;

[[nodiscard]] inline std::optional<Placement> parse_placement(std::string_view text) {
    return Placement::parse(text);
}
[[nodiscard]] inline std::string to_string(const Placement& placement) {
    return placement.to_string();
}

} // namespace tandem::detail
