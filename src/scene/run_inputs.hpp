// What `tandem run` (and any embedding application) needs before the first GPU call: the scene
// (a glTF file or the built-in demo), the tasks (a file, the demo's, or defaults fitted to the
// scene), the main view's size, and an optional placement override, all checked. Every bad
// input throws tandem::Error with a message naming it; nothing here touches a GPU.
// Then, per tick, the plain-data snapshots of each task and of the main view.
// Application thread only (the Scene inside is mutable).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scene/scene.hpp"
#include "scene/snapshot.hpp"
#include "scene/tasks.hpp"

namespace tandem::detail {

struct RunRequest {
    std::string scene_path;               // empty: the built-in demo scene
    std::string tasks_path;               // empty: the demo's tasks or fitted defaults
    std::string size = "1280x720";        // the main view, WIDTHxHEIGHT
    std::optional<std::string> placement; // overrides every task's placement
    std::uint32_t demo_crowd = 0;         // DemoOptions::crowd; the built-in demo only
};

struct PreparedTask {
    TaskSpec spec;
    std::uint32_t camera = 0;                  // index into Scene::cameras
    std::optional<std::uint32_t> surface_node; // node of the main view showing the output
};

struct RunInputs {
    Scene scene;
    TasksFile tasks;
    std::vector<PreparedTask> prepared; // one per task, in file order
    std::uint32_t main_camera = 0;
    std::uint32_t width = 0;  // main view
    std::uint32_t height = 0; // main view
    bool demo = false;
    std::string scene_name; // "demo" (with "+N" for a crowd), else the glTF file's name
};

[[nodiscard]] RunInputs prepare_run(const RunRequest& request);

// The task's view of the scene as it is now (animate the scene first). A task does not draw
// the surface it feeds.
[[nodiscard]] FrameSnapshot task_snapshot(const RunInputs& inputs, std::size_t task);
// Triangles of every node's mesh, each instance counted.
[[nodiscard]] std::uint64_t scene_triangles(const Scene& scene);
// What task `task` draws, as the calibration profile names it (WorkloadSample::content):
// "TASK@SCENE#HASH", the hash (FNV-1a, 64 bits) covering the task's size and its snapshot at
// the scene's time 0 (camera, instances, light) and the scene's meshes. Equal keys mean the same
// work, so a profile that calibrated it predicts it. Call before the scene is animated past 0
// (prepare_run leaves it at 0).
[[nodiscard]] std::string task_content_key(const RunInputs& inputs, std::size_t task);
// The main view; `shown[i]`, when set, is the external texture index that task i's surface
// shows (its newest ready output); unset surfaces keep their own material.
[[nodiscard]] FrameSnapshot main_snapshot(const RunInputs& inputs,
                                          std::span<const std::optional<std::uint32_t>> shown);

} // namespace tandem::detail
