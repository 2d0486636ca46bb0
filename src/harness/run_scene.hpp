// RunScene: the scene `tandem run` renders and `tandem calibrate` measures, with its capture
// tasks: a glTF file or the built-in demo, the tasks (a file, the demo's, or defaults fitted to
// the scene), the main view's size and an optional placement override, all checked before any
// device opens (every bad input throws tandem::Error naming it). Its meshes, materials and
// images are a public tandem::Scene, drawn by capture tasks as an engine's would be
// (tandem::capture_workload); per tick, each task's view is a CaptureSnapshot, submitted
// encoded. capture_tasks.hpp turns its tasks into TaskDescs; main_view.hpp renders its main view.
// Threads: the application thread only (the scene inside is mutable). Plain CPU work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tandem/capture.hpp"
#include "tandem/placement.hpp"
#include "tandem/scene.hpp"

namespace tandem::harness {

struct RunSceneRequest {
    std::string scene_path;               // empty: the built-in demo scene
    std::string tasks_path;               // empty: the demo's tasks or fitted defaults
    std::string size = "1280x720";        // the main view, WIDTHxHEIGHT
    std::optional<std::string> placement; // overrides every task's placement
    std::uint32_t demo_crowd = 0;         // detailed spheres added to the built-in demo
};

// The most spheres the demo's crowd may have, and the triangles of each.
[[nodiscard]] std::uint32_t max_demo_crowd() noexcept;
[[nodiscard]] std::uint32_t crowd_sphere_triangles() noexcept;

// One capture task, as the tasks file (or the defaults) gave it.
struct RunTaskInfo {
    std::string name;
    std::string camera;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    double rate_hz = 0;
    Placement placement;                // as a TaskDesc takes it
    bool automatic = false;             // placement "auto": the scheduler decides
    std::optional<std::string> surface; // node of the main view that shows the output
    // What the task draws, as a calibration profile names it: equal keys mean the same work.
    std::string content_key;
};

class RunScene {
public:
    explicit RunScene(const RunSceneRequest& request);
    ~RunScene();
    RunScene(RunScene&&) noexcept;
    RunScene& operator=(RunScene&&) noexcept;

    [[nodiscard]] bool demo() const noexcept;
    // "demo" (with "+N" for a crowd), else the glTF file's name.
    [[nodiscard]] const std::string& name() const noexcept;
    [[nodiscard]] std::uint32_t width() const noexcept; // main view
    [[nodiscard]] std::uint32_t height() const noexcept;
    [[nodiscard]] const std::string& main_camera() const noexcept;
    // Triangles of every node's mesh, each instance counted.
    [[nodiscard]] std::uint64_t triangles() const;
    [[nodiscard]] const std::vector<RunTaskInfo>& tasks() const noexcept;

    // Moves the scene to time `t` (seconds): a pure function of time.
    void animate(double t);
    // The scene's meshes, materials and images (what its capture tasks draw; never changes).
    [[nodiscard]] const std::shared_ptr<const Scene>& capture_scene() const noexcept;
    // Task `task`'s view of the scene as it is now: its camera, the light, and the instances it
    // draws (its tags applied, the surface that shows its own output left out).
    [[nodiscard]] CaptureSnapshot task_capture(std::size_t task) const;
    // The same, encoded as its submits carry it (tandem::encode_capture).
    [[nodiscard]] std::vector<std::byte> task_snapshot(std::size_t task) const;

    // The scene and inputs inside (harness/run_scene_state.hpp, for the harness itself).
    struct State;
    [[nodiscard]] const State& state() const noexcept { return *m_state; }

private:
    std::unique_ptr<State> m_state;
};

} // namespace tandem::harness
