// `tandem run --post KIND`: the primary's frames processed on a worker (harness/post_run.hpp)
// instead of the scene's capture tasks: writes the sampled frames as PNGs and report.json into
// the output folder, prints a progress line and a summary.
#pragma once

#include <string>

#include "harness/post_run.hpp"
#include "harness/run_scene.hpp"
#include "tandem/runtime.hpp"

namespace tandem::cli {

struct PostModeArgs {
    harness::PostRunOptions options; // out_dir set
    std::string scene_label;         // "(built-in demo)" or the scene's path
    std::string fps_label;           // "60 FPS", "unlimited FPS"
    bool json = false;               // the report on stdout too (the summary on stderr then)
    bool quiet = false;              // no progress line and no summary
};

// Runs it; returns the exit status (0, or 1 when the run failed). Throws tandem::Error for what
// is refused before the first frame.
[[nodiscard]] int run_post_mode(Runtime& runtime, harness::RunScene& scene,
                                const PostModeArgs& args);

} // namespace tandem::cli
