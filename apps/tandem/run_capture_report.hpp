// What `tandem run` (capture tasks, run_capture.hpp) records while it runs, and what it makes of
// it once the frame loop is done: report.json and the summary printed after it. Plain functions
// of the frame loop's thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run_scene.hpp"
#include "run_capture.hpp"
#include "tandem/runtime.hpp"

namespace tandem::cli {

// What the frame loop showed of one capture task.
struct TaskShown {
    TaskId id;
    std::uint64_t frames = 0;     // frames that had an output to show
    std::uint64_t generation = 0; // the newest output shown
    // Not always the task's device: a task moving shows its previous device's newest output
    // until the new one has a newer one.
    std::optional<std::uint32_t> adapter;
    double time_s = 0; // the scene time of the snapshot it was rendered from
    std::string png;   // the last frame's output, when written
};

// Everything the report reads besides the runtime's own statistics.
struct CaptureRecord {
    std::vector<DeviceInfo> devices; // the primary, then the workers, as the run began
    std::vector<TaskShown> tasks;    // one per scene task, in its order
    nlohmann::json scheduler;        // the model and profile the scheduler started with
    // The scheduler's decisions kept: the first and each that changed a placement.
    nlohmann::json decisions = nlohmann::json::array();
    std::uint64_t decisions_changed = 0;
    std::uint64_t last_decision_frame = 0;
    std::uint64_t frames_done = 0;
    double last_time_s = 0; // the scene time of the last frame rendered
    double elapsed_s = 0;
    std::string failure; // empty while the run goes well
    nlohmann::json main_pngs = nlohmann::json::array();
    std::vector<double> main_gpu_ms;
    std::vector<double> frame_ms; // start to start, frames that wrote no PNG
    bool have_timestamps = false;
};

struct CaptureReport {
    nlohmann::json json;
    bool task_lost = false; // a task's worker was lost (the run fails if one stayed there)
    std::set<std::uint32_t> lost_workers;
};

// The report of a finished run; adds the scheduler's last decision to `record` unless kept.
[[nodiscard]] CaptureReport capture_report(const Runtime& runtime, const harness::RunScene& scene,
                                           const CaptureModeArgs& args, CaptureRecord& record);

// The table of tasks, the frame rate, each device's busy time, lost workers and the decisions.
void print_capture_summary(std::FILE* out, const CaptureReport& report, const CaptureRecord& record,
                           const std::string& report_path);

} // namespace tandem::cli
