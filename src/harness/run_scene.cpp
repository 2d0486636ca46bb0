#include "harness/run_scene.hpp"

#include "core/placement.hpp"
#include "harness/run_scene_state.hpp"
#include "scene/capture_codec.hpp"
#include "scene/demo_scene.hpp"
#include "scene/scene_access.hpp"

namespace tandem::harness {

std::uint32_t max_demo_crowd() noexcept {
    return detail::k_max_demo_crowd;
}

std::uint32_t crowd_sphere_triangles() noexcept {
    return detail::k_crowd_sphere_triangles;
}

RunScene::RunScene(const RunSceneRequest& request) {
    detail::RunRequest run;
    run.scene_path = request.scene_path;
    run.tasks_path = request.tasks_path;
    run.size = request.size;
    run.placement = request.placement;
    run.demo_crowd = request.demo_crowd;
    m_state = std::make_unique<State>(State{detail::prepare_run(run), {}, {}, {}});
    const detail::RunInputs& inputs = m_state->inputs;
    // The content keys hash the scene at time 0: taken before anything animates it.
    for (std::size_t i = 0; i < inputs.prepared.size(); ++i) {
        const detail::TaskSpec& spec = inputs.prepared[i].spec;
        RunTaskInfo t;
        t.name = spec.name;
        t.camera = spec.camera;
        t.width = spec.width;
        t.height = spec.height;
        t.rate_hz = spec.rate_hz;
        t.placement = spec.placement;
        t.automatic = spec.placement.kind == detail::PlacementKind::Auto;
        t.surface = spec.surface;
        t.content_key = detail::task_content_key(inputs, i);
        m_state->tasks.push_back(std::move(t));
    }
    m_state->main_camera = inputs.scene.cameras()[inputs.main_camera].name;
    m_state->capture_scene = detail::SceneAccess::make(inputs.scene.shared_assets());
}

RunScene::~RunScene() = default;
RunScene::RunScene(RunScene&&) noexcept = default;
RunScene& RunScene::operator=(RunScene&&) noexcept = default;

bool RunScene::demo() const noexcept {
    return m_state->inputs.demo;
}

const std::string& RunScene::name() const noexcept {
    return m_state->inputs.scene_name;
}

std::uint32_t RunScene::width() const noexcept {
    return m_state->inputs.width;
}

std::uint32_t RunScene::height() const noexcept {
    return m_state->inputs.height;
}

const std::string& RunScene::main_camera() const noexcept {
    return m_state->main_camera;
}

std::uint64_t RunScene::triangles() const {
    return detail::scene_triangles(m_state->inputs.scene);
}

const std::vector<RunTaskInfo>& RunScene::tasks() const noexcept {
    return m_state->tasks;
}

void RunScene::animate(double t) {
    m_state->inputs.scene.animate(t);
}

const std::shared_ptr<const Scene>& RunScene::capture_scene() const noexcept {
    return m_state->capture_scene;
}

CaptureSnapshot RunScene::task_capture(std::size_t task) const {
    const detail::RunInputs& inputs = m_state->inputs;
    const detail::FrameSnapshot frame = detail::task_snapshot(inputs, task);
    const detail::Light& light = inputs.scene.light(); // as given: the task normalises it
    CaptureSnapshot shot;
    shot.camera = detail::capture_camera(
        inputs.scene.cameras().at(inputs.prepared.at(task).camera).model, frame.camera.view);
    shot.light.direction = {light.direction.x, light.direction.y, light.direction.z};
    shot.light.color = {light.color.x, light.color.y, light.color.z};
    shot.light.ambient = {light.ambient.x, light.ambient.y, light.ambient.z};
    shot.clear_color = {light.clear_color.x, light.clear_color.y, light.clear_color.z,
                        light.clear_color.w};
    shot.instances.reserve(frame.instances.size());
    for (const detail::InstanceSnapshot& i : frame.instances) {
        shot.instances.push_back({MeshId{i.mesh}, detail::to_matrix4(i.transform), {}});
    }
    return shot;
}

std::vector<std::byte> RunScene::task_snapshot(std::size_t task) const {
    return encode_capture(task_capture(task));
}

} // namespace tandem::harness
