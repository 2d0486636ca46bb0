// run_post(): `tandem run --post KIND`, the primary's frames processed on a worker, on the public
// API alone. Every frame the main view of a RunScene is rendered on the primary (for `upscale`
// at --render-scale of the output size, and for the temporal upscaler with the sub-pixel jitter
// tandem::temporal_jitter gives, which its job is told) with its colour, depth and motion vectors
// (MainViewOutputs::ColorDepthMotion); one post task (tandem/post.hpp: blur, upscale or
// interpolate, the last with the scene's motion or from colour alone) takes them (or the colour
// alone) as task inputs, placed on a worker unless told otherwise; the frame
// loop acquires the task's newest output every frame, as a display would show it (for
// `interpolate` the generated frame between two real frames, so the display sequence is real
// and generated frames interleaved, twice the rendered rate).
//
// Quality is measured, not claimed: at every sampled frame (every png_every-th) the primary also
// renders the reference (the true in-between frame for `interpolate`, the native-resolution
// frame for `upscale`), and the PSNR of the task's output against it is reported beside a naive
// baseline computed in the same run (the 50/50 blend of the two real frames; a bilinear upscale
// of the rendered frame, of a jittered one where its samples are). The sampled frames are written
// as PNGs: the real frame, the output, the reference, and the output beside the reference.
//
// The capture tasks of the scene do not run (their surfaces show their own materials), so that
// the figures are the post pass's alone. Threads: the calling thread (the frame loop).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/run_scene.hpp"
#include "tandem/runtime.hpp"

namespace tandem::harness {

enum class PostKind { Blur, Upscale, Interpolate };

// "blur", "upscale", "interpolate"; throws tandem::Error naming the choices otherwise.
[[nodiscard]] PostKind parse_post_kind(const std::string& text);
[[nodiscard]] const char* to_string(PostKind kind) noexcept;

struct PostRunOptions {
    PostKind kind = PostKind::Interpolate;
    std::uint64_t frames = 120;
    double fps = 60.0;                  // main view frames per second; 0: unlimited
    double scene_dt = 1.0 / 60.0;       // scene time per frame (with the frames clock)
    bool wall_clock = false;            // scene time follows the wall clock instead
    std::optional<double> render_scale; // upscale only: render size / output size, (0, 1]
    // Upscale only: the temporal upscaler (frames rendered with its jitter, with depth and motion
    // vectors: tandem::temporal_upscale_task), or the spatial one (colour alone).
    bool temporal_upscale = true;
    // Interpolate only: the motion estimated from the colour frames alone
    // (tandem::interpolate_colour_task, the task given no depth and no motion vectors), or the
    // scene's own motion vectors and depth (tandem::interpolate_task).
    bool colour_motion = false;
    std::optional<std::string> placement; // the post task's; default: a worker when there is one
    std::uint32_t slots = 3;
    // The task's inputs: rendered straight into the images Tandem lends (Runtime::lend_inputs,
    // nothing copied), or rendered into the view's own images and copied by Tandem at submit.
    bool lend_inputs = true;
    std::filesystem::path out_dir;
    std::uint64_t png_every = 30; // sampled frames (PNGs and quality); 0: none
    std::uint32_t timeout_ms = 5000;
    // About four times a second, with the frame done and the newest output's generation.
    std::function<void(std::uint64_t frame, std::uint64_t generation)> progress;
};

struct PostRunResult {
    nlohmann::json report;            // the "post" part of report.json
    std::string failure;              // empty when the run completed
    std::uint64_t frames = 0;         // real frames rendered
    std::uint64_t missed_samples = 0; // sampled frames whose output did not arrive in time
    std::vector<std::string> pngs;
};

// The render size for `kind` at output `width` x `height` (throws tandem::Error for a scale out of
// range, or given to a kind that does not scale).
[[nodiscard]] std::pair<std::uint32_t, std::uint32_t> post_render_size(PostKind kind,
                                                                       std::optional<double> scale,
                                                                       std::uint32_t width,
                                                                       std::uint32_t height);

// Runs the loop; throws tandem::Error for what fails before the first frame (the task refused,
// a placement that names no device), and reports what fails after in PostRunResult::failure.
[[nodiscard]] PostRunResult run_post(Runtime& runtime, RunScene& scene,
                                     const PostRunOptions& options);

} // namespace tandem::harness
