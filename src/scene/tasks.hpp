// The tasks file (JSON, schema in docs/tasks-json.md): which captures run, from which camera,
// at what size and rate, where, and on which surface of the main view each one is shown.
// Parsing and checking happen before any GPU work; every problem is reported with its JSON
// pointer in the file ("/tasks/1/resolution"), all of them at once. No Vulkan here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/placement.hpp"
#include "scene/scene.hpp"

namespace tandem::detail {

struct TaskSpec {
    std::string name;
    std::string camera;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    double rate_hz = 0.0;
    Placement placement = Placement::on_a_worker(); // "worker" unless the file says
    std::optional<std::string> surface; // node shown with this task's output in the main view
    std::vector<std::string> tags;      // empty: draw everything
};

struct TasksFile {
    std::optional<std::string> main_camera;
    std::vector<TaskSpec> tasks;
};

inline constexpr std::uint32_t k_max_task_size = 8192;
inline constexpr double k_max_task_rate_hz = 1000.0;

// Parses a tasks document; throws tandem::Error naming every problem with its path.
// `origin` names the file in messages.
[[nodiscard]] TasksFile parse_tasks(std::string_view json, const std::string& origin);
[[nodiscard]] TasksFile load_tasks(const std::string& path);

// Problems of `tasks` against `scene` (cameras, surfaces and tags that do not exist), each
// "path: message"; empty when all is well.
[[nodiscard]] std::vector<std::string> check_tasks(const TasksFile& tasks, const Scene& scene);
// Throws tandem::Error listing the problems check_tasks finds.
void require_valid_tasks(const TasksFile& tasks, const Scene& scene, const std::string& origin);

// "320x240" -> {320, 240}; nullopt when malformed or outside 1..k_max_task_size.
[[nodiscard]] std::optional<std::pair<std::uint32_t, std::uint32_t>>
parse_size(std::string_view text);

} // namespace tandem::detail
