// `tandem stream`: runs one task from a timer at a target rate while a simulated primary frame
// loop (30, 60, 120 FPS or unlimited) acquires the newest output every frame and reads it on
// the primary; prints the statistics as tables or --json, and writes a trace with --trace.
#include <cstdio>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "harness/frame_loop.hpp"
#include "harness/rate.hpp"
#include "harness/run_report.hpp"
#include "harness/table.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"
#include "tandem/trace.hpp"

namespace tandem::cli {
namespace {

constexpr double k_max_duration_s = 86'400.0; // a day

struct StreamArgs {
    std::string rate = "60";
    std::string fps = "60";
    double duration = 5.0;
    std::uint64_t limit = 0;
    std::string size = "256x256";
    std::uint32_t slots = 3;
    std::string placement = "auto";
    std::string workload = "pattern";
    std::string transfer_path;
    std::uint32_t verify_every = 30;
    std::uint32_t timeout_ms = 5000;
    bool quiet = false;
    bool json = false;
    std::string trace;
};

double parse_fps(const std::string& text) {
    if (text == "unlimited" || text == "0") {
        return 0.0;
    }
    if (text == "30" || text == "60" || text == "120") {
        return std::stod(text);
    }
    throw Error("--fps '" + text + "' is not one of the simulated frame rates",
                "Use 30, 60, 120 or unlimited");
}

std::pair<std::uint32_t, std::uint32_t> parse_size(const std::string& text) {
    const auto x = text.find('x');
    try {
        if (x != std::string::npos) {
            std::size_t a = 0;
            std::size_t b = 0;
            const unsigned long w = std::stoul(text.substr(0, x), &a);
            const unsigned long h = std::stoul(text.substr(x + 1), &b);
            if (a == x && b == text.size() - x - 1 && w >= 1 && h >= 1 && w <= 16384 &&
                h <= 16384) {
                return {static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h)};
            }
        }
    } catch (const std::exception&) {
    }
    throw Error("--size '" + text + "' is not WIDTHxHEIGHT",
                "Give a size such as 256x256 (1 to 16384 each)");
}

void add_stream_options(CLI::App* sub, StreamArgs& args) {
    sub->add_option("--rate", args.rate,
                    "Requests per second: any positive finite number, '.' or ',' decimal mark")
        ->capture_default_str();
    sub->add_option("--fps", args.fps, "Simulated primary frame rate: 30, 60, 120 or unlimited")
        ->capture_default_str();
    sub->add_option("--duration", args.duration, "Seconds to run (upper bound)")
        ->check(positive_seconds(k_max_duration_s))
        ->capture_default_str();
    sub->add_option("--limit", args.limit, "Stop after N accepted submits (0: no limit)")
        ->check(whole_number(0, std::numeric_limits<std::uint64_t>::max()))
        ->capture_default_str();
    sub->add_option("--size", args.size, "Task output size WIDTHxHEIGHT")->capture_default_str();
    sub->add_option("--slots", args.slots, "Slots in the task's ring (2-16)")
        ->check(whole_number(2, 16))
        ->capture_default_str();
    sub->add_option("--placement", args.placement, "auto, primary, worker:N or an adapter selector")
        ->capture_default_str();
    sub->add_option("--transfer-path", args.transfer_path,
                    "Force a transfer path: " + transfer_path_names());
    sub->add_option("--verify-every", args.verify_every,
                    "Check every Nth new output against the pattern's CPU reference (0: never)")
        ->check(whole_number(0, std::numeric_limits<std::uint32_t>::max()))
        ->capture_default_str();
    sub->add_option("--timeout-ms", args.timeout_ms,
                    "A worker whose work is not ready within this time is lost")
        ->check(whole_number(1, k_max_timeout_ms))
        ->capture_default_str();
    sub->add_flag("--quiet", args.quiet, "No progress lines; only the final statistics");
    sub->add_flag("--json", args.json, "Print the statistics as JSON");
    sub->add_option("--trace", args.trace,
                    "Write a Chrome trace-event JSON file (Perfetto, chrome://tracing)");
}

// What ran, where, and at which rates the statistics were taken.
struct StreamSetup {
    TaskDesc desc;
    TaskStats placed; // as registered
    std::string path; // the transfer path's name
    double rate = 0;
    double fps = 0; // 0: unlimited
};

void print_stream_start(const Runtime& runtime, const StreamArgs& args, const StreamSetup& setup,
                        harness::FrameLoopOptions& loop) {
    const TaskStats& placed = setup.placed;
    std::fprintf(stderr,
                 "stream: %s on %s (adapter %u) -> %s (adapter %u) via %s, %.3g Hz, "
                 "frame loop %s\n",
                 args.size.c_str(), placed.device_name.c_str(), placed.device,
                 runtime.primary_device().name.c_str(), runtime.primary_device().index,
                 setup.path.c_str(), setup.rate,
                 setup.fps > 0 ? (harness::fixed(setup.fps, 0) + " FPS").c_str() : "unlimited");
    loop.progress = [](const harness::StreamStats& s) {
        std::fprintf(stderr,
                     "  %5.1fs  ticks %llu  accepted %llu  busy %llu  ready %llu "
                     "(%.1f/s)\n",
                     s.elapsed_s, static_cast<unsigned long long>(s.ticks),
                     static_cast<unsigned long long>(s.accepted),
                     static_cast<unsigned long long>(s.busy),
                     static_cast<unsigned long long>(s.ready), s.ready_hz);
    };
}

nlohmann::json stream_json(const Runtime& runtime, const StreamArgs& args, const StreamSetup& setup,
                           const harness::FrameLoopResult& r) {
    const harness::StreamStats& s = r.stream;
    const TaskDesc& desc = setup.desc;
    nlohmann::json j;
    j["task"] = {
        {"size", {desc.width, desc.height}},
        {"slots", desc.slots},
        {"workload", desc.workload},
        {"worker", {{"index", setup.placed.device}, {"name", setup.placed.device_name}}},
        {"primary",
         {{"index", runtime.primary_device().index}, {"name", runtime.primary_device().name}}},
        {"transfer_path", setup.path}};
    j["config"] = {{"rate_hz", setup.rate},
                   {"fps", setup.fps > 0 ? nlohmann::json(setup.fps) : nlohmann::json("unlimited")},
                   {"duration_s", args.duration},
                   {"limit", args.limit}};
    j["elapsed_s"] = s.elapsed_s;
    j["counts"] = {{"ticks", s.ticks},
                   {"accepted", s.accepted},
                   {"busy", s.busy},
                   {"failed", s.failed},
                   {"ready", s.ready},
                   {"in_flight", s.in_flight},
                   {"superseded", s.task.superseded}};
    j["rates_hz"] = {{"ticks", s.tick_hz},    {"accepted", s.accepted_hz}, {"busy", s.busy_hz},
                     {"failed", s.failed_hz}, {"ready", s.ready_hz},       {"frames", r.frame_hz}};
    j["latency_us"] = {{"worker_submit", harness::latency_json(s.task.worker_submit)},
                       {"transfer_queued", harness::latency_json(s.task.transfer_queued)},
                       {"worker_done", harness::latency_json(s.task.worker_done)},
                       {"ready_observed", harness::latency_json(s.task.ready_observed)}};
    j["percentile_rule"] = "nearest rank"; // every percentile in the report
    j["frames"] = {{"count", r.frames},
                   {"leases", r.leases},
                   {"new_outputs", r.new_outputs},
                   {"verified", r.verified},
                   {"mismatches", r.mismatches}};
    j["worker_lost"] = s.task.worker_lost;
    if (s.task.worker_lost) {
        j["worker_lost_reason"] = s.task.worker_lost_reason;
    }
    return j;
}

void print_stream_tables(const harness::FrameLoopResult& r) {
    const harness::StreamStats& s = r.stream;
    harness::Table counts({"", "count", "rate (Hz)"});
    counts.add({"timer ticks", std::to_string(s.ticks), harness::fixed(s.tick_hz)});
    counts.add({"accepted", std::to_string(s.accepted), harness::fixed(s.accepted_hz)});
    counts.add({"busy", std::to_string(s.busy), harness::fixed(s.busy_hz)});
    counts.add({"failed", std::to_string(s.failed), harness::fixed(s.failed_hz)});
    counts.add({"ready", std::to_string(s.ready), harness::fixed(s.ready_hz)});
    counts.add({"in flight", std::to_string(s.in_flight), ""});
    counts.add({"primary frames", std::to_string(r.frames), harness::fixed(r.frame_hz)});
    counts.print();
    std::printf("\n");
    harness::Table lat({"stage (from request)", "n", "p50 us", "p90 us", "p99 us", "max us"});
    auto row = [&](const char* name, const LatencyStats& l) {
        lat.add({name, std::to_string(l.count), harness::fixed(l.p50_us), harness::fixed(l.p90_us),
                 harness::fixed(l.p99_us), harness::fixed(l.max_us)});
    };
    row("worker submit", s.task.worker_submit);
    row("transfer queued", s.task.transfer_queued);
    row("worker done", s.task.worker_done);
    row("ready observed", s.task.ready_observed);
    lat.print();
    std::printf("\nverified %llu outputs against the CPU reference, %llu mismatches\n",
                static_cast<unsigned long long>(r.verified),
                static_cast<unsigned long long>(r.mismatches));
    if (s.task.worker_lost) {
        std::printf("worker lost: %s\n", s.task.worker_lost_reason.c_str());
    }
}

int run_stream_command(const StreamArgs& args, const GlobalOptions& global) {
    StreamSetup setup;
    setup.rate = harness::parse_rate_hz(args.rate);
    setup.fps = parse_fps(args.fps);
    const auto [width, height] = parse_size(args.size);

    RuntimeOptions options = runtime_options(global, std::chrono::milliseconds(args.timeout_ms));
    options.transfer_path = args.transfer_path;
    options.trace = !args.trace.empty();
    Runtime runtime(options);

    TaskDesc& desc = setup.desc;
    desc.name = "stream";
    desc.workload = args.workload;
    desc.width = width;
    desc.height = height;
    desc.slots = args.slots;
    // Any text that is not one of the placement forms selects a device, as device:SEL does.
    desc.placement =
        Placement::parse(args.placement).value_or(Placement::on_device(args.placement));
    const TaskId task = runtime.register_task(desc);
    setup.placed = runtime.stats(task);
    setup.path = transfer_path_name(setup.placed);

    harness::StreamOptions stream_options;
    stream_options.rate_hz = setup.rate;
    if (args.limit > 0) {
        stream_options.limit = args.limit;
    }
    stream_options.quiet = args.quiet;
    harness::FrameLoopOptions loop;
    loop.fps = setup.fps;
    loop.duration_s = args.duration;
    loop.verify_every = args.verify_every;
    loop.verify_pattern = desc.workload == "pattern";
    if (!args.quiet && !args.json) {
        print_stream_start(runtime, args, setup, loop);
    }
    const harness::FrameLoopResult r = harness::run_stream(runtime, task, stream_options, loop);
    report_validation(runtime);
    if (!args.trace.empty()) {
        write_trace(runtime, args.trace);
    }
    if (args.json) {
        std::printf("%s\n", stream_json(runtime, args, setup, r).dump(2).c_str());
    } else {
        print_stream_tables(r);
    }
    if (r.mismatches > 0) {
        std::fprintf(stderr, "tandem: error: %s\n", r.first_mismatch.c_str());
        return 1;
    }
    return r.stream.task.worker_lost ? 1 : 0;
}

} // namespace

Runner add_stream_command(CLI::App& app, const GlobalOptions& global) {
    auto args = std::make_shared<StreamArgs>();
    CLI::App* sub = app.add_subcommand(
        "stream", "Run one task from a timer at a target rate, read by a simulated primary frame "
                  "loop, and print the stream statistics");
    add_stream_options(sub, *args);
    return [args, &global]() -> int { return run_stream_command(*args, global); };
}

} // namespace tandem::cli
