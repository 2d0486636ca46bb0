#include "harness/demo_tasks.hpp"

#include "scene/demo_scene.hpp"
#include "tandem/error.hpp"

namespace tandem::harness {

std::vector<std::string> demo_task_names() {
    std::vector<std::string> names;
    for (const detail::TaskSpec& t : detail::demo_tasks().tasks) {
        names.push_back(t.name);
    }
    return names;
}

nlohmann::json demo_tasks_document(const std::vector<std::string>& placements) {
    const detail::TasksFile tasks = detail::demo_tasks();
    if (placements.size() != tasks.tasks.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The demo has " + std::to_string(tasks.tasks.size()) + " tasks, not " +
                        std::to_string(placements.size()),
                    "Give one placement per task");
    }
    nlohmann::json doc;
    if (tasks.main_camera) {
        doc["main"] = {{"camera", *tasks.main_camera}};
    }
    doc["tasks"] = nlohmann::json::array();
    for (std::size_t i = 0; i < tasks.tasks.size(); ++i) {
        const auto& t = tasks.tasks[i];
        nlohmann::json j = {
            {"name", t.name},
            {"camera", t.camera},
            {"resolution", std::to_string(t.width) + "x" + std::to_string(t.height)},
            {"rate", t.rate_hz},
            {"placement", placements[i]}};
        if (t.surface) {
            j["surface"] = *t.surface;
        }
        if (!t.tags.empty()) {
            j["tags"] = t.tags;
        }
        doc["tasks"].push_back(j);
    }
    return doc;
}

} // namespace tandem::harness
