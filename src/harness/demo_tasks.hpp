// The built-in demo's capture tasks as a tasks file (docs/tasks-json.md), for tools that run
// `tandem run` on the demo with placements of their own (the placement benchmark). Plain
// functions; any thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::harness {

// The names of the demo's capture tasks, in file order.
[[nodiscard]] std::vector<std::string> demo_task_names();

// The demo's tasks document with task i placed at `placements[i]` (one per task); throws
// tandem::Error when the counts differ.
[[nodiscard]] nlohmann::json demo_tasks_document(const std::vector<std::string>& placements);

} // namespace tandem::harness
