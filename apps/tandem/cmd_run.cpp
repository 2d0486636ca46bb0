// `tandem run`: the demo end to end. Loads a scene (glTF or the built-in demo) and its tasks
// (harness/run_scene.hpp), checks every input before a device is opened, registers one capture
// task per entry with the runtime (harness/capture_tasks.hpp), and drives a headless frame loop on
// the primary: animate the scene, submit each task's snapshot at its rate, pump, acquire each
// task's newest output, render the main view with the leased images on their display surfaces,
// release the leases with the frame's primary timeline value. Writes main view PNGs (every k-th
// frame and the last), one PNG per task output (the leased image of the last frame), report.json,
// and a summary. `auto` tasks are placed by the runtime's scheduler (tandem/scheduler.hpp) inside
// pump(), from the calibration profile (when it matches the adapters) refined by the GPU time the
// runtime measures of every capture; manual placements are kept.
// --explain prints every decision that changed something.
// With --post KIND the scene's capture tasks do not run: the main view's frames go to one
// post-processing task instead (run_post_mode.hpp).
// This file holds the options and their checks; run_capture.hpp runs the capture tasks.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "commands.hpp"
#include "harness/post_run.hpp"
#include "harness/profile_file.hpp"
#include "harness/rate.hpp"
#include "harness/run_report.hpp"
#include "harness/run_scene.hpp"
#include "run_capture.hpp"
#include "run_post_mode.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"
#include "tandem/trace.hpp"

namespace tandem::cli {
namespace {

struct RunArgs {
    std::string scene;
    std::string tasks;
    std::uint64_t frames = 120;
    std::string fps = "60";
    std::string size = "1280x720";
    std::string out = "tandem-out";
    std::string placement;
    std::string trace;
    std::uint64_t png_every = 30;
    std::uint32_t slots = 3;
    std::uint32_t timeout_ms = 5000;
    std::string profile;
    bool explain = false;
    bool openings_are_separate = false;
    std::uint32_t demo_crowd = 0;
    std::string clock = "frames";
    bool json = false;
    bool quiet = false;
    std::string post;
    std::optional<double> render_scale; // --render-scale, when given
    std::string inputs = "lend";        // --post: lend or copy
    std::string input_copies = "auto";  // --post --inputs copy: auto, compute or command
    std::string upscaler;               // --post upscale: temporal or spatial, when given
    std::string motion;                 // --post interpolate: engine or colour, when given
};

// What the checks make of the arguments, before a device is opened.
struct RunSettings {
    double fps = 0; // 0: unlimited
    double scene_dt = 0;
    bool wall_clock = false;
    std::optional<harness::PostKind> post;
    std::filesystem::path out_dir;
};

constexpr std::uint64_t k_max_frames = 1'000'000;
constexpr double k_unlimited_scene_fps = 60.0; // scene time step when --fps is 0

double parse_run_fps(const std::string& text) {
    if (text == "0" || text == "unlimited") {
        return 0.0;
    }
    try {
        const double fps = harness::parse_rate_hz(text);
        if (fps <= 1000.0) {
            return fps;
        }
    } catch (const Error&) {
    }
    throw Error("--fps '" + text + "' is not a frame rate",
                "Give frames per second from 0 (unlimited) to 1000, e.g. 60");
}

// The scene, its tasks, the frame loop and its outputs.
void add_scene_options(CLI::App* sub, const std::shared_ptr<RunArgs>& args) {
    sub->add_option("--scene", args->scene, "glTF 2.0 scene (.gltf or .glb); default: the demo");
    sub->add_option("--tasks", args->tasks,
                    "Tasks file (JSON, docs/tasks-json.md); default: the demo's tasks, or an "
                    "orbit and a minimap capture fitted to the scene");
    sub->add_option("--frames", args->frames, "Main view frames to render")
        ->check(whole_number(1, k_max_frames))
        ->capture_default_str();
    sub->add_option("--fps", args->fps,
                    "Main view frame rate (0: unlimited); the scene advances 1/fps per frame "
                    "(1/60 when unlimited)")
        ->capture_default_str();
    sub->add_option("--size", args->size, "Main view size WIDTHxHEIGHT")->capture_default_str();
    sub->add_option("--out", args->out, "Output folder (PNGs, report.json)")->capture_default_str();
    sub->add_option("--placement", args->placement,
                    "Overrides every task's placement: auto (the scheduler decides every frame "
                    "from the calibration profile and measured timings), primary, worker (the "
                    "worker with the fewest tasks), worker:N, an adapter index or device:SELECTOR");
    sub->add_option("--profile", args->profile,
                    "Calibration profile for auto placement; default: the one `tandem calibrate` "
                    "wrote ($XDG_CACHE_HOME/tandem/profile.json)");
    sub->add_flag("--explain", args->explain,
                  "Print each placement decision that changed something, with its numbers");
    sub->add_flag("--openings-are-separate", args->openings_are_separate,
                  "Auto placement treats openings of one physical device (--virtual-devices) as "
                  "separate devices, so that it moves tasks between them although that frees "
                  "nothing: for tests and demos; the explanations say so");
    sub->add_option("--png-every", args->png_every,
                    "Write the main view every K-th frame (0: only the last)")
        ->check(whole_number(0, k_max_frames))
        ->capture_default_str();
    sub->add_option("--slots", args->slots, "Slots in each task's ring (2-16)")
        ->check(whole_number(2, 16))
        ->capture_default_str();
    sub->add_option("--timeout-ms", args->timeout_ms,
                    "A worker whose work is not ready within this time is lost")
        ->check(whole_number(1, k_max_timeout_ms))
        ->capture_default_str();
    sub->add_option("--trace", args->trace,
                    "Write a Chrome trace-event JSON file (Perfetto, chrome://tracing)");
    sub->add_option("--demo-crowd", args->demo_crowd,
                    "Add N detailed spheres (" + std::to_string(harness::crowd_sphere_triangles()) +
                        " triangles each) to the built-in demo: a load for measuring offload "
                        "(0 to " +
                        std::to_string(harness::max_demo_crowd()) + ")")
        ->check(whole_number(0, harness::max_demo_crowd()))
        ->capture_default_str();
    sub->add_option("--clock", args->clock,
                    "frames: the scene advances 1/fps per frame (reproducible); wall: scene time "
                    "and task rates follow the wall clock (for timing runs)")
        ->capture_default_str();
}

// --post and the options that only it takes.
void add_post_options(CLI::App* sub, const std::shared_ptr<RunArgs>& args) {
    sub->add_option("--post", args->post,
                    "Instead of the scene's capture tasks, send every main view frame to one "
                    "post-processing task (placed on a worker unless --placement says otherwise) "
                    "and show its output: interpolate (frame generation, with the motion given "
                    "by --motion; real and generated frames interleave), upscale (the view "
                    "rendered at --render-scale, upscaled to --size by --upscaler) or blur. "
                    "Reports the "
                    "quality against a reference rendered on the primary, beside a naive "
                    "baseline");
    sub->add_option_function<double>(
        "--render-scale", [args](const double& scale) { args->render_scale = scale; },
        "--post upscale: the render size as a fraction of --size, above 0 and at "
        "most 1 (default 0.5)");
    sub->add_option("--upscaler", args->upscaler,
                    "--post upscale: temporal (the view rendered with a sub-pixel jitter, its "
                    "frames accumulated along the motion vectors; the default) or spatial (each "
                    "frame alone, clamped Lanczos-3 with light sharpening)");
    sub->add_option("--motion", args->motion,
                    "--post interpolate: engine (the task takes the view's colour, depth and "
                    "motion vectors; the default) or colour (the task takes the colour alone and "
                    "estimates the motion from the frames, as for a program that gives none)");
    sub->add_option("--inputs", args->inputs,
                    "--post: how the frame reaches the task: lend (the view renders into the "
                    "images Tandem lends and signals their loan's semaphore: nothing copied on "
                    "the primary, and the submit makes no Vulkan call) or copy (Tandem copies "
                    "the view's own images at submit)")
        ->capture_default_str();
    sub->add_option("--input-copies", args->input_copies,
                    "--post --inputs copy: how the primary copies the view's colour "
                    "(RuntimeOptions::input_copies): auto (a compute dispatch on a GPU, the copy "
                    "command on a CPU device), compute or command; depth and motion always take "
                    "the copy command")
        ->check(CLI::IsMember({"auto", "compute", "command"}))
        ->capture_default_str();
}

// --post and its options, checked against each other and the scene's size.
std::optional<harness::PostKind> check_post_args(const RunArgs& args,
                                                 const harness::RunScene& scene) {
    std::optional<harness::PostKind> post;
    if (!args.post.empty()) {
        post = harness::parse_post_kind(args.post);
        (void)harness::post_render_size(*post, args.render_scale, scene.width(), scene.height());
    } else if (args.render_scale) {
        throw Error("--render-scale applies to --post upscale only",
                    "Leave it out, or add --post upscale");
    }
    if (!args.upscaler.empty() && post != harness::PostKind::Upscale) {
        throw Error("--upscaler applies to --post upscale only",
                    "Leave it out, or add --post upscale");
    }
    if (!args.upscaler.empty() && args.upscaler != "temporal" && args.upscaler != "spatial") {
        throw Error("--upscaler '" + args.upscaler + "' is not an upscaler",
                    "Use temporal or spatial");
    }
    if (!args.motion.empty() && post != harness::PostKind::Interpolate) {
        throw Error(ErrorCategory::InvalidArgument, "--motion applies to --post interpolate only",
                    "Leave it out, or add --post interpolate");
    }
    if (!args.motion.empty() && args.motion != "engine" && args.motion != "colour") {
        throw Error(ErrorCategory::InvalidArgument,
                    "--motion '" + args.motion + "' is not a source of motion",
                    "Use engine (the scene's motion vectors) or colour (estimated from the "
                    "frames alone)");
    }
    if (args.inputs != "lend" && args.inputs != "copy") {
        throw Error("--inputs '" + args.inputs + "' is not a way of sending inputs",
                    "Use lend or copy");
    }
    return post;
}

std::filesystem::path create_out_dir(const std::string& out) {
    const std::filesystem::path out_dir(out);
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec || !std::filesystem::is_directory(out_dir)) {
        throw Error("Cannot create the output folder '" + out + "'",
                    "Give a writable folder with --out");
    }
    return out_dir;
}

// The scheduler's options: the profile found (or why none was, in `profile_note`), and a
// decision every frame, as the demo always did (a run is short; --explain shows each).
RuntimeOptions run_runtime_options(const RunArgs& args, const GlobalOptions& global, double fps,
                                   std::string& profile_note) {
    RuntimeOptions options = runtime_options(global, std::chrono::milliseconds(args.timeout_ms));
    options.trace = !args.trace.empty();
    options.scheduler.profile = harness::existing_profile_path(args.profile, profile_note);
    options.scheduler.profile_optional = true;
    options.scheduler.primary_frame_rate_hz = fps > 0 ? fps : k_unlimited_scene_fps;
    options.scheduler.decision_interval = std::chrono::milliseconds(0);
    // Without a profile, the runtime measures a worker's cost of each auto capture with a few
    // trial jobs of its latest snapshot (never shown, never counted as the run's updates).
    options.scheduler.openings_are_separate = args.openings_are_separate;
    options.input_copies = args.input_copies == "compute" ? RuntimeOptions::InputCopies::Compute
                           : args.input_copies == "command"
                               ? RuntimeOptions::InputCopies::CopyCommand
                               : RuntimeOptions::InputCopies::Auto;
    return options;
}

int run_post_processing(Runtime& runtime, harness::RunScene& scene, const RunArgs& args,
                        const RunSettings& settings) {
    PostModeArgs post_args;
    harness::PostRunOptions& options = post_args.options;
    options.kind = *settings.post;
    options.frames = args.frames;
    options.fps = settings.fps;
    options.scene_dt = settings.scene_dt;
    options.wall_clock = settings.wall_clock;
    options.render_scale = args.render_scale;
    options.temporal_upscale = args.upscaler != "spatial";
    options.colour_motion = args.motion == "colour";
    if (!args.placement.empty()) {
        options.placement = args.placement;
    }
    options.slots = args.slots;
    options.lend_inputs = args.inputs == "lend";
    options.out_dir = settings.out_dir;
    options.png_every = args.png_every;
    options.timeout_ms = args.timeout_ms;
    post_args.scene_label = scene.demo() ? "(built-in demo)" : args.scene;
    post_args.fps_label =
        settings.fps > 0 ? harness::fixed(settings.fps, 0) + " FPS" : std::string("unlimited FPS");
    post_args.json = args.json;
    post_args.quiet = args.quiet;
    const int status = run_post_mode(runtime, scene, post_args);
    if (!args.trace.empty()) {
        write_trace(runtime, args.trace);
    }
    return status;
}

CaptureModeArgs capture_mode_args(const RunArgs& args, const RunSettings& settings,
                                  const RuntimeOptions& options, const std::string& profile_note) {
    CaptureModeArgs capture;
    capture.frames = args.frames;
    capture.fps = settings.fps;
    capture.scene_dt = settings.scene_dt;
    capture.wall_clock = settings.wall_clock;
    capture.clock = args.clock;
    capture.slots = args.slots;
    capture.timeout_ms = args.timeout_ms;
    capture.png_every = args.png_every;
    capture.out_dir = settings.out_dir;
    capture.scene_path = args.scene;
    capture.tasks_path = args.tasks;
    capture.profile = options.scheduler.profile;
    capture.profile_note = profile_note;
    capture.trace = args.trace;
    capture.explain = args.explain;
    capture.json = args.json;
    capture.quiet = args.quiet;
    return capture;
}

// Every input is checked before a device is opened (the numbers already by the parser).
int run_command(const RunArgs& args, const GlobalOptions& global) {
    RunSettings settings;
    settings.fps = parse_run_fps(args.fps);
    harness::RunSceneRequest request;
    request.scene_path = args.scene;
    request.tasks_path = args.tasks;
    request.size = args.size;
    request.demo_crowd = args.demo_crowd;
    if (args.clock != "frames" && args.clock != "wall") {
        throw Error("--clock '" + args.clock + "' is not a clock", "Use frames or wall");
    }
    settings.wall_clock = args.clock == "wall";
    if (!args.placement.empty()) {
        request.placement = args.placement;
    }
    harness::RunScene scene(request);
    settings.post = check_post_args(args, scene);
    settings.out_dir = create_out_dir(args.out);
    settings.scene_dt = 1.0 / (settings.fps > 0 ? settings.fps : k_unlimited_scene_fps);

    std::string profile_note;
    const RuntimeOptions options = run_runtime_options(args, global, settings.fps, profile_note);
    Runtime runtime(options);
    if (settings.post) {
        return run_post_processing(runtime, scene, args, settings);
    }
    return run_capture_mode(runtime, scene,
                            capture_mode_args(args, settings, options, profile_note));
}

} // namespace

Runner add_run_command(CLI::App& app, const GlobalOptions& global) {
    auto args = std::make_shared<RunArgs>();
    CLI::App* sub = app.add_subcommand(
        "run", "Render a scene on the primary with its capture tasks on worker GPUs, headless; "
               "write PNGs and a JSON report (no arguments: the built-in demo)");
    add_scene_options(sub, args);
    add_post_options(sub, args);
    sub->add_flag("--json", args->json, "Print the report JSON to stdout too");
    sub->add_flag("--quiet", args->quiet, "No progress line and no summary");
    return [args, &global]() -> int { return run_command(*args, global); };
}

} // namespace tandem::cli
