#include "run_capture.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "harness/capture_tasks.hpp"
#include "harness/main_view.hpp"
#include "harness/png.hpp"
#include "harness/run_report.hpp"
#include "run_capture_report.hpp"
#include "tandem/trace.hpp"

namespace tandem::cli {
namespace {

using Clock = std::chrono::steady_clock;

// How one capture task is fed: its snapshots' schedule, and the frame's lease of its output.
struct TaskFeed {
    double period_s = 0;
    double next_submit_s = 0;
    // Accepted generation -> scene time (one generation space per task, wherever it runs).
    std::map<std::uint64_t, double> generation_time;
    std::optional<Lease> lease; // this frame's
    bool failed_once = false;
};

// When frames start, and which frame times count (frames writing PNGs wait for the GPU).
struct FramePacing {
    Clock::time_point start;
    Clock::duration period = Clock::duration::zero(); // zero: unlimited
    Clock::time_point next_frame;
    Clock::time_point next_progress;
    Clock::time_point previous_start{};
    bool previous_counts = false;
};

// The leases of one frame: external texture k of the frame is leases[k], and shown[i] the
// index of task i's lease, when it has an output to show.
struct FrameLeases {
    std::vector<Lease> leases;
    std::vector<std::optional<std::uint32_t>> shown;
};

class CaptureRun {
public:
    CaptureRun(Runtime& runtime, harness::RunScene& scene, const CaptureModeArgs& args)
        : m_runtime(runtime), m_scene(scene), m_args(args), m_captures(scene),
          m_specs(scene.tasks()), m_progress(!args.quiet && ::isatty(STDERR_FILENO) != 0) {}

    void register_tasks();
    void note_scheduler_model();
    // Records (and with --explain prints) the decisions the pumps took that changed something.
    void note_decisions(std::uint64_t frame, bool progress_line);
    void print_header() const;
    void run_frames();
    [[nodiscard]] int finish();

private:
    // Renders frame `frame`; false when the run must stop (the failure recorded).
    bool render_frame(harness::MainView& view, FramePacing& pacing, std::uint64_t frame);
    void submit_due_snapshots(double t);
    // The last frame shows every task's newest output: waits (bounded) until nothing is in
    // flight.
    void wait_for_outputs();
    FrameLeases acquire_leases();
    void release_leases(std::uint64_t value);
    // The main view (and on the last frame each task's output) as PNGs; false when the frame
    // did not finish.
    bool write_pngs(const harness::MainView& view, std::uint64_t value, std::uint64_t frame,
                    bool write_main, bool last, const FrameLeases& leases);
    void print_progress(FramePacing& pacing, std::uint64_t frame, bool last) const;

    Runtime& m_runtime;
    harness::RunScene& m_scene;
    const CaptureModeArgs& m_args;
    harness::CaptureTasks m_captures; // outlives the tasks registered from it
    const std::vector<harness::RunTaskInfo>& m_specs;
    const bool m_progress; // a progress line on stderr
    std::vector<TaskFeed> m_feeds;
    CaptureRecord m_record;
    VkExtent2D m_max_task_extent{1, 1};
    std::uint64_t m_decisions_seen = 0;
};

void CaptureRun::register_tasks() {
    m_record.devices.push_back(m_runtime.primary_device());
    for (const DeviceInfo& w : m_runtime.worker_devices()) {
        m_record.devices.push_back(w);
    }
    if (!m_args.profile.empty()) {
        m_record.scheduler["profile_path"] = m_args.profile;
    }
    m_feeds.resize(m_specs.size());
    m_record.tasks.resize(m_specs.size());
    for (std::size_t i = 0; i < m_specs.size(); ++i) {
        const harness::RunTaskInfo& spec = m_specs[i];
        m_record.tasks[i].id = m_runtime.register_task(m_captures.desc(i, m_args.slots));
        m_feeds[i].period_s = 1.0 / spec.rate_hz;
        m_max_task_extent.width = std::max(m_max_task_extent.width, spec.width);
        m_max_task_extent.height = std::max(m_max_task_extent.height, spec.height);
    }
}

// The scheduler's model, and whether it uses the profile it was given (why not, if not).
void CaptureRun::note_scheduler_model() {
    const PlacementReport first = m_runtime.placement();
    nlohmann::json& scheduler = m_record.scheduler;
    scheduler["model"] = first.model;
    const bool profile_used = first.model.rfind("profile ", 0) == 0;
    std::string profile_note = m_args.profile_note;
    if (!m_args.profile.empty() && !profile_used) {
        profile_note = first.model;
    }
    scheduler["profile"] = profile_used ? nlohmann::json(m_args.profile) : nlohmann::json();
    const bool any_auto =
        std::any_of(m_specs.begin(), m_specs.end(), [](const auto& t) { return t.automatic; });
    if (any_auto && !profile_note.empty()) {
        std::fprintf(stderr, "tandem: %s; auto placement uses measured timings only\n",
                     profile_note.c_str());
    }
    if (!profile_note.empty()) {
        scheduler["profile_note"] = profile_note;
    }
}

void CaptureRun::note_decisions(std::uint64_t frame, bool progress_line) {
    const std::uint64_t taken = m_runtime.placement_decisions();
    if (taken == m_decisions_seen) {
        return;
    }
    const bool first = m_decisions_seen == 0;
    m_decisions_seen = taken;
    m_record.last_decision_frame = frame;
    const PlacementReport report = m_runtime.placement();
    if (!first && report.moves == 0) {
        return;
    }
    // JSON only for the decisions kept (the per-frame path stays cheap).
    nlohmann::json j = nlohmann::json::parse(report.json);
    j["frame"] = frame;
    ++m_record.decisions_changed;
    m_record.decisions.push_back(j);
    if (m_args.explain) {
        if (progress_line) {
            std::fprintf(stderr, "\r\033[K");
        }
        std::FILE* explain_out = m_args.json ? stderr : stdout;
        std::fprintf(explain_out, "placement at frame %llu:\n%s",
                     static_cast<unsigned long long>(frame), report.text.c_str());
        std::fflush(explain_out);
    }
}

void CaptureRun::print_header() const {
    if (m_args.quiet) {
        return;
    }
    const double fps = m_args.fps;
    std::fprintf(stderr, "run: %s, %zu task(s), %llu frames at %s, main view %ux%u on %s\n",
                 m_scene.demo() ? "built-in demo" : m_args.scene_path.c_str(), m_feeds.size(),
                 static_cast<unsigned long long>(m_args.frames),
                 fps > 0 ? (harness::fixed(fps, 0) + " FPS").c_str() : "unlimited FPS",
                 m_scene.width(), m_scene.height(), m_runtime.primary_device().name.c_str());
    for (std::size_t i = 0; i < m_specs.size(); ++i) {
        const TaskStats s = m_runtime.stats(m_record.tasks[i].id);
        std::fprintf(stderr, "  %-12s %ux%u @ %g Hz on %s (adapter %u) via %s%s\n",
                     m_specs[i].name.c_str(), m_specs[i].width, m_specs[i].height,
                     m_specs[i].rate_hz, s.device_name.c_str(), s.device,
                     transfer_path_name(s).c_str(), m_specs[i].automatic ? " (auto)" : "");
    }
}

void CaptureRun::run_frames() {
    FramePacing pacing;
    pacing.start = Clock::now();
    if (m_args.fps > 0) {
        pacing.period = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(1.0 / m_args.fps));
    }
    {
        harness::MainView view(m_runtime, m_scene, VkExtent2D{m_scene.width(), m_scene.height()},
                               static_cast<std::uint32_t>(m_feeds.size()), m_max_task_extent);
        pacing.next_frame = pacing.start;
        pacing.next_progress = pacing.start;
        for (std::uint64_t frame = 0; frame < m_args.frames; ++frame) {
            if (!render_frame(view, pacing, frame)) {
                break;
            }
        }
        if (m_progress) {
            std::fprintf(stderr, "\n");
        }
        m_record.main_gpu_ms = view.gpu_ms();
        m_record.have_timestamps = view.has_timestamps();
    }
    m_record.elapsed_s = std::chrono::duration<double>(Clock::now() - pacing.start).count();
    m_runtime.pump();
}

bool CaptureRun::render_frame(harness::MainView& view, FramePacing& pacing, std::uint64_t frame) {
    const bool last = frame + 1 == m_args.frames;
    const auto frame_start = Clock::now();
    if (pacing.previous_counts) {
        m_record.frame_ms.push_back(
            std::chrono::duration<double, std::milli>(frame_start - pacing.previous_start).count());
    }
    pacing.previous_start = frame_start;
    const double t = m_args.wall_clock
                         ? std::chrono::duration<double>(Clock::now() - pacing.start).count()
                         : static_cast<double>(frame) * m_args.scene_dt;
    m_scene.animate(t);
    submit_due_snapshots(t);
    if (last) {
        wait_for_outputs();
    }
    m_runtime.pump();
    note_decisions(frame, m_progress);
    const FrameLeases leases = acquire_leases();
    const bool write_main = last || (m_args.png_every > 0 && frame % m_args.png_every == 0);
    harness::MainFrameRequest req;
    req.leases = leases.leases;
    req.shown = leases.shown;
    req.read_main = write_main;
    req.read_leases = last;
    const std::uint64_t value = view.render(m_scene, req);
    release_leases(value);
    if (value == 0) {
        m_record.failure = "frame " + std::to_string(frame) + ": " + view.last_error();
        return false;
    }
    ++m_record.frames_done;
    m_record.last_time_s = t;
    // Frames that wait for the GPU to write PNGs are not timed.
    pacing.previous_counts = !(write_main || last);
    if ((write_main || last) && !write_pngs(view, value, frame, write_main, last, leases)) {
        return false;
    }
    print_progress(pacing, frame, last);
    if (pacing.period > Clock::duration::zero() && !last) {
        pacing.next_frame += pacing.period;
        if (pacing.next_frame < Clock::now()) {
            pacing.next_frame = Clock::now();
        }
        std::this_thread::sleep_until(pacing.next_frame);
    }
    return true;
}

void CaptureRun::submit_due_snapshots(double t) {
    for (std::size_t i = 0; i < m_feeds.size(); ++i) {
        TaskFeed& feed = m_feeds[i];
        if (t + 1e-9 < feed.next_submit_s) {
            continue;
        }
        while (feed.next_submit_s <= t + 1e-9) {
            feed.next_submit_s += feed.period_s;
        }
        const auto bytes = m_scene.task_snapshot(i);
        const SubmitResult r = m_runtime.submit(m_record.tasks[i].id, bytes);
        if (r.accepted()) {
            feed.generation_time[r.generation] = t;
        } else if (r.status == SubmitStatus::Failed && !feed.failed_once) {
            feed.failed_once = true;
            if (m_record.failure.empty()) {
                m_record.failure = "task '" + m_specs[i].name + "' failed: " + r.reason;
            }
        }
    }
}

void CaptureRun::wait_for_outputs() {
    const auto deadline = Clock::now() + std::chrono::milliseconds(m_args.timeout_ms) * 2;
    for (;;) {
        m_runtime.pump();
        bool busy = false;
        for (const TaskShown& task : m_record.tasks) {
            for (const TaskDeviceStats& d : m_runtime.stats(task.id).devices) {
                busy = busy || (d.in_flight > 0 && !d.worker_lost);
            }
        }
        if (!busy || Clock::now() > deadline) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

FrameLeases CaptureRun::acquire_leases() {
    FrameLeases out;
    out.shown.resize(m_feeds.size());
    for (std::size_t i = 0; i < m_feeds.size(); ++i) {
        m_feeds[i].lease = m_runtime.acquire(m_record.tasks[i].id).lease;
        if (m_feeds[i].lease) {
            out.shown[i] = static_cast<std::uint32_t>(out.leases.size());
            out.leases.push_back(*m_feeds[i].lease);
        }
    }
    return out;
}

// Releases the frame's leases with the primary timeline value of the frame that showed them.
void CaptureRun::release_leases(std::uint64_t value) {
    for (std::size_t i = 0; i < m_feeds.size(); ++i) {
        TaskFeed& feed = m_feeds[i];
        if (!feed.lease) {
            continue;
        }
        TaskShown& shown = m_record.tasks[i];
        m_runtime.release(*feed.lease, value);
        ++shown.frames;
        shown.generation = feed.lease->generation;
        shown.adapter = feed.lease->device;
        auto& times = feed.generation_time;
        const auto it = times.find(shown.generation);
        shown.time_s = it != times.end() ? it->second : shown.time_s;
        // Older generations will never be shown again.
        times.erase(times.begin(), it);
    }
}

bool CaptureRun::write_pngs(const harness::MainView& view, std::uint64_t value, std::uint64_t frame,
                            bool write_main, bool last, const FrameLeases& leases) {
    if (view.wait(value, std::chrono::seconds(10)) != VK_SUCCESS) {
        m_record.failure = "frame " + std::to_string(frame) + " did not finish in 10 s";
        return false;
    }
    if (write_main) {
        char name[64];
        std::snprintf(name, sizeof name, "main_%05llu.png", static_cast<unsigned long long>(frame));
        const auto path = (m_args.out_dir / name).string();
        harness::write_png(path, m_scene.width(), m_scene.height(), view.main_pixels(value));
        m_record.main_pngs.push_back(path);
    }
    if (last) {
        for (std::size_t i = 0; i < m_specs.size(); ++i) {
            if (!leases.shown[i]) {
                continue;
            }
            const auto path =
                (m_args.out_dir / ("task_" + harness::file_stem(m_specs[i].name) + ".png"))
                    .string();
            harness::write_png(path, m_specs[i].width, m_specs[i].height,
                               view.lease_pixels(value, *leases.shown[i]));
            m_record.tasks[i].png = path;
        }
    }
    return true;
}

void CaptureRun::print_progress(FramePacing& pacing, std::uint64_t frame, bool last) const {
    const auto now = Clock::now();
    if (!m_progress || (now < pacing.next_progress && !last)) {
        return;
    }
    pacing.next_progress = now + std::chrono::milliseconds(250);
    std::string line =
        "\r  frame " + std::to_string(frame + 1) + "/" + std::to_string(m_args.frames);
    for (std::size_t i = 0; i < m_specs.size(); ++i) {
        line += "  " + m_specs[i].name + " gen " + std::to_string(m_record.tasks[i].generation);
    }
    std::fprintf(stderr, "%s\033[K", line.c_str());
    std::fflush(stderr);
}

// The report, the trace and the summary; the exit status.
int CaptureRun::finish() {
    CaptureReport report = capture_report(m_runtime, m_scene, m_args, m_record);
    const auto report_path = (m_args.out_dir / "report.json").string();
    write_report_json(report_path, report.json);
    report_validation(m_runtime);
    if (!m_args.trace.empty()) {
        write_trace(m_runtime, m_args.trace);
    }
    if (m_args.json) {
        std::printf("%s\n", report.json.dump(2).c_str());
    }
    if (!m_args.quiet) {
        print_capture_summary(m_args.json ? stderr : stdout, report, m_record, report_path);
    }
    if (!m_record.failure.empty()) {
        std::fprintf(stderr, "tandem: error: %s\n", m_record.failure.c_str());
        return 1;
    }
    if (report.task_lost) {
        // A task stayed on a lost worker (a manual placement): its output stopped.
        std::fprintf(stderr, "tandem: error: a worker was lost (see %s)\n", report_path.c_str());
        return 1;
    }
    return 0;
}

} // namespace

int run_capture_mode(Runtime& runtime, harness::RunScene& scene, const CaptureModeArgs& args) {
    CaptureRun run(runtime, scene, args);
    run.register_tasks();
    run.note_scheduler_model();
    run.note_decisions(0, false);
    run.print_header();
    run.run_frames();
    return run.finish();
}

} // namespace tandem::cli
