#include "harness/capture_tasks.hpp"

#include "harness/run_scene_state.hpp"
#include "workloads/scene_capture_workload.hpp"

namespace tandem::harness {

// The times come from the scene-capture workload, registered by name for this scene's assets;
// `seen` is what observe() fed the scheduler so far.
struct CaptureTasks::State {
    const RunScene& scene;
    std::shared_ptr<detail::SceneCaptureTimes> times;
    std::map<std::pair<std::string, std::uint32_t>, detail::SceneCaptureTimes::DeviceTime> seen;
};

CaptureTasks::CaptureTasks(const RunScene& scene)
    : m_state(std::make_unique<State>(
          State{scene,
                detail::register_scene_capture_workload(scene.state().inputs.scene.shared_assets()),
                {}})) {}

CaptureTasks::~CaptureTasks() = default;

TaskDesc CaptureTasks::desc(std::size_t task, std::uint32_t slots) const {
    const RunTaskInfo& info = m_state->scene.tasks().at(task);
    TaskDesc desc;
    desc.name = info.name;
    desc.workload = detail::k_scene_capture_workload;
    desc.width = info.width;
    desc.height = info.height;
    desc.format = VK_FORMAT_R8G8B8A8_UNORM;
    desc.slots = slots;
    desc.placement = info.placement;
    desc.rate_hz = info.rate_hz;
    desc.cost = {"capture", m_state->scene.triangles(), info.content_key};
    return desc;
}

void CaptureTasks::observe(Runtime& runtime, std::span<const TaskId> ids) {
    const std::vector<RunTaskInfo>& tasks = m_state->scene.tasks();
    for (const auto& [key, t] : m_state->times->busy_by_task()) {
        auto& seen = m_state->seen[key];
        if (const auto ms = t.since(seen).steady_ms()) {
            for (std::size_t i = 0; i < tasks.size() && i < ids.size(); ++i) {
                if (tasks[i].name == key.first) {
                    runtime.observe_execute(ids[i], key.second, *ms);
                }
            }
        }
        seen = t;
    }
}

std::map<std::pair<std::string, std::uint32_t>, CaptureGpuTime> CaptureTasks::by_task() const {
    std::map<std::pair<std::string, std::uint32_t>, CaptureGpuTime> out;
    for (const auto& [key, t] : m_state->times->busy_by_task()) {
        CaptureGpuTime& c = out[key];
        if (t.timed && t.generations > 0) {
            c.per_update_ms = t.busy_ms / static_cast<double>(t.generations);
            if (t.firsts > 0) {
                c.first_update_ms = t.first_ms / static_cast<double>(t.firsts);
            }
            c.per_later_update_ms = t.steady_ms();
        }
    }
    return out;
}

std::map<std::uint32_t, DeviceCaptureTime> CaptureTasks::by_device() const {
    std::map<std::uint32_t, DeviceCaptureTime> out;
    for (const auto& [device, t] : m_state->times->busy()) {
        out[device] = {t.timed, t.busy_ms};
    }
    return out;
}

} // namespace tandem::harness
