#include "harness/post_run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/stats.hpp"
#include "harness/adopted_primary.hpp"
#include "harness/main_view.hpp"
#include "harness/png.hpp"
#include "harness/run_report.hpp"
#include "harness/run_scene_state.hpp"
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

namespace {

// The post task as registered: what it does, where it was asked to run, and its sizes.
struct PostTask {
    PostKind kind = PostKind::Blur;
    VkExtent2D out_extent{};
    VkExtent2D render_extent{};
    bool temporal = false;      // the temporal upscaler: frames rendered with its jitter
    bool colour_motion = false; // interpolate with the motion estimated from colour alone
    TaskDesc desc;
    std::string placement_text;
    TaskId task;
    std::size_t input_count = 0; // colour[, depth, motion]
};

PostTask register_post_task(Runtime& runtime, const RunScene& scene,
                            const PostRunOptions& options) {
    PostTask post;
    post.kind = options.kind;
    post.out_extent = VkExtent2D{scene.width(), scene.height()};
    const auto [render_w, render_h] = post_render_size(
        post.kind, options.render_scale, post.out_extent.width, post.out_extent.height);
    post.render_extent = VkExtent2D{render_w, render_h};
    post.temporal = post.kind == PostKind::Upscale && options.temporal_upscale;
    post.colour_motion = post.kind == PostKind::Interpolate && options.colour_motion;
    TaskDesc& desc = post.desc;
    desc = post_desc(post.kind, post.temporal, post.colour_motion, render_w, render_h,
                     post.out_extent.width, post.out_extent.height);
    desc.slots = options.slots;
    post.placement_text =
        options.placement.value_or(runtime.worker_devices().empty() ? "primary" : "worker");
    const std::optional<Placement> placement = Placement::parse(post.placement_text);
    if (!placement) {
        throw Error("--placement '" + post.placement_text + "' is not a placement",
                    "Use auto, primary, worker, worker:N, an adapter index or device:SELECTOR");
    }
    desc.placement = *placement;
    if (options.lend_inputs) { // the main view renders into them
        for (TaskInputDesc& input : desc.inputs) {
            input.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
        }
    } else if (!desc.inputs.empty() && desc.inputs[0].format == VK_FORMAT_R8G8B8A8_UNORM) {
        desc.inputs[0].application_usage = k_main_colour_usage; // the main view's colour
    }
    post.task = runtime.register_task(desc);
    post.input_count = desc.inputs.size();
    return post;
}

// The references: rendered on the primary, blocking, at the sampled frames only (none for
// blur, which has nothing to be measured against).
class PostReference {
public:
    PostReference(const Runtime& runtime, RunScene& scene, PostKind kind, VkExtent2D extent)
        : m_scene(scene), m_extent(extent), m_primary(runtime.primary_vulkan(), "post reference"),
          m_cache(detail::shared_mesh_cache(m_primary.device(),
                                            scene.state().inputs.scene.shared_assets())),
          m_renderer(*m_cache, VK_FORMAT_R8G8B8A8_UNORM) {
        if (kind != PostKind::Blur) {
            m_view.emplace(m_renderer, extent, "post reference");
        }
    }

    [[nodiscard]] bool exists() const noexcept { return m_view.has_value(); }

    // The scene at time `t` (animated there), rendered at the output size.
    [[nodiscard]] detail::Rgba8Image at(double t) {
        m_scene.animate(t);
        detail::Rgba8Image image(m_extent.width, m_extent.height);
        image.pixels = m_view->render(detail::main_snapshot(m_scene.state().inputs, {}));
        return image;
    }

private:
    RunScene& m_scene;
    VkExtent2D m_extent;
    AdoptedPrimary m_primary;
    std::shared_ptr<detail::MeshCache> m_cache;
    const detail::Renderer m_renderer;
    std::optional<detail::HeadlessView> m_view;
};

// What the frame loop counts and measures, for the report.
struct PostFigures {
    std::uint64_t accepted = 0;
    std::uint64_t busy = 0;
    std::uint64_t new_outputs = 0; // outputs newer than every one shown before
    std::vector<double> submit_us;
    std::vector<double> frame_end_to_ready_us; // timed frames (time_latency below)
    std::uint64_t frame_ends_from_gpu = 0;     // of those, timed from the frame's GPU timestamp
    QualitySamples quality;
    std::string last_compare; // the last output-beside-reference PNG
};

// The sample waiting for its output: the frame, its generation, the real frame and reference.
struct PendingSample {
    std::uint64_t frame = 0;
    std::uint64_t generation = 0;
    detail::Rgba8Image real;
    detail::Rgba8Image reference;
    detail::Rgba8Image baseline;
};

// One frame's images that the task takes: rendered into lent images (a loan), or the view's own.
struct FrameInputs {
    std::optional<InputLoan> loan;
    MainFrameTargets targets; // the loan's images, when there is one
};

// The frame loop: every frame renders the main view, shows the task's newest output and sends
// the frame to the task; sampled frames are read back, written and measured.
class PostFrameLoop {
public:
    PostFrameLoop(Runtime& runtime, RunScene& scene, const PostRunOptions& options,
                  const PostTask& post, MainView& view, PostReference& reference,
                  PostRunResult& result)
        : m_runtime(runtime), m_scene(scene), m_options(options), m_post(post), m_view(view),
          m_reference(reference), m_result(result) {}

    // Runs every frame (or until one fails); returns the seconds it took.
    double run();
    [[nodiscard]] const PostFigures& figures() const noexcept { return m_figures; }

private:
    // False when the run must stop (the failure recorded in the result).
    bool run_frame(std::uint64_t frame);
    [[nodiscard]] bool sampled(std::uint64_t frame) const {
        // The output of a sampled frame is read in the frame after it.
        return m_options.png_every > 0 && frame >= 1 && frame % m_options.png_every == 0 &&
               frame + 1 < m_options.frames;
    }
    std::optional<Lease> acquire_at_least(std::uint64_t generation, std::optional<Lease> lease,
                                          Clock::duration poll);
    std::optional<Lease> acquire_shown();
    FrameInputs lend_inputs(bool must_take, Clock::time_point deadline);
    std::uint64_t render(std::uint64_t frame, const std::optional<Lease>& lease,
                         const FrameInputs& inputs, const TemporalJitter& jitter, bool read_main,
                         bool read_output);
    SubmitResult submit(std::uint64_t value, const FrameInputs& inputs,
                        std::span<const std::byte> bytes, bool must_take,
                        Clock::time_point deadline);
    bool count_submit(std::uint64_t frame, const SubmitResult& r);
    void time_latency(std::uint64_t value, std::uint64_t generation);
    void measure_output(std::uint64_t value);
    void keep_main(std::uint64_t frame, std::uint64_t value, double t,
                   const TemporalJitter& jitter);
    std::string write(const std::string& stem, std::uint64_t frame,
                      const detail::Rgba8Image& image);
    void pace(std::uint64_t frame);

    Runtime& m_runtime;
    RunScene& m_scene;
    const PostRunOptions& m_options;
    const PostTask& m_post;
    MainView& m_view;
    PostReference& m_reference;
    PostRunResult& m_result;
    PostFigures m_figures;
    Clock::time_point m_start;
    Clock::time_point m_next_frame;
    Clock::time_point m_next_progress;
    std::vector<std::uint64_t> m_released;      // per frame: when its images may be rendered again
    std::vector<double> m_times;                // per frame: scene time
    std::vector<std::uint64_t> m_generation_of; // per frame: its submit's generation (0: none)
    std::uint64_t m_newest_seen = 0;
    detail::Rgba8Image m_previous_main;
    std::optional<PendingSample> m_pending;
};

double PostFrameLoop::run() {
    m_start = Clock::now();
    m_next_frame = m_start;
    m_next_progress = m_start;
    for (std::uint64_t frame = 0; frame < m_options.frames; ++frame) {
        if (!run_frame(frame)) {
            break;
        }
    }
    return std::chrono::duration<double>(Clock::now() - m_start).count();
}

bool PostFrameLoop::run_frame(std::uint64_t frame) {
    const double t = m_options.wall_clock
                         ? std::chrono::duration<double>(Clock::now() - m_start).count()
                         : static_cast<double>(frame) * m_options.scene_dt;
    m_times.push_back(t);
    m_scene.animate(t);
    m_runtime.pump();
    std::optional<Lease> lease = acquire_shown();
    const bool read_output = m_pending && lease && lease->generation == m_pending->generation;
    if (m_pending && !read_output) {
        ++m_result.missed_samples; // its output did not arrive in time: not measured
        m_pending.reset();
    }
    const PostKind kind = m_post.kind;
    const bool read_main = sampled(frame) || (kind == PostKind::Interpolate && sampled(frame + 1));
    // A sampled frame (for interpolate also the frame before it) must reach the task: its
    // lend and submit are retried while the task is busy, as its PNG read-back waits anyway.
    const bool must_take = read_main;
    const auto take_deadline = Clock::now() + std::chrono::milliseconds(m_options.timeout_ms) * 2;
    const FrameInputs inputs = lend_inputs(must_take, take_deadline);
    // The temporal upscaler's frames are rendered with its jitter, which its job is told.
    const VkExtent2D rendered = m_post.render_extent;
    const VkExtent2D out = m_post.out_extent;
    const TemporalJitter jitter =
        m_post.temporal
            ? temporal_jitter(frame, rendered.width, rendered.height, out.width, out.height)
            : TemporalJitter{};
    TemporalUpscaleSettings temporal_settings;
    temporal_settings.jitter_x = jitter.x;
    temporal_settings.jitter_y = jitter.y;
    const std::span<const std::byte> bytes =
        m_post.temporal ? settings_bytes(temporal_settings) : std::span<const std::byte>();
    const std::uint64_t value = render(frame, lease, inputs, jitter, read_main, read_output);
    if (value == 0) {
        if (inputs.loan) {
            (void)m_runtime.return_inputs(m_post.task, *inputs.loan);
        }
        m_result.failure = "frame " + std::to_string(frame) + ": " + m_view.last_error();
        return false;
    }
    const SubmitResult r = submit(value, inputs, bytes, must_take, take_deadline);
    if (!count_submit(frame, r)) {
        return false;
    }
    // Every accepted frame after a warm-up is timed where frames are paced (the wait for its
    // output fits in the frame's idle time); at an unlimited rate only the sampled ones.
    constexpr std::uint64_t k_latency_warm_up = 10;
    const bool timed =
        r.accepted() && (sampled(frame) || (m_options.fps > 0 && frame >= k_latency_warm_up));
    if ((read_main || read_output || timed) &&
        m_view.wait(value, std::chrono::seconds(10)) != VK_SUCCESS) {
        m_result.failure = "frame " + std::to_string(frame) + " did not finish in 10 s";
        return false;
    }
    if (timed) {
        time_latency(value, r.generation);
    }
    if (read_output) {
        measure_output(value);
    }
    if (read_main) {
        keep_main(frame, value, t, jitter);
    }
    m_result.frames = frame + 1;
    pace(frame);
    return true;
}

// Polls (pump, acquire every `poll`) until the task's newest output is at least `generation`,
// for up to twice the worker timeout, starting from `lease`; returns the last lease taken
// (held, maybe older when the time ran out).
std::optional<Lease> PostFrameLoop::acquire_at_least(std::uint64_t generation,
                                                     std::optional<Lease> lease,
                                                     Clock::duration poll) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(m_options.timeout_ms) * 2;
    while ((!lease || lease->generation < generation) && Clock::now() < deadline) {
        if (lease) {
            (void)m_runtime.release(*lease, 0);
        }
        std::this_thread::sleep_for(poll);
        m_runtime.pump();
        lease = m_runtime.acquire(m_post.task).lease;
    }
    return lease;
}

// The newest output, as a display shows it; a pending sample's output is waited for.
std::optional<Lease> PostFrameLoop::acquire_shown() {
    std::optional<Lease> lease = m_runtime.acquire(m_post.task).lease;
    if (m_pending) {
        lease = acquire_at_least(m_pending->generation, std::move(lease),
                                 std::chrono::microseconds(200));
    }
    if (lease && lease->generation > m_newest_seen) {
        m_newest_seen = lease->generation;
        ++m_figures.new_outputs;
    }
    return lease;
}

// Lent inputs: this frame renders into the images Tandem lends for the task's next job;
// without a loan (every slot busy) it renders into its own and is not sent.
FrameInputs PostFrameLoop::lend_inputs(bool must_take, Clock::time_point deadline) {
    FrameInputs out;
    while (m_options.lend_inputs) {
        LendResult l = m_runtime.lend_inputs(m_post.task);
        if (l.lent()) {
            out.loan = std::move(l.loan);
            break;
        }
        if (l.status == SubmitStatus::Failed || !must_take || Clock::now() >= deadline) {
            break;
        }
        m_runtime.pump();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (out.loan) { // colour[, depth, motion], as the task declares them
        const std::vector<LentInput>& lent = out.loan->inputs;
        out.targets.color = lent.at(0).image;
        out.targets.color_view = lent[0].view;
        if (lent.size() >= 3) {
            out.targets.depth = lent[1].image;
            out.targets.depth_view = lent[1].view;
            out.targets.motion = lent[2].image;
            out.targets.motion_view = lent[2].view;
        }
    }
    return out;
}

// Renders the frame (into the loan's images, if any) showing `lease`, which it releases;
// returns the frame's primary timeline value, 0 when nothing was submitted.
std::uint64_t PostFrameLoop::render(std::uint64_t frame, const std::optional<Lease>& lease,
                                    const FrameInputs& inputs, const TemporalJitter& jitter,
                                    bool read_main, bool read_output) {
    // This frame renders into the images of frame - k_frames_in_flight: after Tandem's copy
    // of them ran.
    std::vector<VkSemaphoreSubmitInfo> waits;
    if (frame >= k_frames_in_flight && m_released[frame - k_frames_in_flight] > 0) {
        waits.push_back(detail::semaphore_submit_info(m_runtime.input_timeline(),
                                                      m_released[frame - k_frames_in_flight],
                                                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
    }
    std::vector<Lease> leases;
    if (lease) {
        leases.push_back(*lease);
    }
    if (inputs.loan && inputs.loan->writable > 0) {
        waits.push_back(detail::semaphore_submit_info(m_runtime.input_timeline(),
                                                      inputs.loan->writable,
                                                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
    }
    MainFrameRequest request;
    request.jitter_x = jitter.x;
    request.jitter_y = jitter.y;
    request.targets = inputs.loan ? &inputs.targets : nullptr;
    request.leases = leases;
    request.read_main = read_main;
    request.read_leases = read_output;
    request.waits = waits;
    // Rendering into lent images: the frame signals the loan's own semaphore, which the
    // submit names, so that the submit makes no Vulkan call (tandem/input.hpp).
    std::vector<VkSemaphoreSubmitInfo> signals;
    if (inputs.loan) {
        signals.push_back(inputs.loan->written_signal());
    }
    request.signals = signals;
    const std::uint64_t value = m_view.render(m_scene, request);
    if (lease) {
        (void)m_runtime.release(*lease, value);
    }
    return value;
}

// The frame's colour, depth and motion vectors go to the task (retried while it is busy when
// the frame must reach it); a loan not taken is returned.
SubmitResult PostFrameLoop::submit(std::uint64_t value, const FrameInputs& inputs,
                                   std::span<const std::byte> bytes, bool must_take,
                                   Clock::time_point deadline) {
    MainFrameImages images = m_view.frame_images(value);
    const std::optional<InputLoan>& loan = inputs.loan;
    if (loan) {
        images.color = inputs.targets.color;
        images.depth = inputs.targets.depth != VK_NULL_HANDLE ? inputs.targets.depth : images.depth;
        images.motion =
            inputs.targets.motion != VK_NULL_HANDLE ? inputs.targets.motion : images.motion;
    }
    const VkSemaphore written = loan ? loan->written : m_runtime.primary_timeline();
    const std::uint64_t written_value = loan ? loan->written_value : value;
    // The view's own colour comes with its view (a compute copy then makes none); a lent image
    // is not copied.
    const VkImageView colour_view = loan ? VK_NULL_HANDLE : images.color_view;
    const std::array<InputImage, 3> images_sent{
        InputImage{images.color, images.layout, written, written_value, VK_NULL_HANDLE, 0,
                   colour_view},
        InputImage{images.depth, images.layout, written, written_value},
        InputImage{images.motion, images.layout, written, written_value}};
    SubmitResult r;
    r.status = SubmitStatus::Busy; // lent inputs without a loan: every slot was busy
    while (loan || !m_options.lend_inputs) {
        const auto submit_start = Clock::now();
        r = m_runtime.submit(m_post.task, bytes,
                             std::span<const InputImage>(images_sent.data(), m_post.input_count));
        if (r.accepted()) {
            // The application thread's cost of an accepted submit with inputs.
            m_figures.submit_us.push_back(
                std::chrono::duration<double, std::micro>(Clock::now() - submit_start).count());
        }
        if (r.accepted() || r.status == SubmitStatus::Failed || !must_take ||
            Clock::now() >= deadline) {
            break;
        }
        m_runtime.pump();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (loan && !r.accepted()) {
        (void)m_runtime.return_inputs(m_post.task,
                                      *loan); // after the frame's writes were submitted
    }
    return r;
}

// Counts the submit; false when the task failed (the run stops).
bool PostFrameLoop::count_submit(std::uint64_t frame, const SubmitResult& r) {
    m_released.push_back(r.inputs_released);
    m_generation_of.push_back(r.accepted() ? r.generation : 0);
    if (r.accepted()) {
        ++m_figures.accepted;
    } else if (r.status == SubmitStatus::Failed) {
        m_result.failure = "frame " + std::to_string(frame) + ": the " + to_string(m_post.kind) +
                           " task failed: " + r.reason;
        return false;
    } else {
        ++m_figures.busy;
    }
    return true;
}

// From the real frame's end on the GPU (its last timestamp on the host's clock; where the
// primary has none, when the wait for its timeline value returned) to its output acquirable, the
// application polling every 20 us. A sample's output is read in the next frame, as for every
// sample.
void PostFrameLoop::time_latency(std::uint64_t value, std::uint64_t generation) {
    const std::optional<std::int64_t> gpu_end = m_view.end_host_ns(value);
    const auto frame_end = gpu_end ? Clock::time_point(std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::nanoseconds(*gpu_end)))
                                   : Clock::now();
    m_figures.frame_ends_from_gpu += gpu_end ? 1 : 0;
    m_runtime.pump();
    const std::optional<Lease> l = acquire_at_least(
        generation, m_runtime.acquire(m_post.task).lease, std::chrono::microseconds(20));
    if (l && l->generation >= generation) {
        m_figures.frame_end_to_ready_us.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - frame_end).count());
    }
    if (l) {
        (void)m_runtime.release(*l, 0);
    }
}

// The pending sample's output (shown by this frame): its quality against the reference, and
// its PNGs.
void PostFrameLoop::measure_output(std::uint64_t value) {
    const VkExtent2D out = m_post.out_extent;
    detail::Rgba8Image output(out.width, out.height);
    output.pixels = m_view.lease_pixels(value, 0);
    const double out_db = finite_db(detail::psnr(output, m_pending->reference));
    const double base_db = finite_db(detail::psnr(m_pending->baseline, m_pending->reference));
    m_figures.quality.output_db.push_back(out_db);
    m_figures.quality.baseline_db.push_back(base_db);
    write(output_word(m_post.kind), m_pending->frame, output);
    if (m_reference.exists()) {
        write("true", m_pending->frame, m_pending->reference);
        m_figures.last_compare =
            write("compare", m_pending->frame, side_by_side(output, m_pending->reference));
    }
    m_pending.reset();
}

// The frame read back: a sampled one is written and, where it can be measured, waits for its
// output with its reference and baseline; the frame before a sample is kept (interpolate blends
// it).
void PostFrameLoop::keep_main(std::uint64_t frame, std::uint64_t value, double t,
                              const TemporalJitter& jitter) {
    const PostKind kind = m_post.kind;
    const VkExtent2D out = m_post.out_extent;
    detail::Rgba8Image real(m_post.render_extent.width, m_post.render_extent.height);
    real.pixels = m_view.main_pixels(value);
    if (!sampled(frame)) {
        m_previous_main = std::move(real);
        return;
    }
    write("main", frame, real);
    // A sample is measured only where the task's previous job was the frame before
    // (interpolate generates between its last two jobs' frames).
    const bool consecutive =
        m_generation_of[frame] != 0 &&
        (kind != PostKind::Interpolate ||
         (frame >= 1 && m_generation_of[frame - 1] + 1 == m_generation_of[frame] &&
          !m_previous_main.pixels.empty()));
    if (!consecutive) {
        return;
    }
    PendingSample s;
    s.frame = frame;
    s.generation = m_generation_of[frame];
    switch (kind) {
    case PostKind::Interpolate:
        s.reference = m_reference.at(0.5 * (m_times[frame - 1] + m_times[frame]));
        s.baseline = detail::blend(m_previous_main, real);
        break;
    case PostKind::Upscale:
        s.reference = m_reference.at(m_times[frame]);
        // Where the frame's samples are (moved by its jitter, if any).
        s.baseline = detail::bilinear_upscale(real, out.width, out.height, jitter.x, jitter.y);
        break;
    case PostKind::Blur:
        // No reference: the output is written, its quality not measured.
        s.reference = real;
        s.baseline = real;
        break;
    }
    m_scene.animate(t);
    s.real = std::move(real);
    m_pending = std::move(s);
}

std::string PostFrameLoop::write(const std::string& stem, std::uint64_t frame,
                                 const detail::Rgba8Image& image) {
    char name[64];
    std::snprintf(name, sizeof name, "%s_%05llu.png", stem.c_str(),
                  static_cast<unsigned long long>(frame));
    const std::string path = (m_options.out_dir / name).string();
    write_png(path, image.width, image.height, image.pixels);
    m_result.pngs.push_back(path);
    return path;
}

// The progress call about four times a second, and the wait for the next frame's start.
void PostFrameLoop::pace(std::uint64_t frame) {
    const auto now = Clock::now();
    if (m_options.progress && (now >= m_next_progress || frame + 1 == m_options.frames)) {
        m_next_progress = now + std::chrono::milliseconds(250);
        m_options.progress(frame + 1, m_newest_seen);
    }
    const auto frame_period = m_options.fps > 0
                                  ? std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(1.0 / m_options.fps))
                                  : Clock::duration::zero();
    if (frame_period > Clock::duration::zero() && frame + 1 < m_options.frames) {
        m_next_frame += frame_period;
        m_next_frame = std::max(m_next_frame, Clock::now());
        std::this_thread::sleep_until(m_next_frame);
    }
}

// The sampled frames' quality: the output and the naive baseline against the reference.
nlohmann::json quality_json(PostKind kind, const PostFigures& figures,
                            std::uint64_t missed_samples) {
    // Blur has no reference to be measured against.
    const QualitySamples quality = kind == PostKind::Blur ? QualitySamples{} : figures.quality;
    nlohmann::json q;
    q["samples"] = quality.output_db.size();
    q["missed_samples"] = missed_samples;
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
    if (!figures.last_compare.empty()) {
        q["compare_png"] = figures.last_compare;
    }
    return q;
}

// What the task is, where it ran, and how its inputs and outputs travelled.
void add_task_fields(nlohmann::json& report, const PostTask& post, const PostRunOptions& options,
                     const TaskStats& s) {
    report["kind"] = to_string(post.kind);
    if (post.kind == PostKind::Upscale) {
        report["upscaler"] = post.temporal ? "temporal" : "spatial";
    }
    if (post.kind == PostKind::Interpolate) {
        // Where the motion the generated frames follow came from.
        report["motion"] = post.colour_motion ? "colour" : "engine";
    }
    report["render_size"] = {post.render_extent.width, post.render_extent.height};
    report["output_size"] = {post.out_extent.width, post.out_extent.height};
    report["inputs"] = nlohmann::json::array();
    for (const TaskInputDesc& in : post.desc.inputs) {
        report["inputs"].push_back(in.name);
    }
    report["placement"] = post.placement_text;
    report["device"] = s.device;
    report["device_name"] = s.device_name;
    report["input_path"] = s.input_path;
    report["inputs_read_in_place"] = s.inputs_read_in_place;
    report["outputs_written_in_place"] = s.outputs_written_in_place;
    report["inputs_sent"] = options.lend_inputs ? "lent" : "copied";
    report["lent_submits"] = s.lent_submits;
    report["lent_signalled_submits"] = s.lent_signalled_submits;
    report["input_copies"] = s.input_copies;
    report["inputs_copied_by_compute"] = s.inputs_copied_by_compute;
    report["output_path"] = transfer_path_name(s);
}

// The frames, the outputs they showed, and the latencies and GPU times measured.
void add_timing_fields(nlohmann::json& report, const PostTask& post, const TaskStats& s,
                       const PostFigures& figures, std::uint64_t frames, double elapsed) {
    report["real_frames"] = frames;
    report["elapsed_s"] = elapsed;
    report["accepted"] = figures.accepted;
    report["busy"] = figures.busy;
    report["ready"] = s.ready;
    report["failed_jobs"] = s.failed_jobs;
    // What a display shows: each frame the newest output; for interpolate each new output is a
    // generated frame between two real ones, shown between them.
    report["outputs_per_real_frame"] =
        frames > 0 ? static_cast<double>(s.ready) / static_cast<double>(frames) : 0.0;
    report["new_outputs_shown"] = figures.new_outputs;
    report["display_frames"] =
        post.kind == PostKind::Interpolate ? frames + figures.new_outputs : frames;
    // Accepted submits only.
    report["submit_us"] = detail::to_json(detail::summarise(figures.submit_us));
    report["submit_to_ready_us"] = latency_json(s.ready_observed);
    report["frame_end_to_ready_us"] =
        detail::to_json(detail::summarise(figures.frame_end_to_ready_us));
    report["frame_end_to_ready_note"] =
        "every accepted frame after the first 10 at a paced --fps (at an unlimited rate the "
        "sampled frames only): from the real frame's end on the primary (its last GPU "
        "timestamp on the host's clock; where the primary has none, the host seeing its timeline "
        "value) to its output acquirable, pump() and acquire() called every 20 us; "
        "percentiles by nearest rank";
    report["frame_end_to_ready_from_gpu_timestamp"] = figures.frame_ends_from_gpu;
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
}

// Everything in flight lands before the figures are read.
void wait_until_idle(Runtime& runtime, TaskId task, std::uint32_t timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms) * 2;
    while (runtime.progress(task).in_flight > 0 && Clock::now() < deadline) {
        runtime.pump();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

} // namespace

PostRunResult run_post(Runtime& runtime, RunScene& scene, const PostRunOptions& options) {
    const PostTask post = register_post_task(runtime, scene, options);
    PostRunResult result;
    MainView view(runtime, scene, post.render_extent, 1, post.out_extent, k_frames_in_flight,
                  MainViewOutputs::ColorDepthMotion);
    PostReference reference(runtime, scene, post.kind, post.out_extent);
    PostFrameLoop loop(runtime, scene, options, post, view, reference, result);
    const double elapsed = loop.run();
    wait_until_idle(runtime, post.task, options.timeout_ms);
    const TaskStats s = runtime.stats(post.task);
    nlohmann::json report;
    add_task_fields(report, post, options, s);
    add_timing_fields(report, post, s, loop.figures(), result.frames, elapsed);
    report["quality"] = quality_json(post.kind, loop.figures(), result.missed_samples);
    result.report = report;
    (void)runtime.unregister_task(post.task);
    return result;
}

} // namespace tandem::harness
