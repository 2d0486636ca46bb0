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
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "harness/capture_tasks.hpp"
#include "harness/main_view.hpp"
#include "harness/png.hpp"
#include "harness/post_run.hpp"
#include "harness/profile_file.hpp"
#include "harness/rate.hpp"
#include "harness/run_report.hpp"
#include "harness/run_scene.hpp"
#include "harness/statistics.hpp"
#include "harness/table.hpp"
#include "run_post_mode.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"
#include "tandem/trace.hpp"

namespace tandem::cli {
namespace {

using Clock = std::chrono::steady_clock;

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
    std::string upscaler;               // --post upscale: temporal or spatial, when given
    std::string motion;                 // --post interpolate: engine or colour, when given
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

struct TaskRun {
    double period_s = 0;
    double next_submit_s = 0;
    TaskId id;
    // Accepted generation -> scene time (one generation space per task, wherever it runs).
    std::map<std::uint64_t, double> generation_time;
    std::optional<Lease> lease; // this frame's
    std::uint64_t shown_generation = 0;
    std::optional<std::uint32_t> shown_adapter;
    double shown_time_s = 0;
    std::uint64_t frames_shown = 0; // frames that had an output to show
    std::string png;
    bool failed_once = false;
};

} // namespace

Runner add_run_command(CLI::App& app, const GlobalOptions& global) {
    auto args = std::make_shared<RunArgs>();
    CLI::App* sub = app.add_subcommand(
        "run", "Render a scene on the primary with its capture tasks on worker GPUs, headless; "
               "write PNGs and a JSON report (no arguments: the built-in demo)");
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
                    "frame alone, edge-directed with sharpening)");
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
    sub->add_flag("--json", args->json, "Print the report JSON to stdout too");
    sub->add_flag("--quiet", args->quiet, "No progress line and no summary");

    return [args, &global]() -> int {
        // Every input is checked before a device is opened (the numbers already by the parser).
        const double fps = parse_run_fps(args->fps);
        harness::RunSceneRequest request;
        request.scene_path = args->scene;
        request.tasks_path = args->tasks;
        request.size = args->size;
        request.demo_crowd = args->demo_crowd;
        if (args->clock != "frames" && args->clock != "wall") {
            throw Error("--clock '" + args->clock + "' is not a clock", "Use frames or wall");
        }
        const bool wall_clock = args->clock == "wall";
        if (!args->placement.empty()) {
            request.placement = args->placement;
        }
        harness::RunScene scene(request);
        std::optional<harness::PostKind> post;
        const std::optional<double> render_scale = args->render_scale;
        if (!args->post.empty()) {
            post = harness::parse_post_kind(args->post);
            (void)harness::post_render_size(*post, render_scale, scene.width(), scene.height());
        } else if (render_scale) {
            throw Error("--render-scale applies to --post upscale only",
                        "Leave it out, or add --post upscale");
        }
        if (!args->upscaler.empty() && post != harness::PostKind::Upscale) {
            throw Error("--upscaler applies to --post upscale only",
                        "Leave it out, or add --post upscale");
        }
        if (!args->upscaler.empty() && args->upscaler != "temporal" &&
            args->upscaler != "spatial") {
            throw Error("--upscaler '" + args->upscaler + "' is not an upscaler",
                        "Use temporal or spatial");
        }
        if (!args->motion.empty() && post != harness::PostKind::Interpolate) {
            throw Error(ErrorCategory::InvalidArgument,
                        "--motion applies to --post interpolate only",
                        "Leave it out, or add --post interpolate");
        }
        if (!args->motion.empty() && args->motion != "engine" && args->motion != "colour") {
            throw Error(ErrorCategory::InvalidArgument,
                        "--motion '" + args->motion + "' is not a source of motion",
                        "Use engine (the scene's motion vectors) or colour (estimated from the "
                        "frames alone)");
        }
        if (args->inputs != "lend" && args->inputs != "copy") {
            throw Error("--inputs '" + args->inputs + "' is not a way of sending inputs",
                        "Use lend or copy");
        }
        const std::vector<harness::RunTaskInfo>& specs = scene.tasks();
        const std::filesystem::path out_dir(args->out);
        {
            std::error_code ec;
            std::filesystem::create_directories(out_dir, ec);
            if (ec || !std::filesystem::is_directory(out_dir)) {
                throw Error("Cannot create the output folder '" + args->out + "'",
                            "Give a writable folder with --out");
            }
        }
        const double scene_dt = 1.0 / (fps > 0 ? fps : k_unlimited_scene_fps);

        const bool any_auto =
            std::any_of(specs.begin(), specs.end(), [](const auto& t) { return t.automatic; });
        RuntimeOptions options =
            runtime_options(global, std::chrono::milliseconds(args->timeout_ms));
        options.trace = !args->trace.empty();
        std::string profile_note;
        options.scheduler.profile = harness::existing_profile_path(args->profile, profile_note);
        options.scheduler.profile_optional = true;
        options.scheduler.primary_frame_rate_hz = fps > 0 ? fps : k_unlimited_scene_fps;
        // Decide every frame, as the demo always did (a run is short; --explain shows each).
        options.scheduler.decision_interval = std::chrono::milliseconds(0);
        // Without a profile, the runtime measures a worker's cost of each auto capture with a few
        // trial jobs of its latest snapshot (never shown, never counted as the run's updates).
        options.scheduler.openings_are_separate = args->openings_are_separate;
        Runtime runtime(options);
        if (post) {
            PostModeArgs post_args;
            post_args.options.kind = *post;
            post_args.options.frames = args->frames;
            post_args.options.fps = fps;
            post_args.options.scene_dt = scene_dt;
            post_args.options.wall_clock = wall_clock;
            post_args.options.render_scale = render_scale;
            post_args.options.temporal_upscale = args->upscaler != "spatial";
            post_args.options.colour_motion = args->motion == "colour";
            if (!args->placement.empty()) {
                post_args.options.placement = args->placement;
            }
            post_args.options.slots = args->slots;
            post_args.options.lend_inputs = args->inputs == "lend";
            post_args.options.out_dir = out_dir;
            post_args.options.png_every = args->png_every;
            post_args.options.timeout_ms = args->timeout_ms;
            post_args.scene_label = scene.demo() ? "(built-in demo)" : args->scene;
            post_args.fps_label =
                fps > 0 ? harness::fixed(fps, 0) + " FPS" : std::string("unlimited FPS");
            post_args.json = args->json;
            post_args.quiet = args->quiet;
            const int status = run_post_mode(runtime, scene, post_args);
            if (!args->trace.empty()) {
                write_trace(runtime, args->trace);
            }
            return status;
        }

        harness::CaptureTasks captures(scene);
        std::vector<DeviceInfo> all_devices{runtime.primary_device()};
        for (const DeviceInfo& w : runtime.worker_devices()) {
            all_devices.push_back(w);
        }
        // The adapter a task runs on (TaskStats::device).
        const auto device_of = [&](std::uint32_t index) -> const DeviceInfo& {
            for (const DeviceInfo& d : all_devices) {
                if (d.index == index) {
                    return d;
                }
            }
            return all_devices.front();
        };
        nlohmann::json scheduler_json;
        if (!options.scheduler.profile.empty()) {
            scheduler_json["profile_path"] = options.scheduler.profile;
        }
        std::vector<TaskRun> tasks(specs.size());
        std::vector<TaskId> task_ids;
        std::uint32_t max_w = 1;
        std::uint32_t max_h = 1;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            const harness::RunTaskInfo& spec = specs[i];
            tasks[i].id = runtime.register_task(captures.desc(i, args->slots));
            tasks[i].period_s = 1.0 / spec.rate_hz;
            task_ids.push_back(tasks[i].id);
            max_w = std::max(max_w, spec.width);
            max_h = std::max(max_h, spec.height);
        }
        {
            const PlacementReport first = runtime.placement();
            scheduler_json["model"] = first.model;
            const bool profile_used = first.model.rfind("profile ", 0) == 0;
            if (!options.scheduler.profile.empty() && !profile_used) {
                profile_note = first.model;
            }
            scheduler_json["profile"] =
                profile_used ? nlohmann::json(options.scheduler.profile) : nlohmann::json();
            if (any_auto && !profile_note.empty()) {
                std::fprintf(stderr, "tandem: %s; auto placement uses measured timings only\n",
                             profile_note.c_str());
            }
            if (!profile_note.empty()) {
                scheduler_json["profile_note"] = profile_note;
            }
        }
        // The scheduler's decisions: the first, each that changed something, and the last.
        nlohmann::json decisions = nlohmann::json::array();
        std::uint64_t last_decision_frame = 0;
        std::uint64_t decisions_seen = 0;
        std::uint64_t decisions_changed = 0;
        std::FILE* explain_out = args->json ? stderr : stdout;
        // Records (and with --explain prints) the decisions the pumps took that changed something.
        const auto note_decisions = [&](std::uint64_t frame, bool progress_line) {
            const std::uint64_t taken = runtime.placement_decisions();
            if (taken == decisions_seen) {
                return;
            }
            const bool first = decisions_seen == 0;
            decisions_seen = taken;
            last_decision_frame = frame;
            const PlacementReport report = runtime.placement();
            if (!first && report.moves == 0) {
                return;
            }
            // JSON only for the decisions kept (the per-frame path stays cheap).
            nlohmann::json j = nlohmann::json::parse(report.json);
            j["frame"] = frame;
            ++decisions_changed;
            decisions.push_back(j);
            if (args->explain) {
                if (progress_line) {
                    std::fprintf(stderr, "\r\033[K");
                }
                std::fprintf(explain_out, "placement at frame %llu:\n%s",
                             static_cast<unsigned long long>(frame), report.text.c_str());
                std::fflush(explain_out);
            }
        };
        note_decisions(0, false);

        const bool progress = !args->quiet && ::isatty(STDERR_FILENO) != 0;
        if (!args->quiet) {
            std::fprintf(stderr, "run: %s, %zu task(s), %llu frames at %s, main view %ux%u on %s\n",
                         scene.demo() ? "built-in demo" : args->scene.c_str(), tasks.size(),
                         static_cast<unsigned long long>(args->frames),
                         fps > 0 ? (harness::fixed(fps, 0) + " FPS").c_str() : "unlimited FPS",
                         scene.width(), scene.height(), runtime.primary_device().name.c_str());
            for (std::size_t i = 0; i < tasks.size(); ++i) {
                const TaskStats s = runtime.stats(tasks[i].id);
                std::fprintf(stderr, "  %-12s %ux%u @ %g Hz on %s (adapter %u) via %s%s\n",
                             specs[i].name.c_str(), specs[i].width, specs[i].height,
                             specs[i].rate_hz, s.device_name.c_str(), s.device,
                             transfer_path_name(s).c_str(), specs[i].automatic ? " (auto)" : "");
            }
        }

        const VkExtent2D extent{scene.width(), scene.height()};
        nlohmann::json main_pngs = nlohmann::json::array();
        std::uint64_t frames_done = 0;
        double last_time_s = 0;
        std::string failure;
        const auto start = Clock::now();
        const auto frame_period = fps > 0 ? std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(1.0 / fps))
                                          : Clock::duration::zero();
        std::vector<double> main_gpu_ms;
        std::vector<double> frame_ms; // start to start, frames that wrote no PNG
        bool have_timestamps = false;
        {
            harness::MainView view(runtime, scene, extent, static_cast<std::uint32_t>(tasks.size()),
                                   VkExtent2D{max_w, max_h});
            auto next_frame = start;
            auto next_progress = start;
            Clock::time_point previous_start{};
            bool previous_counts = false;
            for (std::uint64_t frame = 0; frame < args->frames; ++frame) {
                const bool last = frame + 1 == args->frames;
                const auto frame_start = Clock::now();
                if (previous_counts) {
                    frame_ms.push_back(
                        std::chrono::duration<double, std::milli>(frame_start - previous_start)
                            .count());
                }
                previous_start = frame_start;
                const double t = wall_clock
                                     ? std::chrono::duration<double>(Clock::now() - start).count()
                                     : static_cast<double>(frame) * scene_dt;
                scene.animate(t);
                for (std::size_t i = 0; i < tasks.size(); ++i) {
                    TaskRun& task = tasks[i];
                    if (t + 1e-9 < task.next_submit_s) {
                        continue;
                    }
                    while (task.next_submit_s <= t + 1e-9) {
                        task.next_submit_s += task.period_s;
                    }
                    const auto bytes = scene.task_snapshot(i);
                    const SubmitResult r = runtime.submit(task.id, bytes);
                    if (r.accepted()) {
                        task.generation_time[r.generation] = t;
                    } else if (r.status == SubmitStatus::Failed && !task.failed_once) {
                        task.failed_once = true;
                        if (failure.empty()) {
                            failure = "task '" + specs[i].name + "' failed: " + r.reason;
                        }
                    }
                }
                if (last) {
                    // The last frame shows every task's newest output: wait (bounded) until
                    // nothing is in flight.
                    const auto deadline =
                        Clock::now() + std::chrono::milliseconds(args->timeout_ms) * 2;
                    for (;;) {
                        runtime.pump();
                        bool busy = false;
                        for (const TaskRun& task : tasks) {
                            for (const TaskDeviceStats& d : runtime.stats(task.id).devices) {
                                busy = busy || (d.in_flight > 0 && !d.worker_lost);
                            }
                        }
                        if (!busy || Clock::now() > deadline) {
                            break;
                        }
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    }
                }
                runtime.pump();
                note_decisions(frame, progress);
                std::vector<Lease> leases;
                std::vector<std::optional<std::uint32_t>> shown(tasks.size());
                for (std::size_t i = 0; i < tasks.size(); ++i) {
                    tasks[i].lease = runtime.acquire(tasks[i].id).lease;
                    if (tasks[i].lease) {
                        shown[i] = static_cast<std::uint32_t>(leases.size());
                        leases.push_back(*tasks[i].lease);
                    }
                }
                const bool write_main =
                    last || (args->png_every > 0 && frame % args->png_every == 0);
                harness::MainFrameRequest req;
                req.leases = leases;
                req.shown = shown;
                req.read_main = write_main;
                req.read_leases = last;
                const std::uint64_t value = view.render(scene, req);
                for (TaskRun& task : tasks) {
                    if (task.lease) {
                        runtime.release(*task.lease, value);
                        ++task.frames_shown;
                        task.shown_generation = task.lease->generation;
                        // Not always the task's device: a task moving shows its previous
                        // device's newest output until the new one has a newer one.
                        task.shown_adapter = task.lease->device;
                        auto& times = task.generation_time;
                        const auto it = times.find(task.shown_generation);
                        task.shown_time_s = it != times.end() ? it->second : task.shown_time_s;
                        // Older generations will never be shown again.
                        times.erase(times.begin(), it);
                    }
                }
                if (value == 0) {
                    failure = "frame " + std::to_string(frame) + ": " + view.last_error();
                    break;
                }
                ++frames_done;
                last_time_s = t;
                // Frames that wait for the GPU to write PNGs are not timed.
                previous_counts = !(write_main || last);
                if (write_main || last) {
                    if (view.wait(value, std::chrono::seconds(10)) != VK_SUCCESS) {
                        failure = "frame " + std::to_string(frame) + " did not finish in 10 s";
                        break;
                    }
                    if (write_main) {
                        char name[64];
                        std::snprintf(name, sizeof name, "main_%05llu.png",
                                      static_cast<unsigned long long>(frame));
                        const auto path = (out_dir / name).string();
                        harness::write_png(path, extent.width, extent.height,
                                           view.main_pixels(value));
                        main_pngs.push_back(path);
                    }
                    if (last) {
                        for (std::size_t i = 0; i < tasks.size(); ++i) {
                            if (!shown[i]) {
                                continue;
                            }
                            const auto path =
                                (out_dir / ("task_" + harness::file_stem(specs[i].name) + ".png"))
                                    .string();
                            harness::write_png(path, specs[i].width, specs[i].height,
                                               view.lease_pixels(value, *shown[i]));
                            tasks[i].png = path;
                        }
                    }
                }
                const auto now = Clock::now();
                if (progress && (now >= next_progress || last)) {
                    next_progress = now + std::chrono::milliseconds(250);
                    std::string line = "\r  frame " + std::to_string(frame + 1) + "/" +
                                       std::to_string(args->frames);
                    for (std::size_t i = 0; i < tasks.size(); ++i) {
                        line += "  " + specs[i].name + " gen " +
                                std::to_string(tasks[i].shown_generation);
                    }
                    std::fprintf(stderr, "%s\033[K", line.c_str());
                    std::fflush(stderr);
                }
                if (frame_period > Clock::duration::zero() && !last) {
                    next_frame += frame_period;
                    if (next_frame < Clock::now()) {
                        next_frame = Clock::now();
                    }
                    std::this_thread::sleep_until(next_frame);
                }
            }
            if (progress) {
                std::fprintf(stderr, "\n");
            }
            main_gpu_ms = view.gpu_ms();
            have_timestamps = view.has_timestamps();
        }
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        runtime.pump();

        // The report.
        nlohmann::json report;
        report["scene"] = scene.demo() ? "(built-in demo)" : args->scene;
        report["tasks_file"] = args->tasks.empty() ? "(built in)" : args->tasks;
        report["frames"] = frames_done;
        report["percentile_rule"] = "nearest rank"; // every p50/p90/p99 in the report
        report["fps"] = fps > 0 ? nlohmann::json(fps) : nlohmann::json("unlimited");
        report["scene_dt_s"] = scene_dt;
        report["elapsed_s"] = elapsed;
        report["frame_rate_hz"] = elapsed > 0 ? static_cast<double>(frames_done) / elapsed : 0.0;
        report["frame_time_ms"] = harness::frame_time_json(
            frame_ms, "wall clock, frame start to next frame start; frames writing PNGs are left "
                      "out");
        report["clock"] = args->clock;
        double gpu_total = 0;
        for (double v : main_gpu_ms) {
            gpu_total += v;
        }
        nlohmann::json main_json = {{"camera", scene.main_camera()},
                                    {"size", {scene.width(), scene.height()}},
                                    {"last_time_s", last_time_s},
                                    {"pngs", main_pngs}};
        if (have_timestamps) {
            main_json["gpu_ms"] = {{"source", "timestamps"},
                                   {"frames", main_gpu_ms.size()},
                                   {"total", gpu_total},
                                   {"p50", harness::percentile(main_gpu_ms, 0.5)},
                                   {"p99", harness::percentile(main_gpu_ms, 0.99)}};
        }
        report["main_view"] = main_json;

        nlohmann::json tasks_json = nlohmann::json::array();
        bool lost = false;
        std::set<std::uint32_t> lost_workers;
        nlohmann::json final_placement = nlohmann::json::object();
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            const harness::RunTaskInfo& spec = specs[i];
            const TaskStats s = runtime.stats(tasks[i].id);
            lost = lost || s.worker_lost;
            // Counters over every device the task ran on; latencies of the last one.
            nlohmann::json registrations = nlohmann::json::array();
            for (const TaskDeviceStats& r : s.devices) {
                // GPU time of one capture there, from timestamps (null without them): the mean
                // of every update, the first update, and the mean of the others.
                const harness::CaptureGpuTime c = harness::capture_gpu_time(r);
                const auto json_of = [](const std::optional<double>& ms) {
                    return ms ? nlohmann::json(*ms) : nlohmann::json(nullptr);
                };
                registrations.push_back(
                    {{"adapter", r.device},
                     {"active", r.active},
                     {"accepted", r.accepted},
                     {"ready", r.ready},
                     {"newest_generation", r.newest_generation},
                     {"worker_lost", r.worker_lost},
                     {"gpu_ms_per_update", json_of(c.per_update_ms)},
                     {"gpu_ms_first_update", json_of(c.first_update_ms)},
                     {"gpu_ms_per_later_update", json_of(c.per_later_update_ms)}});
                if (r.worker_lost && r.device != runtime.primary_device().index) {
                    lost_workers.insert(r.device);
                }
            }
            const bool automatic = spec.automatic;
            const DeviceInfo& device = device_of(s.device);
            final_placement[spec.name] = {{"adapter", device.index},
                                          {"placement", spec.placement.to_string()},
                                          {"decided_by", automatic ? "scheduler" : "manual"},
                                          {"moves", s.moves}};
            nlohmann::json t = {
                {"name", spec.name},
                {"camera", spec.camera},
                {"size", {spec.width, spec.height}},
                {"rate_hz", spec.rate_hz},
                {"placement", spec.placement.to_string()},
                {"runtime_placement",
                 automatic ? std::string("scheduler") : spec.placement.to_string()},
                {"device", harness::device_json(device)},
                {"on_primary", device.index == runtime.primary_device().index},
                {"transfer_path", transfer_path_name(s)},
                {"outputs_written_in_place", s.outputs_written_in_place},
                {"registrations", registrations},
                {"accepted", s.accepted},
                {"busy", s.busy},
                {"failed", s.failed},
                {"ready", s.ready},
                {"superseded", s.superseded},
                {"ready_rate_hz", elapsed > 0 ? static_cast<double>(s.ready) / elapsed : 0.0},
                {"latency_us",
                 {{"worker_submit", harness::latency_json(s.worker_submit)},
                  {"transfer_queued", harness::latency_json(s.transfer_queued)},
                  {"worker_done", harness::latency_json(s.worker_done)},
                  {"ready_observed", harness::latency_json(s.ready_observed)}}},
                {"frames_shown", tasks[i].frames_shown},
                {"newest_generation", s.newest_generation},
                {"shown_generation", tasks[i].shown_generation},
                {"shown_adapter", tasks[i].shown_adapter ? nlohmann::json(*tasks[i].shown_adapter)
                                                         : nlohmann::json()},
                {"shown_time_s", tasks[i].shown_time_s},
                {"surface", spec.surface ? nlohmann::json(*spec.surface) : nlohmann::json()},
                {"png", tasks[i].png.empty() ? nlohmann::json() : nlohmann::json(tasks[i].png)},
                {"worker_lost", s.worker_lost}};
            if (s.worker_lost) {
                t["worker_lost_reason"] = s.worker_lost_reason;
            }
            tasks_json.push_back(t);
        }
        report["tasks"] = tasks_json;
        const PlacementReport final_report = runtime.placement();
        if (final_report.decision > 0 &&
            (decisions.empty() || decisions.back()["decision"] != final_report.decision)) {
            nlohmann::json last = nlohmann::json::parse(final_report.json);
            last["frame"] = last_decision_frame;
            decisions.push_back(last);
        }
        scheduler_json["decisions_total"] = final_report.decision;
        scheduler_json["decisions_changed"] = decisions_changed;
        scheduler_json["decisions"] = decisions;
        scheduler_json["final"] = final_placement;
        scheduler_json["lost_workers"] = lost_workers;
        scheduler_json["failures"] = final_report.failures;
        report["scheduler"] = scheduler_json;

        const auto capture_busy = harness::CaptureTasks::gpu_by_device(runtime, task_ids);
        nlohmann::json devices = nlohmann::json::array();
        {
            const std::vector<DeviceInfo>& all = all_devices;
            for (std::size_t d = 0; d < all.size(); ++d) {
                nlohmann::json names = nlohmann::json::array();
                for (std::size_t i = 0; i < tasks.size(); ++i) {
                    if (runtime.stats(tasks[i].id).device == all[d].index) {
                        names.push_back(specs[i].name);
                    }
                }
                nlohmann::json j = harness::device_json(all[d]);
                j["role"] = d == 0 ? "primary" : "worker";
                j["tasks"] = names;
                // Busy time from GPU timestamps: the scene-capture commands of the tasks there
                // and, on the primary, the main view's frames. The runtime's own transfer and
                // copy commands are not included.
                const auto t = capture_busy.find(all[d].index);
                const bool tasks_timed = t == capture_busy.end() || t->second.timed;
                const double tasks_ms = t == capture_busy.end() ? 0.0 : t->second.busy_ms;
                j["tasks_gpu_ms"] = tasks_timed ? nlohmann::json(tasks_ms) : nlohmann::json();
                if (d == 0) {
                    j["main_view_gpu_ms"] =
                        have_timestamps ? nlohmann::json(gpu_total) : nlohmann::json();
                }
                const bool timed = tasks_timed && (d != 0 || have_timestamps);
                j["busy_ms"] = timed ? nlohmann::json(tasks_ms + (d == 0 ? gpu_total : 0.0))
                                     : nlohmann::json();
                j["busy_percent"] =
                    timed && elapsed > 0
                        ? nlohmann::json(100.0 * j["busy_ms"].get<double>() / (elapsed * 1000.0))
                        : nlohmann::json();
                j["busy_source"] = timed ? "GPU timestamps of the capture commands (and the main "
                                           "view on the primary); transfers not included"
                                         : "no timestamps on this device's queue";
                devices.push_back(j);
            }
        }
        report["devices"] = devices;
        if (!failure.empty()) {
            report["failure"] = failure;
        }
        const auto report_path = (out_dir / "report.json").string();
        {
            std::FILE* f = std::fopen(report_path.c_str(), "wb");
            const std::string text = report.dump(2) + "\n";
            if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
                if (f != nullptr) {
                    std::fclose(f);
                }
                throw Error("Cannot write '" + report_path + "'",
                            "Give a writable folder with --out");
            }
            std::fclose(f);
        }
        report_validation(runtime);
        if (!args->trace.empty()) {
            write_trace(runtime, args->trace);
        }
        if (args->json) {
            std::printf("%s\n", report.dump(2).c_str());
        }
        if (!args->quiet) {
            std::FILE* out = args->json ? stderr : stdout;
            harness::Table table({"task", "device", "path", "accepted", "busy", "ready", "ready Hz",
                                  "ready p50 ms", "p99 ms", "shown gen"});
            // A latency of no samples is none, not 0.00 ms.
            auto ms_text = [](const nlohmann::json& latency, const char* key) {
                return latency["count"].get<std::uint64_t>() == 0
                           ? std::string("none")
                           : harness::fixed(latency[key].get<double>() / 1000.0, 2);
            };
            for (const auto& t : tasks_json) {
                const auto& l = t["latency_us"]["ready_observed"];
                table.add(
                    {t["name"].get<std::string>(),
                     t["device"]["index"].dump() + " " + t["device"]["name"].get<std::string>(),
                     t["transfer_path"].get<std::string>(), t["accepted"].dump(), t["busy"].dump(),
                     t["ready"].dump(), harness::fixed(t["ready_rate_hz"].get<double>()),
                     ms_text(l, "p50_us"), ms_text(l, "p99_us"), t["shown_generation"].dump()});
            }
            table.print(out);
            std::fprintf(out, "%llu frames in %.2f s (%.1f FPS)",
                         static_cast<unsigned long long>(frames_done), elapsed,
                         report["frame_rate_hz"].get<double>());
            if (have_timestamps) {
                std::fprintf(out, ", main view GPU p50 %.2f ms",
                             harness::percentile(main_gpu_ms, 0.5));
            }
            std::fprintf(out, "\n");
            for (const auto& d : report["devices"]) {
                std::fprintf(
                    out, "%-7s adapter %s %s: busy %s\n", d["role"].get<std::string>().c_str(),
                    d["index"].dump().c_str(), d["name"].get<std::string>().c_str(),
                    d["busy_ms"].is_null()
                        ? "unknown (no timestamps)"
                        : (harness::fixed(d["busy_ms"].get<double>(), 1) + " ms (" +
                           harness::fixed(d["busy_percent"].get<double>(), 1) + "% of the run)")
                              .c_str());
            }
            for (const std::uint32_t w : lost_workers) {
                std::fprintf(out,
                             "worker adapter %u was lost: its auto tasks moved in the next frame "
                             "(its last outputs stayed on their surfaces until then)\n",
                             w);
            }
            if (!decisions.empty()) {
                std::fprintf(out, "scheduler: %s; %llu of %llu decisions changed a placement\n",
                             scheduler_json["model"].get<std::string>().c_str(),
                             static_cast<unsigned long long>(decisions_changed),
                             static_cast<unsigned long long>(
                                 scheduler_json["decisions_total"].get<std::uint64_t>()));
            }
            std::fprintf(out, "wrote %zu main view PNG(s), task PNGs and %s\n", main_pngs.size(),
                         report_path.c_str());
        }
        if (!failure.empty()) {
            std::fprintf(stderr, "tandem: error: %s\n", failure.c_str());
            return 1;
        }
        if (lost) {
            // A task stayed on a lost worker (a manual placement): its output stopped.
            std::fprintf(stderr, "tandem: error: a worker was lost (see %s)\n",
                         report_path.c_str());
            return 1;
        }
        return 0;
    };
}

} // namespace tandem::cli
