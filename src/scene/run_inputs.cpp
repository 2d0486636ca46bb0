#include "scene/run_inputs.hpp"

#include "scene/demo_scene.hpp"
#include <cstdio>
#include <filesystem>

#include "scene/gltf_loader.hpp"
#include "scene/snapshot_codec.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

struct Fnv1a {
    std::uint64_t value = 0xcbf29ce484222325ull;
    void add(const void* data, std::size_t size) noexcept {
        const auto* bytes = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < size; ++i) {
            value = (value ^ bytes[i]) * 0x100000001b3ull;
        }
    }
    template <typename T>
    void add(const T& v) noexcept {
        add(&v, sizeof v);
    }
};

} // namespace

RunInputs prepare_run(const RunRequest& request) {
    RunInputs out;
    const auto size = parse_size(request.size);
    if (!size) {
        throw Error(ErrorCategory::InvalidArgument,
                    "--size '" + request.size + "' is not a usable size",
                    "Give WIDTHxHEIGHT with each side from 1 to " +
                        std::to_string(k_max_task_size) + ", e.g. 1280x720");
    }
    out.width = size->first;
    out.height = size->second;
    std::optional<Placement> placement;
    if (request.placement) {
        placement = parse_placement(*request.placement);
        if (!placement) {
            throw Error(ErrorCategory::InvalidArgument,
                        "--placement '" + *request.placement + "' is not a placement",
                        "Use auto, primary, worker, worker:N, an adapter index or device:SELECTOR");
        }
    }
    out.demo = request.scene_path.empty();
    if (!out.demo && request.demo_crowd > 0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "--demo-crowd applies to the built-in demo, not to " + request.scene_path,
                    "Leave out --scene to load the demo, or --demo-crowd to run your scene");
    }
    out.scene =
        out.demo ? make_demo_scene(DemoOptions{request.demo_crowd}) : load_gltf(request.scene_path);
    out.scene_name =
        out.demo ? "demo" : std::filesystem::path(request.scene_path).filename().string();
    if (out.demo && request.demo_crowd > 0) {
        out.scene_name += "+" + std::to_string(request.demo_crowd);
    }
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

std::uint64_t scene_triangles(const Scene& scene) {
    std::uint64_t n = 0;
    for (const auto& node : scene.nodes()) {
        if (node.mesh && *node.mesh < scene.assets().meshes.size()) {
            for (const auto& p : scene.assets().meshes[*node.mesh].primitives) {
                n += p.indices.size() / 3;
            }
        }
    }
    return n;
}

std::string task_content_key(const RunInputs& inputs, std::size_t task) {
    const TaskSpec& spec = inputs.prepared.at(task).spec;
    Fnv1a hash;
    hash.add(spec.width);
    hash.add(spec.height);
    const auto snapshot = encode_snapshot(task_snapshot(inputs, task));
    hash.add(snapshot.data(), snapshot.size());
    for (const Mesh& mesh : inputs.scene.assets().meshes) {
        for (const Primitive& p : mesh.primitives) {
            hash.add(p.vertices.data(), p.vertices.size() * sizeof(Vertex));
            hash.add(p.indices.data(), p.indices.size() * sizeof(std::uint32_t));
            hash.add(p.material);
        }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash.value));
    return spec.name + "@" + inputs.scene_name + "#" + hex;
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
