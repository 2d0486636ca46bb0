// `tandem run` without --post: the scene's capture tasks registered with the runtime and shown on
// their display surfaces by a headless frame loop on the primary (each frame: animate, submit the
// snapshots that are due, pump, acquire, render the main view, release). Writes the main view and
// task PNGs and report.json into the output folder (run_capture_report.hpp), prints a progress
// line, the placement decisions asked for, and a summary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "harness/run_scene.hpp"
#include "tandem/runtime.hpp"

namespace tandem::cli {

struct CaptureModeArgs {
    std::uint64_t frames = 120;
    double fps = 60.0;            // main view frames per second; 0: unlimited
    double scene_dt = 1.0 / 60;   // scene time per frame (with the frames clock)
    bool wall_clock = false;      // scene time and task rates follow the wall clock instead
    std::string clock = "frames"; // as the report names it: "frames" or "wall"
    std::uint32_t slots = 3;
    std::uint32_t timeout_ms = 5000;
    std::uint64_t png_every = 30; // main view PNGs; 0: the last frame's only
    std::filesystem::path out_dir;
    std::string scene_path;   // as given; empty for the built-in demo
    std::string tasks_path;   // as given; empty for the built-in tasks
    std::string profile;      // the calibration profile the scheduler was given; empty: none
    std::string profile_note; // why none was found, when none was
    std::string trace;        // the Chrome trace file to write; empty: none
    bool explain = false;     // print each placement decision that changed something
    bool json = false;        // the report on stdout too (the summary on stderr then)
    bool quiet = false;       // no progress line and no summary
};

// Runs it; returns the exit status (0, or 1 when a frame failed or a task stayed on a lost
// worker). Throws tandem::Error for what is refused before the first frame.
[[nodiscard]] int run_capture_mode(Runtime& runtime, harness::RunScene& scene,
                                   const CaptureModeArgs& args);

} // namespace tandem::cli
