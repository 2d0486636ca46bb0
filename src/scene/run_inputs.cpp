#include "scene/run_inputs.hpp"

#include "scene/demo_scene.hpp"
#include "scene/gltf_loader.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

RunInputs prepare_run(const RunRequest& request) {
    RunInputs out;
    const auto size = parse_size(request.size);
    if (!size) {
        throw Error("--size '" + request.size + "' is not a usable size",
                    "Give WIDTHxHEIGHT with each side from 1 to " +
                        std::to_string(k_max_task_size) + ", e.g. 1280x720");
    }
    out.width = size->first;
    out.height = size->second;
    std::optional<Placement> placement;
    if (request.placement) {
        placement = parse_placement(*request.placement);
        if (!placement) {
            throw Error("--placement '" + *request.placement + "' is not a placement",
                        "Use auto, primary, worker, an adapter index or device:SELECTOR");
        }
    }
    out.demo = request.scene_path.empty();
    if (!out.demo && request.demo_crowd > 0) {
        throw Error("--demo-crowd applies to the built-in demo, not to " + request.scene_path,
                    "Leave out --scene to load the demo, or --demo-crowd to run your scene");
    }
    out.scene =
        out.demo ? make_demo_scene(DemoOptions{request.demo_crowd}) : load_gltf(request.scene_path);
    add_fitted_main_camera(out.scene);
    std::string origin = "(built in)";
    if (!request.tasks_path.empty()) {
        out.tasks = load_tasks(request.tasks_path);
        origin = request.tasks_path;
    } else if (out.demo) {
        out.tasks = demo_tasks();
    } else {
        out.tasks = add_default_tasks(out.scene);
    }
    out.scene.animate(0.0);
    require_valid_tasks(out.tasks, out.scene, origin);
    out.main_camera = main_camera(out.scene, out.tasks);
    for (TaskSpec& spec : out.tasks.tasks) {
        if (placement) {
            spec.placement = *placement;
        }
        PreparedTask p;
        p.spec = spec;
        p.camera = *out.scene.find_camera(spec.camera);
        if (spec.surface) {
            p.surface_node = out.scene.find_node(*spec.surface);
        }
        out.prepared.push_back(std::move(p));
    }
    return out;
}

FrameSnapshot task_snapshot(const RunInputs& inputs, std::size_t task) {
    const PreparedTask& t = inputs.prepared.at(task);
    ViewRequest request;
    request.camera = t.camera;
    request.aspect = static_cast<float>(t.spec.width) / static_cast<float>(t.spec.height);
    request.tags = t.spec.tags;
    if (t.surface_node) {
        request.hidden.push_back(*t.surface_node);
    }
    return snapshot(inputs.scene, request);
}

FrameSnapshot main_snapshot(const RunInputs& inputs,
                            std::span<const std::optional<std::uint32_t>> shown) {
    ViewRequest request;
    request.camera = inputs.main_camera;
    request.aspect = static_cast<float>(inputs.width) / static_cast<float>(inputs.height);
    for (std::size_t i = 0; i < inputs.prepared.size() && i < shown.size(); ++i) {
        if (inputs.prepared[i].surface_node && shown[i]) {
            request.surfaces.emplace_back(*inputs.prepared[i].surface_node, *shown[i]);
        }
    }
    return snapshot(inputs.scene, request);
}

} // namespace tandem::detail
