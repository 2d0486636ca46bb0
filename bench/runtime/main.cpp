// tandem-bench-runtime: the runtime's three performance goals, each against a ceiling measured
// in the same run on the same devices.
//   decoupling  ready rate at a requested 1000 Hz with the primary frame loop at 30 FPS, over
//               the ready rate with the frame loop unlimited (goal >= 0.97)
//   pipelining  ready rate of a tiny task at maximum request rate with 3 slots, over serial
//               submit-and-wait of the same work (goal >= 2)
//   app cost    app-thread time of submit + pump + acquire + release per task per frame,
//               median (goal < 20 us)
//   moves       a 60 FPS frame loop while the scheduler moves "auto" tasks to devices they
//               were never prepared on: the longest frame during a move over the median frame
//               of the same loop outside moves (goal <= 1.5)
// Median of --runs runs; outputs verified against the workload's CPU reference after timing.
// --workload compute runs an application's own SPIR-V compute pass through the public API
// (tandem/compute.hpp: tests/runtime/shaders/palette.comp, push constants and two input buffers
// from each job's bytes) instead of the built-in pattern.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "harness/cpu_threads.hpp"
#include "harness/frame_loop.hpp"
#include "harness/lease_reader.hpp"
#include "harness/pattern_check.hpp"
#include "harness/profile_file.hpp"
#include "harness/rate.hpp"
#include "harness/statistics.hpp"
#include "harness/tool_log.hpp"
#include "tandem/compute.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"

// tests/runtime/shaders/palette.comp, embedded at build time (CMakeLists.txt).
namespace tandem::shaders {
std::span<const std::uint32_t> palette_comp();
} // namespace tandem::shaders

namespace {

using Clock = std::chrono::steady_clock;

// The compute workload's job: push constants (generation 0, 5 colours), the palette, an
// offset; texel (x, y) is palette[(x + y + offset) % 5], packed RGBA8.
constexpr std::uint32_t k_palette[5] = {0xff0000ffu, 0x80ff8000u, 0x00000000u, 0xffffffffu,
                                        0x12345678u};
constexpr std::uint32_t k_offset = 3;

std::vector<std::byte> compute_job() {
    std::vector<std::byte> out(8 + sizeof k_palette + 4);
    const std::uint32_t push[2] = {0, 5};
    std::memcpy(out.data(), push, 8);
    std::memcpy(out.data() + 8, k_palette, sizeof k_palette);
    std::memcpy(out.data() + 8 + sizeof k_palette, &k_offset, 4);
    return out;
}

tandem::WorkloadFactory palette_factory() {
    const std::span<const std::uint32_t> words = tandem::shaders::palette_comp();
    tandem::ComputeTaskDesc d;
    d.spirv.assign(words.begin(), words.end());
    d.push_constant_bytes = 8;
    d.input_bytes = {sizeof k_palette, 4};
    return tandem::compute_workload(d);
}

// -1 when `px` is the palette image, else the first texel that differs.
long palette_mismatch(const std::uint8_t* px, std::uint32_t width, std::uint32_t height) {
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            std::uint32_t texel = 0;
            std::memcpy(&texel, px + (std::size_t{y} * width + x) * 4, 4);
            if (texel != k_palette[(x + y + k_offset) % 5]) {
                return static_cast<long>(y) * width + x;
            }
        }
    }
    return -1;
}

// The bytes every submit carries (empty for the pattern).
std::vector<std::byte> g_job;
bool g_compute = false;

struct Stats {
    double median = 0, min = 0, max = 0;
    std::size_t n = 0;
};

Stats stats_of(std::vector<double> v) {
    Stats s;
    s.n = v.size();
    if (v.empty()) {
        return s;
    }
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.max = v.back();
    s.median = tandem::harness::median_sorted(v);
    return s;
}

nlohmann::json to_json(const Stats& s) {
    return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"n", s.n}};
}

// Reads the task's newest output on the primary and checks it exactly; false on a mismatch.
bool verify_newest(tandem::Runtime& runtime, tandem::TaskId task) {
    runtime.pump();
    auto lease = runtime.acquire(task);
    if (!lease) {
        return false;
    }
    tandem::harness::LeaseReader reader(runtime, 1, lease->extent.width, lease->extent.height);
    const std::uint64_t v = reader.read(*lease, true);
    bool ok = v != 0 && reader.wait(v, std::chrono::seconds(10)) == VK_SUCCESS;
    ok = ok &&
         (g_compute
              ? palette_mismatch(reader.pixels(v), lease->extent.width, lease->extent.height)
              : tandem::harness::pattern_mismatch(reader.pixels(v), lease->generation,
                                                  lease->extent.width, lease->extent.height)) < 0;
    runtime.release(*lease, v);
    return ok;
}

// Serial submit-and-wait: one job at a time, the next submitted once the previous is ready.
double serial_ready_hz(tandem::Runtime& runtime, tandem::TaskId task, double seconds) {
    const auto start = Clock::now();
    const auto end =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    std::uint64_t done = 0;
    while (Clock::now() < end) {
        const auto r = runtime.submit(task, g_job);
        if (!r.accepted()) {
            runtime.pump();
            continue;
        }
        // Wait by leasing the newest output (cheap), not by asking for statistics (which sort
        // latency samples and would slow the ceiling down).
        for (;;) {
            runtime.pump();
            auto lease = runtime.acquire(task);
            const bool arrived = lease && lease->generation >= r.generation;
            if (lease) {
                runtime.release(*lease, 0);
            }
            if (arrived) {
                break;
            }
            if (Clock::now() > end + std::chrono::seconds(10)) {
                throw tandem::Error("Serial submit-and-wait: generation " +
                                        std::to_string(r.generation) + " never arrived",
                                    "The worker may be lost; run with --log-level info");
            }
        }
        ++done;
    }
    return static_cast<double>(done) / std::chrono::duration<double>(Clock::now() - start).count();
}

// Pipelined: submit at maximum rate (Busy when every slot is in use), pump, acquire, release.
double pipelined_ready_hz(tandem::Runtime& runtime, tandem::TaskId task, double seconds) {
    const std::uint64_t before = runtime.stats(task).ready;
    const auto start = Clock::now();
    const auto end =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < end) {
        (void)runtime.submit(task, g_job);
        runtime.pump();
        if (auto lease = runtime.acquire(task)) {
            runtime.release(*lease, 0);
        }
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    // Let the in-flight work land so the next phase starts clean.
    while (runtime.stats(task).in_flight > 0) {
        runtime.pump();
    }
    return static_cast<double>(runtime.stats(task).ready - before) / elapsed;
}

// App-thread cost per frame: a ~1 kHz frame loop timing submit + pump + acquire + release.
std::vector<double> app_cost_us(tandem::Runtime& runtime, tandem::TaskId task, double seconds) {
    std::vector<double> samples;
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds));
    while (Clock::now() < end) {
        const auto t0 = Clock::now();
        (void)runtime.submit(task, g_job);
        runtime.pump();
        auto lease = runtime.acquire(task);
        if (lease) {
            runtime.release(*lease, 0);
        }
        const auto t1 = Clock::now();
        samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return samples;
}

// A profile in which every device runs the task at 2 ms per update and every pair moves a result
// in well under that, so each auto task starts on a worker; the moves are then forced through the
// public API (observe_execute reports 500 ms on the task's device: past any capacity).
std::string write_move_profile(const std::vector<tandem::DeviceInfo>& devices) {
    tandem::harness::SyntheticProfile costs;
    costs.created = "bench";
    costs.tandem_version = "bench";
    costs.prepare_us = 20.0;
    costs.reintegrate_gbps = 20.0;
    costs.reintegrate_latency_us = 10.0;
    costs.workloads = {{"pattern", 256, 256, 0, 2.0}, {"pattern", 1024, 1024, 0, 32.0}};
    costs.sync_us = 50.0;
    costs.transfer_gbps = 20.0;
    costs.transfer_latency_us = 50.0;
    const std::string path = "/tmp/tandem-bench-moves-" + std::to_string(::getpid()) + ".json";
    tandem::harness::save_synthetic_profile(devices, costs, path);
    return path;
}

struct MoveResult {
    std::vector<double> steady_ms; // frame start to next start, outside moves
    std::vector<double> moving_ms; // the same, from a move's trigger until the new device shows
    std::vector<double> moving_work_us; // the frame's Tandem calls during moves
    std::vector<double> steady_work_us;
    std::size_t moves = 0;       // moves that completed (the new device's output shown)
    std::size_t fresh = 0;       // of them, to a device the task was never prepared on
    std::uint64_t backwards = 0; // frames that showed an older generation than before
    std::uint64_t blank = 0;     // frames with no output after the first one
    bool verified = false;
};

MoveResult measure_moves(const tandem::RuntimeOptions& base,
                         const std::vector<tandem::DeviceInfo>& devices, std::uint32_t tasks,
                         std::uint32_t width, std::uint32_t height, std::uint32_t slots) {
    tandem::RuntimeOptions options = base;
    options.scheduler.profile = write_move_profile(devices);
    options.scheduler.decision_interval = std::chrono::milliseconds(0);
    options.scheduler.background_calibration = false;
    // What is measured is the move itself, not what it frees: on one GPU opened twice (or
    // lavapipe opened several times) the adapters are openings of one device, between which the
    // scheduler moves nothing for a gain unless asked to treat them as separate.
    options.scheduler.openings_are_separate = true;
    tandem::Runtime runtime(options);
    std::vector<tandem::TaskId> ids;
    for (std::uint32_t i = 0; i < tasks; ++i) {
        tandem::TaskDesc d;
        d.name = "move-" + std::to_string(i);
        d.width = width;
        d.height = height;
        d.slots = slots;
        d.placement = tandem::Placement::automatic();
        d.cost.kind = "pattern"; // the profile above prices the compute pass as the pattern
        if (g_compute) {
            d.factory = palette_factory();
        }
        ids.push_back(runtime.register_task(d));
    }
    MoveResult out;
    const auto period = std::chrono::microseconds(16667); // 60 FPS
    constexpr int k_frames_between_moves = 30;
    const std::size_t planned = tasks * std::min<std::size_t>(2, devices.size() - 1);
    std::vector<std::uint64_t> shown(tasks, 0);
    std::vector<std::vector<std::uint32_t>> prepared_on(tasks);
    for (std::uint32_t i = 0; i < tasks; ++i) {
        prepared_on[i].push_back(runtime.stats(ids[i]).device);
    }
    constexpr std::uint32_t k_none = ~0u;
    std::uint32_t moving = k_none; // the task being moved
    std::uint32_t moving_from = 0;
    bool moving_fresh = false;
    std::uint32_t next_task = 0;
    std::size_t triggered = 0;
    int since_move = 0;
    auto next_frame = Clock::now();
    Clock::time_point previous{};
    bool previous_moving = false;
    const auto give_up = Clock::now() + std::chrono::seconds(60);
    while ((triggered < planned || moving != k_none) && Clock::now() < give_up) {
        const auto start = Clock::now();
        if (previous != Clock::time_point{}) {
            const double ms = std::chrono::duration<double, std::milli>(start - previous).count();
            (previous_moving ? out.moving_ms : out.steady_ms).push_back(ms);
        }
        previous = start;
        if (moving == k_none && since_move >= k_frames_between_moves && triggered < planned) {
            const std::uint32_t t = next_task;
            next_task = (next_task + 1) % tasks;
            moving = t;
            moving_from = runtime.stats(ids[t]).device;
            for (int k = 0; k < 9; ++k) {
                runtime.observe_execute(ids[t], moving_from, 500.0);
            }
            ++triggered;
        }
        const bool frame_moving = moving != k_none;
        for (const tandem::TaskId id : ids) {
            (void)runtime.submit(id, g_job);
        }
        runtime.pump();
        for (std::uint32_t i = 0; i < tasks; ++i) {
            auto lease = runtime.acquire(ids[i]);
            if (!lease) {
                out.blank += shown[i] > 0 ? 1 : 0;
                continue;
            }
            out.backwards += lease->generation < shown[i] ? 1 : 0;
            shown[i] = lease->generation;
            if (moving == i && lease->device != moving_from) {
                auto& seen = prepared_on[i];
                moving_fresh = std::find(seen.begin(), seen.end(), lease->device) == seen.end();
                seen.push_back(lease->device);
                out.fresh += moving_fresh ? 1 : 0;
                ++out.moves;
                moving = k_none;
                since_move = 0;
            }
            runtime.release(*lease, 0);
        }
        const double work_us =
            std::chrono::duration<double, std::micro>(Clock::now() - start).count();
        (frame_moving ? out.moving_work_us : out.steady_work_us).push_back(work_us);
        previous_moving = frame_moving;
        ++since_move;
        next_frame += period;
        if (next_frame < Clock::now()) {
            next_frame = Clock::now();
        }
        std::this_thread::sleep_until(next_frame);
    }
    while (true) {
        bool busy = false;
        for (const tandem::TaskId id : ids) {
            busy = busy || runtime.stats(id).in_flight > 0;
        }
        if (!busy) {
            break;
        }
        runtime.pump();
    }
    out.verified = true;
    for (const tandem::TaskId id : ids) {
        out.verified = verify_newest(runtime, id) && out.verified;
    }
    std::remove(options.scheduler.profile.c_str());
    return out;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"tandem-bench-runtime: decoupling, pipelining and app-thread cost of the runtime"};
    tandem::RuntimeOptions options;
    options.validation = "off";
    std::string placement = "worker:0";
    std::uint32_t move_tasks = 4;
    std::string rate_text = "1000";
    std::uint32_t width = 256, height = 256, tiny = 16;
    int runs = 3;
    std::uint32_t slots = 3;
    double seconds = 3.0;
    std::string json_file;
    std::string log_level = "warn";
    std::string machine;
    std::string workload = "pattern";
    app.add_option("--primary", options.primary, "Primary adapter: auto, index, UUID or name part")
        ->capture_default_str();
    app.add_option("--workers", options.workers, "Worker adapters: auto, none or selectors")
        ->capture_default_str();
    app.add_option("--virtual-devices", options.virtual_devices,
                   "Open each physical device N times (0: $TANDEM_VIRTUAL_DEVICES, else 1)");
    app.add_option("--placement", placement,
                   "Placement of the decoupling, pipelining and app-cost tasks: worker:N, primary "
                   "or auto (the scheduler)")
        ->capture_default_str();
    app.add_option("--move-tasks", move_tasks,
                   "Auto tasks the moves measurement moves, each to every device once (0: skip)")
        ->capture_default_str();
    app.add_option("--rate", rate_text, "Requested rate for the decoupling goal (Hz)")
        ->capture_default_str();
    app.add_option("--width", width, "Decoupling / app-cost task width")->capture_default_str();
    app.add_option("--height", height, "Decoupling / app-cost task height")->capture_default_str();
    app.add_option("--tiny", tiny, "Pipelining task size (square)")->capture_default_str();
    app.add_option("--slots", slots, "Slots per task (the goals are stated for 3)")
        ->capture_default_str()
        ->check(CLI::Range(2, 16));
    app.add_option("--runs", runs, "Runs per measurement; the median is reported")
        ->capture_default_str();
    app.add_option("--seconds", seconds, "Seconds per run")->capture_default_str();
    app.add_option("--workload", workload,
                   "pattern (built in) or compute (an application's SPIR-V through the public API)")
        ->capture_default_str()
        ->check(CLI::IsMember({"pattern", "compute"}));
    app.add_option("--machine", machine, "A sentence describing the machine, for the JSON");
    app.add_option("--json", json_file, "Write the results as JSON to FILE");
    app.add_option("--validation", options.validation, "off, core or sync")->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    tandem::harness::keep_cores_from_cpu_devices(); // before any instance: lavapipe reads it

    try {
        options.log_level = tandem::harness::parse_log_level_option(log_level);
        tandem::harness::apply_tool_log_level(options.log_level);
        const double rate = tandem::harness::parse_rate_hz(rate_text);
        tandem::Runtime runtime(options);
        tandem::TaskDesc big;
        big.name = "decoupling";
        big.width = width;
        big.height = height;
        // Any text that is not one of the placement forms selects a device.
        big.placement =
            tandem::Placement::parse(placement).value_or(tandem::Placement::on_device(placement));
        big.slots = slots;
        g_compute = workload == "compute";
        if (g_compute) {
            big.factory = palette_factory();
            g_job = compute_job();
        }
        const tandem::TaskId big_task = runtime.register_task(big);
        tandem::TaskDesc small = big;
        small.name = "tiny";
        small.width = tiny;
        small.height = tiny;
        // Same device as the big task ("auto" spreads tasks over workers).
        small.placement = big.placement;
        if (runtime.worker_devices().empty()) {
            small.placement = tandem::Placement::on_primary();
        }
        const tandem::TaskId tiny_task = runtime.register_task(small);
        const tandem::TaskStats placed = runtime.stats(big_task);
        const auto primary = runtime.primary_device();
        const tandem::DeviceInfo worker = [&] {
            for (const tandem::DeviceInfo& w : runtime.worker_devices()) {
                if (w.index == placed.device) {
                    return w;
                }
            }
            return primary;
        }();
        std::printf("primary: %s (adapter %u); worker: %s (adapter %u) via %s\n",
                    primary.name.c_str(), primary.index, worker.name.c_str(), worker.index,
                    transfer_path_name(placed).c_str());

        // Warm-up: pipelines built, memory touched, first submits done.
        (void)pipelined_ready_hz(runtime, big_task, 0.3);
        (void)pipelined_ready_hz(runtime, tiny_task, 0.3);

        // 1. Decoupling: interleaved runs, unlimited FPS (the ceiling) and 30 FPS.
        std::vector<double> unlimited, fps30;
        std::uint64_t verified = 0, mismatches = 0;
        for (int r = 0; r < runs; ++r) {
            for (double fps : {0.0, 30.0}) {
                tandem::harness::StreamOptions so;
                so.rate_hz = rate;
                so.quiet = true;
                tandem::harness::FrameLoopOptions lo;
                lo.fps = fps;
                lo.duration_s = seconds;
                lo.verify_every = 50;
                lo.verify_pattern = !g_compute;
                lo.snapshot = g_job;
                const auto res = tandem::harness::run_stream(runtime, big_task, so, lo);
                (fps == 0 ? unlimited : fps30).push_back(res.stream.ready_hz);
                verified += res.verified;
                mismatches += res.mismatches;
                while (runtime.stats(big_task).in_flight > 0) {
                    runtime.pump();
                }
            }
        }
        // 2. Pipelining: serial submit-and-wait (the ceiling) and maximum request rate.
        std::vector<double> serial, pipelined;
        for (int r = 0; r < runs; ++r) {
            serial.push_back(serial_ready_hz(runtime, tiny_task, seconds));
            pipelined.push_back(pipelined_ready_hz(runtime, tiny_task, seconds));
        }
        // 3. App-thread cost.
        std::vector<double> cost;
        for (int r = 0; r < runs; ++r) {
            auto c = app_cost_us(runtime, big_task, seconds);
            cost.insert(cost.end(), c.begin(), c.end());
        }
        while (runtime.stats(big_task).in_flight > 0) {
            runtime.pump();
        }
        const bool big_ok = verify_newest(runtime, big_task);
        const bool tiny_ok = verify_newest(runtime, tiny_task);
        verified += 2;
        mismatches += (big_ok ? 0 : 1) + (tiny_ok ? 0 : 1);

        // 4. Moves, on a runtime of its own (the same adapters) whose scheduler has a profile.
        std::vector<tandem::DeviceInfo> adapters{primary};
        for (const auto& w : runtime.worker_devices()) {
            adapters.push_back(w);
        }
        MoveResult moves;
        if (move_tasks > 0 && adapters.size() > 1) {
            moves = measure_moves(options, adapters, move_tasks, width, height, slots);
            verified += move_tasks;
            mismatches += moves.verified ? 0 : 1;
        }
        const Stats sm = stats_of(moves.steady_ms), smm = stats_of(moves.moving_ms);
        const double move_ratio = sm.median > 0 ? smm.max / sm.median : 0;

        const Stats su = stats_of(unlimited), s30 = stats_of(fps30), ss = stats_of(serial),
                    sp = stats_of(pipelined), sc = stats_of(cost);
        const double decoupling = su.median > 0 ? s30.median / su.median : 0;
        const double pipelining = ss.median > 0 ? sp.median / ss.median : 0;
        const double cost_p90 = tandem::harness::percentile(cost, 0.9);

        std::printf("\n%-44s %10s %10s %10s\n", "measurement", "median", "min", "max");
        auto row = [](const char* name, const Stats& s) {
            std::printf("%-44s %10.1f %10.1f %10.1f\n", name, s.median, s.min, s.max);
        };
        row("ready Hz, 1000 Hz requested, FPS unlimited", su);
        row("ready Hz, 1000 Hz requested, FPS 30", s30);
        row("ready Hz, tiny task, serial submit-and-wait", ss);
        const std::string pipelined_name =
            "ready Hz, tiny task, pipelined (" + std::to_string(slots) + " slots)";
        row(pipelined_name.c_str(), sp);
        row("app-thread us per task per frame", sc);
        row("frame ms at 60 FPS, outside moves", sm);
        row("frame ms at 60 FPS, during moves", smm);
        std::printf("moves: %zu completed (%zu to a device never prepared before), %llu blank "
                    "frames, %llu older frames; longest frame during a move / median %.3f "
                    "(<= 1.5: %s)\n",
                    moves.moves, moves.fresh, static_cast<unsigned long long>(moves.blank),
                    static_cast<unsigned long long>(moves.backwards), move_ratio,
                    move_ratio <= 1.5 && moves.moves > 0 ? "met" : "NOT met");
        std::printf("\ngoals: decoupling %.3f (>= 0.97: %s), pipelining %.2fx (>= 2: %s), app "
                    "cost %.1f us (< 20: %s); verified %llu outputs, %llu mismatches\n",
                    decoupling, decoupling >= 0.97 ? "met" : "NOT met", pipelining,
                    pipelining >= 2 ? "met" : "NOT met", sc.median,
                    sc.median < 20 ? "met" : "NOT met", static_cast<unsigned long long>(verified),
                    static_cast<unsigned long long>(mismatches));

        if (!json_file.empty()) {
            char host[256] = {};
            ::gethostname(host, sizeof host - 1);
            nlohmann::json devices = nlohmann::json::array();
            for (const auto* info : {&primary, &worker}) {
                devices.push_back({{"index", info->index},
                                   {"role", info == &primary ? "primary" : "worker"},
                                   {"name", info->name},
                                   {"driver", info->driver_name + " " + info->driver_version},
                                   {"uuid", tandem::to_string(info->device_uuid)}});
            }
            nlohmann::json doc;
            doc["benchmark"] = "runtime";
            doc["percentile_rule"] = "nearest rank"; // harness/statistics.hpp, every figure
            doc["machine"] = {{"host", host},
                              {"description", machine},
                              {"cpus", std::thread::hardware_concurrency()},
                              {"devices", devices}};
            doc["config"] = {{"rate_hz", rate},
                             {"workload", workload},
                             {"size", {width, height}},
                             {"tiny_size", {tiny, tiny}},
                             {"slots", slots},
                             {"runs", runs},
                             {"seconds_per_run", seconds},
                             {"transfer_path", transfer_path_name(runtime.stats(big_task))},
                             {"validation", options.validation}};
            doc["ceilings"] = {{"ready_hz_fps_unlimited", su.median},
                               {"ready_hz_serial_submit_and_wait", ss.median}};
            doc["rows"] = {
                {{"name", "ready_hz_fps_unlimited"}, {"value", to_json(su)}},
                {{"name", "ready_hz_fps_30"}, {"value", to_json(s30)}},
                {{"name", "ready_hz_tiny_serial"}, {"value", to_json(ss)}},
                {{"name", "ready_hz_tiny_pipelined"}, {"value", to_json(sp)}},
                {{"name", "app_thread_us_per_frame"}, {"value", to_json(sc)}, {"p90", cost_p90}},
                {{"name", "frame_ms_60fps_outside_moves"}, {"value", to_json(sm)}},
                {{"name", "frame_ms_60fps_during_moves"}, {"value", to_json(smm)}},
                {{"name", "frame_work_us_during_moves"},
                 {"value", to_json(stats_of(moves.moving_work_us))}},
                {{"name", "frame_work_us_outside_moves"},
                 {"value", to_json(stats_of(moves.steady_work_us))}},
                {{"name", "moves"},
                 {"completed", moves.moves},
                 {"to_unprepared_device", moves.fresh},
                 {"blank_frames", moves.blank},
                 {"older_frames", moves.backwards},
                 {"tasks", move_tasks}}};
            doc["goals"] = {{{"name", "decoupling_ratio_30fps_over_unlimited"},
                             {"measured", decoupling},
                             {"target", 0.97},
                             {"met", decoupling >= 0.97}},
                            {{"name", "pipelining_ratio_over_serial"},
                             {"measured", pipelining},
                             {"target", 2.0},
                             {"met", pipelining >= 2.0}},
                            {{"name", "app_thread_us_median"},
                             {"measured", sc.median},
                             {"target", 20.0},
                             {"met", sc.median < 20.0}},
                            {{"name", "longest_frame_during_moves_over_median"},
                             {"measured", move_ratio},
                             {"target", 1.5},
                             {"met", move_ratio <= 1.5 && moves.moves > 0}}};
            doc["verification"] = {{"verified", verified}, {"mismatches", mismatches}};
            std::ofstream(json_file) << doc.dump(2) << '\n';
        }
        return mismatches == 0 ? 0 : 1;
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "tandem-bench-runtime: %s\n", e.what());
        return 1;
    }
}
