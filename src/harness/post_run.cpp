#include "harness/post_run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <thread>

#include "harness/adopted_primary.hpp"
#include "harness/main_view.hpp"
#include "harness/png.hpp"
#include "harness/run_report.hpp"
#include "harness/run_scene_state.hpp"
#include "harness/statistics.hpp"
#include "post/reference.hpp"
#include "render/headless.hpp"
#include "render/renderer.hpp"
#include "render/scene_capture.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "tandem/post.hpp"

namespace tandem::harness {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t k_frames_in_flight = 3;
constexpr double k_default_upscale_scale = 0.5;

// Quality of the sampled frames: the task's output and the naive baseline against the reference.
struct QualitySamples {
    std::vector<double> output_db;
    std::vector<double> baseline_db;
};

nlohmann::json db_json(const std::vector<double>& values) {
    if (values.empty()) {
        return nullptr;
    }
    double sum = 0;
    for (double v : values) {
        sum += v;
    }
    return {{"mean", sum / static_cast<double>(values.size())},
            {"min", *std::min_element(values.begin(), values.end())},
            {"max", *std::max_element(values.begin(), values.end())}};
}

// PSNR as JSON: identical images are +infinity, which JSON cannot hold.
double finite_db(double db) {
    return std::isfinite(db) ? db : 99.0;
}

detail::Rgba8Image side_by_side(const detail::Rgba8Image& left, const detail::Rgba8Image& right) {
    detail::Rgba8Image out(left.width + right.width, std::max(left.height, right.height));
    for (std::uint32_t y = 0; y < out.height; ++y) {
        for (std::uint32_t x = 0; x < out.width; ++x) {
            const bool is_left = x < left.width;
            const detail::Rgba8Image& src = is_left ? left : right;
            const std::uint32_t sx = is_left ? x : x - left.width;
            std::uint8_t* d = out.at(x, y);
            if (y < src.height) {
                std::copy_n(src.at(sx, y), 4, d);
            } else {
                d[3] = 255;
            }
        }
    }
    return out;
}

const char* output_word(PostKind kind) {
    switch (kind) {
    case PostKind::Blur:
        return "blurred";
    case PostKind::Upscale:
        return "upscaled";
    case PostKind::Interpolate:
        return "generated";
    }
    return "output";
}

TaskDesc post_desc(PostKind kind, bool temporal, bool colour_motion, std::uint32_t render_w,
                   std::uint32_t render_h, std::uint32_t width, std::uint32_t height) {
    switch (kind) {
    case PostKind::Blur:
        return blur_task("blur", width, height);
    case PostKind::Upscale:
        return temporal ? temporal_upscale_task("upscale", render_w, render_h, width, height)
                        : upscale_task("upscale", render_w, render_h, width, height);
    case PostKind::Interpolate:
        return colour_motion ? interpolate_colour_task("interpolate", width, height)
                             : interpolate_task("interpolate", width, height);
    }
    return blur_task("blur", width, height);
}

} // namespace

PostKind parse_post_kind(const std::string& text) {
    if (text == "blur") {
        return PostKind::Blur;
    }
    if (text == "upscale") {
        return PostKind::Upscale;
    }
    if (text == "interpolate") {
        return PostKind::Interpolate;
    }
    throw Error("--post '" + text + "' is not a post-processing task",
                "Use interpolate (frame generation), upscale or blur");
}

const char* to_string(PostKind kind) noexcept {
    switch (kind) {
    case PostKind::Blur:
        return "blur";
    case PostKind::Upscale:
        return "upscale";
    case PostKind::Interpolate:
        return "interpolate";
    }
    return "?";
}

std::pair<std::uint32_t, std::uint32_t> post_render_size(PostKind kind, std::optional<double> scale,
                                                         std::uint32_t width,
                                                         std::uint32_t height) {
    if (kind != PostKind::Upscale) {
        if (scale && *scale != 1.0) {
            throw Error("--render-scale applies to --post upscale only",
                        "Leave it out, or use --post upscale");
        }
        return {width, height};
    }
    const double s = scale.value_or(k_default_upscale_scale);
    if (!(s > 0.0 && s <= 1.0)) {
        throw Error("--render-scale " + fixed(s, 3) + " is out of range",
                    "Give the render size as a fraction of --size, above 0 and at most 1 (e.g. "
                    "0.5 renders at half the width and height)");
    }
    const auto scaled = [s](std::uint32_t v) {
        return std::max<std::uint32_t>(
            1, static_cast<std::uint32_t>(std::lround(static_cast<double>(v) * s)));
    };
    return {scaled(width), scaled(height)};
}

PostRunResult run_post(Runtime& runtime, RunScene& scene, const PostRunOptions& options) {
    const PostKind kind = options.kind;
    const VkExtent2D out_extent{scene.width(), scene.height()};
    const auto [render_w, render_h] =
        post_render_size(kind, options.render_scale, out_extent.width, out_extent.height);
    const VkExtent2D render_extent{render_w, render_h};

    const bool temporal = kind == PostKind::Upscale && options.temporal_upscale;
    const bool colour_motion = kind == PostKind::Interpolate && options.colour_motion;
    TaskDesc desc = post_desc(kind, temporal, colour_motion, render_w, render_h, out_extent.width,
                              out_extent.height);
    desc.slots = options.slots;
    const std::string placement_text =
        options.placement.value_or(runtime.worker_devices().empty() ? "primary" : "worker");
    const std::optional<Placement> placement = Placement::parse(placement_text);
    if (!placement) {
        throw Error("--placement '" + placement_text + "' is not a placement",
                    "Use auto, primary, worker, worker:N, an adapter index or device:SELECTOR");
    }
    desc.placement = *placement;
    if (options.lend_inputs) { // the main view renders into them
        for (TaskInputDesc& input : desc.inputs) {
            input.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
        }
    }
    const TaskId task = runtime.register_task(desc);
    const std::size_t input_count = desc.inputs.size(); // colour[, depth, motion]

    PostRunResult result;
    MainView view(runtime, scene, render_extent, 1, out_extent, k_frames_in_flight,
                  MainViewOutputs::ColorDepthMotion);
    // The references: rendered on the primary, blocking, at the sampled frames only.
    AdoptedPrimary reference_primary(runtime.primary_vulkan(), "post reference");
    const auto reference_cache = detail::shared_mesh_cache(
        reference_primary.device(), scene.state().inputs.scene.shared_assets());
    const detail::Renderer reference_renderer(*reference_cache, VK_FORMAT_R8G8B8A8_UNORM);
    std::optional<detail::HeadlessView> reference;
    if (kind != PostKind::Blur) {
        reference.emplace(reference_renderer, out_extent, "post reference");
    }
    const auto reference_at = [&](double t) {
        scene.animate(t);
        detail::Rgba8Image image(out_extent.width, out_extent.height);
        image.pixels = reference->render(detail::main_snapshot(scene.state().inputs, {}));
        return image;
    };

    const auto sampled = [&](std::uint64_t frame) {
        // The output of a sampled frame is read in the frame after it.
        return options.png_every > 0 && frame >= 1 && frame % options.png_every == 0 &&
               frame + 1 < options.frames;
    };
    const auto start = Clock::now();
    const auto frame_period = options.fps > 0
                                  ? std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(1.0 / options.fps))
                                  : Clock::duration::zero();
    auto next_frame = start;
    auto next_progress = start;

    std::vector<std::uint64_t> released;      // per frame: when its images may be rendered again
    std::vector<double> times;                // per frame: scene time
    std::vector<std::uint64_t> generation_of; // per frame: its submit's generation (0: none)
    std::uint64_t accepted = 0;
    std::uint64_t busy = 0;
    std::uint64_t newest_seen = 0;
    std::uint64_t new_outputs = 0;
    std::vector<double> submit_us;
    std::vector<double> frame_end_to_ready_us; // timed frames (time_latency below)
    std::uint64_t frame_ends_from_gpu = 0;     // of those, timed from the frame's GPU timestamp
    QualitySamples quality;
    detail::Rgba8Image previous_main;
    // The sample waiting for its output: the frame, its generation, the real frame and reference.
    struct PendingSample {
        std::uint64_t frame = 0;
        std::uint64_t generation = 0;
        detail::Rgba8Image real;
        detail::Rgba8Image reference;
        detail::Rgba8Image baseline;
    };
    std::optional<PendingSample> pending;
    std::string last_compare;

    const auto write = [&](const std::string& stem, std::uint64_t frame,
                           const detail::Rgba8Image& image) {
        char name[64];
        std::snprintf(name, sizeof name, "%s_%05llu.png", stem.c_str(),
                      static_cast<unsigned long long>(frame));
        const std::string path = (options.out_dir / name).string();
        write_png(path, image.width, image.height, image.pixels);
        result.pngs.push_back(path);
        return path;
    };

    // Polls (pump, acquire every `poll`) until the task's newest output is at least `generation`,
    // for up to twice the worker timeout, starting from `lease`; returns the last lease taken
    // (held, maybe older when the time ran out).
    const auto acquire_at_least = [&](std::uint64_t generation, std::optional<Lease> lease,
                                      Clock::duration poll) {
        const auto deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms) * 2;
        while ((!lease || lease->generation < generation) && Clock::now() < deadline) {
            if (lease) {
                (void)runtime.release(*lease, 0);
            }
            std::this_thread::sleep_for(poll);
            runtime.pump();
            lease = runtime.acquire(task).lease;
        }
        return lease;
    };

    for (std::uint64_t frame = 0; frame < options.frames; ++frame) {
        const double t = options.wall_clock
                             ? std::chrono::duration<double>(Clock::now() - start).count()
                             : static_cast<double>(frame) * options.scene_dt;
        times.push_back(t);
        scene.animate(t);
        runtime.pump();
        // The newest output, as a display shows it; a pending sample's output is waited for.
        std::optional<Lease> lease = runtime.acquire(task).lease;
        if (pending) {
            lease = acquire_at_least(pending->generation, std::move(lease),
                                     std::chrono::microseconds(200));
        }
        if (lease && lease->generation > newest_seen) {
            newest_seen = lease->generation;
            ++new_outputs;
        }
        const bool read_output = pending && lease && lease->generation == pending->generation;
        if (pending && !read_output) {
            ++result.missed_samples; // its output did not arrive in time: not measured
            pending.reset();
        }
        const bool read_main =
            sampled(frame) || (kind == PostKind::Interpolate && sampled(frame + 1));
        // A sampled frame (for interpolate also the frame before it) must reach the task: its
        // lend and submit are retried while the task is busy, as its PNG read-back waits anyway.
        const bool must_take = read_main;
        const auto take_deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms) * 2;
        // Lent inputs: this frame renders into the images Tandem lends for the task's next job;
        // without a loan (every slot busy) it renders into its own and is not sent.
        std::optional<InputLoan> loan;
        while (options.lend_inputs) {
            LendResult l = runtime.lend_inputs(task);
            if (l.lent()) {
                loan = std::move(l.loan);
                break;
            }
            if (l.status == SubmitStatus::Failed || !must_take || Clock::now() >= take_deadline) {
                break;
            }
            runtime.pump();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }

        // This frame renders into the images of frame - k_frames_in_flight: after Tandem's copy
        // of them ran.
        std::vector<VkSemaphoreSubmitInfo> waits;
        if (frame >= k_frames_in_flight && released[frame - k_frames_in_flight] > 0) {
            waits.push_back(detail::semaphore_submit_info(runtime.input_timeline(),
                                                          released[frame - k_frames_in_flight],
                                                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
        }
        std::vector<Lease> leases;
        if (lease) {
            leases.push_back(*lease);
        }
        MainFrameTargets targets;
        if (loan) { // colour[, depth, motion], as the task declares them
            const std::vector<LentInput>& lent = loan->inputs;
            targets.color = lent.at(0).image;
            targets.color_view = lent[0].view;
            if (lent.size() >= 3) {
                targets.depth = lent[1].image;
                targets.depth_view = lent[1].view;
                targets.motion = lent[2].image;
                targets.motion_view = lent[2].view;
            }
            if (loan->writable > 0) {
                waits.push_back(
                    detail::semaphore_submit_info(runtime.input_timeline(), loan->writable,
                                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
            }
        }
        // The temporal upscaler's frames are rendered with its jitter, which its job is told.
        const TemporalJitter jitter =
            temporal
                ? temporal_jitter(frame, render_w, render_h, out_extent.width, out_extent.height)
                : TemporalJitter{};
        TemporalUpscaleSettings temporal_settings;
        temporal_settings.jitter_x = jitter.x;
        temporal_settings.jitter_y = jitter.y;
        const std::span<const std::byte> bytes =
            temporal ? settings_bytes(temporal_settings) : std::span<const std::byte>();
        MainFrameRequest request;
        request.jitter_x = jitter.x;
        request.jitter_y = jitter.y;
        request.targets = loan ? &targets : nullptr;
        request.leases = leases;
        request.read_main = read_main;
        request.read_leases = read_output;
        request.waits = waits;
        // Rendering into lent images: the frame signals the loan's own semaphore, which the
        // submit names, so that the submit makes no Vulkan call (tandem/input.hpp).
        std::vector<VkSemaphoreSubmitInfo> signals;
        if (loan) {
            signals.push_back(loan->written_signal());
        }
        request.signals = signals;
        const std::uint64_t value = view.render(scene, request);
        if (lease) {
            (void)runtime.release(*lease, value);
        }
        if (value == 0) {
            if (loan) {
                (void)runtime.return_inputs(task, *loan);
            }
            result.failure = "frame " + std::to_string(frame) + ": " + view.last_error();
            break;
        }
        // The frame's colour, depth and motion vectors go to the task.
        MainFrameImages images = view.frame_images(value);
        if (loan) {
            images.color = targets.color;
            images.depth = targets.depth != VK_NULL_HANDLE ? targets.depth : images.depth;
            images.motion = targets.motion != VK_NULL_HANDLE ? targets.motion : images.motion;
        }
        const VkSemaphore written = loan ? loan->written : runtime.primary_timeline();
        const std::uint64_t written_value = loan ? loan->written_value : value;
        const std::array<InputImage, 3> inputs{
            InputImage{images.color, images.layout, written, written_value},
            InputImage{images.depth, images.layout, written, written_value},
            InputImage{images.motion, images.layout, written, written_value}};
        SubmitResult r;
        r.status = SubmitStatus::Busy; // lent inputs without a loan: every slot was busy
        while (loan || !options.lend_inputs) {
            const auto submit_start = Clock::now();
            r = runtime.submit(task, bytes,
                               std::span<const InputImage>(inputs.data(), input_count));
            if (r.accepted()) {
                // The application thread's cost of an accepted submit with inputs.
                submit_us.push_back(
                    std::chrono::duration<double, std::micro>(Clock::now() - submit_start).count());
            }
            if (r.accepted() || r.status == SubmitStatus::Failed || !must_take ||
                Clock::now() >= take_deadline) {
                break;
            }
            runtime.pump();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        if (loan && !r.accepted()) {
            (void)runtime.return_inputs(task, *loan); // after the frame's writes were submitted
        }
        released.push_back(r.inputs_released);
        generation_of.push_back(r.accepted() ? r.generation : 0);
        if (r.accepted()) {
            ++accepted;
        } else if (r.status == SubmitStatus::Failed) {
            result.failure = "frame " + std::to_string(frame) + ": the " + to_string(kind) +
                             " task failed: " + r.reason;
            break;
        } else {
            ++busy;
        }

        // Every accepted frame after a warm-up is timed where frames are paced (the wait for its
        // output fits in the frame's idle time); at an unlimited rate only the sampled ones.
        constexpr std::uint64_t k_latency_warm_up = 10;
        const bool time_latency =
            r.accepted() && (sampled(frame) || (options.fps > 0 && frame >= k_latency_warm_up));
        if (read_main || read_output || time_latency) {
            if (view.wait(value, std::chrono::seconds(10)) != VK_SUCCESS) {
                result.failure = "frame " + std::to_string(frame) + " did not finish in 10 s";
                break;
            }
        }
        // From the real frame's end on the GPU (its last timestamp on the host's clock; where
        // the primary has none, when the wait above saw its timeline value) to its output
        // acquirable, the application polling every 20 us. A sample's output is read in the
        // next frame, as for every sample.
        if (time_latency) {
            const std::optional<std::int64_t> gpu_end = view.end_host_ns(value);
            const auto frame_end =
                gpu_end ? Clock::time_point(std::chrono::duration_cast<Clock::duration>(
                              std::chrono::nanoseconds(*gpu_end)))
                        : Clock::now();
            frame_ends_from_gpu += gpu_end ? 1 : 0;
            runtime.pump();
            const std::optional<Lease> l = acquire_at_least(
                r.generation, runtime.acquire(task).lease, std::chrono::microseconds(20));
            if (l && l->generation >= r.generation) {
                frame_end_to_ready_us.push_back(
                    std::chrono::duration<double, std::micro>(Clock::now() - frame_end).count());
            }
            if (l) {
                (void)runtime.release(*l, 0);
            }
        }
        if (read_output) {
            detail::Rgba8Image output(out_extent.width, out_extent.height);
            output.pixels = view.lease_pixels(value, 0);
            const double out_db = finite_db(detail::psnr(output, pending->reference));
            const double base_db = finite_db(detail::psnr(pending->baseline, pending->reference));
            quality.output_db.push_back(out_db);
            quality.baseline_db.push_back(base_db);
            write(output_word(kind), pending->frame, output);
            if (reference) {
                write("true", pending->frame, pending->reference);
                last_compare =
                    write("compare", pending->frame, side_by_side(output, pending->reference));
            }
            pending.reset();
        }
        if (read_main) {
            detail::Rgba8Image real(render_extent.width, render_extent.height);
            real.pixels = view.main_pixels(value);
            if (sampled(frame)) {
                write("main", frame, real);
                // A sample is measured only where the task's previous job was the frame before
                // (interpolate generates between its last two jobs' frames).
                const bool consecutive =
                    generation_of[frame] != 0 &&
                    (kind != PostKind::Interpolate ||
                     (frame >= 1 && generation_of[frame - 1] + 1 == generation_of[frame] &&
                      !previous_main.pixels.empty()));
                if (consecutive) {
                    PendingSample s;
                    s.frame = frame;
                    s.generation = generation_of[frame];
                    switch (kind) {
                    case PostKind::Interpolate:
                        s.reference = reference_at(0.5 * (times[frame - 1] + times[frame]));
                        s.baseline = detail::blend(previous_main, real);
                        break;
                    case PostKind::Upscale:
                        s.reference = reference_at(times[frame]);
                        // Where the frame's samples are (moved by its jitter, if any).
                        s.baseline = detail::bilinear_upscale(
                            real, out_extent.width, out_extent.height, jitter.x, jitter.y);
                        break;
                    case PostKind::Blur:
                        // No reference: the output is written, its quality not measured.
                        s.reference = real;
                        s.baseline = real;
                        break;
                    }
                    scene.animate(t);
                    s.real = std::move(real);
                    pending = std::move(s);
                }
            } else {
                previous_main = std::move(real);
            }
        }
        result.frames = frame + 1;
        const auto now = Clock::now();
        if (options.progress && (now >= next_progress || frame + 1 == options.frames)) {
            next_progress = now + std::chrono::milliseconds(250);
            options.progress(frame + 1, newest_seen);
        }
        if (frame_period > Clock::duration::zero() && frame + 1 < options.frames) {
            next_frame += frame_period;
            next_frame = std::max(next_frame, Clock::now());
            std::this_thread::sleep_until(next_frame);
        }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    // Everything in flight lands before the figures are read.
    {
        const auto deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms) * 2;
        while (runtime.stats(task).in_flight > 0 && Clock::now() < deadline) {
            runtime.pump();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    const TaskStats s = runtime.stats(task);
    if (kind == PostKind::Blur) {
        quality = {}; // blur has no reference to be measured against
    }

    nlohmann::json report;
    report["kind"] = to_string(kind);
    if (kind == PostKind::Upscale) {
        report["upscaler"] = temporal ? "temporal" : "spatial";
    }
    if (kind == PostKind::Interpolate) {
        // Where the motion the generated frames follow came from.
        report["motion"] = colour_motion ? "colour" : "engine";
    }
    report["render_size"] = {render_extent.width, render_extent.height};
    report["output_size"] = {out_extent.width, out_extent.height};
    report["inputs"] = nlohmann::json::array();
    for (const TaskInputDesc& in : desc.inputs) {
        report["inputs"].push_back(in.name);
    }
    report["placement"] = placement_text;
    report["device"] = s.device;
    report["device_name"] = s.device_name;
    report["input_path"] = s.input_path;
    report["inputs_read_in_place"] = s.inputs_read_in_place;
    report["outputs_written_in_place"] = s.outputs_written_in_place;
    report["inputs_sent"] = options.lend_inputs ? "lent" : "copied";
    report["lent_submits"] = s.lent_submits;
    report["lent_signalled_submits"] = s.lent_signalled_submits;
    report["input_copies"] = s.input_copies;
    report["output_path"] = transfer_path_name(s);
    report["real_frames"] = result.frames;
    report["elapsed_s"] = elapsed;
    report["accepted"] = accepted;
    report["busy"] = busy;
    report["ready"] = s.ready;
    report["failed_jobs"] = s.failed_jobs;
    // What a display shows: each frame the newest output; for interpolate each new output is a
    // generated frame between two real ones, shown between them.
    report["outputs_per_real_frame"] =
        result.frames > 0 ? static_cast<double>(s.ready) / static_cast<double>(result.frames) : 0.0;
    report["new_outputs_shown"] = new_outputs;
    report["display_frames"] =
        kind == PostKind::Interpolate ? result.frames + new_outputs : result.frames;
    report["submit_us"] = to_json(summarise(submit_us)); // accepted submits only
    report["submit_to_ready_us"] = latency_json(s.ready_observed);
    report["frame_end_to_ready_us"] = to_json(summarise(frame_end_to_ready_us));
    report["frame_end_to_ready_note"] =
        "every accepted frame after the first 10 at a paced --fps (at an unlimited rate the "
        "sampled frames only): from the real frame's end on the primary (its last GPU "
        "timestamp on the host's clock; where the primary has none, the host seeing its timeline "
        "value) to its output acquirable, pump() and acquire() called every 20 us; "
        "percentiles by nearest rank";
    report["frame_end_to_ready_from_gpu_timestamp"] = frame_ends_from_gpu;
    report["submit_to_ready_note"] =
        "from the submit, right after the real frame was submitted on the primary, to the "
        "output observed ready on the primary by pump()";
    report["pass_gpu_us"] = s.gpu_timed ? nlohmann::json{{"p50", s.gpu_us.p50_us},
                                                         {"p99", s.gpu_us.p99_us},
                                                         {"jobs", s.gpu_us.count},
                                                         {"untimed_jobs", s.gpu_us.untimed},
                                                         {"device", s.device}}
                                        : nlohmann::json();
    // What the inputs cost the primary's frame: the GPU time of each real frame's input copies.
    report["input_copy_gpu_us"] = s.input_copy_gpu_us.count > 0
                                      ? nlohmann::json{{"p50", s.input_copy_gpu_us.p50_us},
                                                       {"p99", s.input_copy_gpu_us.p99_us},
                                                       {"copies", s.input_copy_gpu_us.count}}
                                      : nlohmann::json();
    nlohmann::json q;
    q["samples"] = quality.output_db.size();
    q["missed_samples"] = result.missed_samples;
    q["psnr_db"] = db_json(quality.output_db);
    q["baseline"] = kind == PostKind::Interpolate ? "50/50 blend of the two real frames"
                    : kind == PostKind::Upscale   ? "bilinear upscale of the rendered frame"
                                                  : "none";
    q["baseline_psnr_db"] = db_json(quality.baseline_db);
    q["reference"] = kind == PostKind::Interpolate ? "the true in-between frame, rendered"
                     : kind == PostKind::Upscale   ? "the frame rendered at the output size"
                                                   : "none";
    if (!quality.output_db.empty()) {
        q["gain_db"] =
            q["psnr_db"]["mean"].get<double>() - q["baseline_psnr_db"]["mean"].get<double>();
    }
    if (!last_compare.empty()) {
        q["compare_png"] = last_compare;
    }
    report["quality"] = q;
    result.report = report;
    (void)runtime.unregister_task(task);
    return result;
}

} // namespace tandem::harness
