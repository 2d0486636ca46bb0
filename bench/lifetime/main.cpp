// tandem-bench-lifetime: an engine that runs for hours, adding, changing and removing tasks, and
// what it costs. Each figure against its ceiling or baseline measured in the same run:
//   churn    --cycles register/unregister cycles of a task (every --job-every-th runs a job on
//            the GPU before it goes): device memory (VK_EXT_memory_budget's heap usage of every
//            physical device, summed over its heaps), host RSS (after malloc_trim) and the heap
//            in use, and the runtime's own holdings, after over before (goal: within 1%); the
//            application thread's cost of unregister_task (median, goal < 20 us). A hundredth
//            as many cycles (at least 200) warm up before the baseline; --churn-seconds ends it
//            early, reporting the cycles done.
//   moves    --moves moves of an auto task between two workers, after 20 that warm up: device
//            memory, RSS and heap after, over before (goal: within 1%)
//   frames   --tasks tasks in a 60 FPS frame loop for --seconds, one of them unregistered and
//            replaced, or reconfigured to another size, every few frames: the longest frame
//            (start to start) over the median frame of the same loop (goal <= 1.5) and the
//            application thread's cost per task per frame (median, goal < 20 us)
// Outputs are checked against the pattern's CPU reference along the way.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <vulkan/vulkan.h>

#include "core/stats.hpp"
#include "harness/cpu_threads.hpp"
#include "harness/lease_reader.hpp"
#include "harness/pattern_check.hpp"
#include "harness/tool_log.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct Stats {
    double median = 0, p99 = 0, min = 0, max = 0;
    std::size_t n = 0;
};

Stats stats_of(std::vector<double> v) {
    Stats s;
    s.n = v.size();
    if (v.empty()) {
        return s;
    }
    std::sort(v.begin(), v.end());
    s.median = tandem::detail::median_sorted(v);
    s.p99 = tandem::detail::percentile_sorted(v, 0.99);
    s.min = v.front();
    s.max = v.back();
    return s;
}

nlohmann::json to_json(const Stats& s) {
    return {{"median", s.median}, {"p99", s.p99}, {"min", s.min}, {"max", s.max}, {"n", s.n}};
}

// What the process and its devices hold at one moment.
struct Holdings {
    std::uint64_t device_bytes = 0; // heap usage (VK_EXT_memory_budget) over every device
    bool device_measured = false;   // every physical device reported a budget
    std::uint64_t rss_bytes = 0;    // /proc/self/statm, once free heap pages went back
    std::uint64_t heap_bytes = 0;   // the heap in use (mallinfo2): what is allocated and held
    std::uint64_t tandem_bytes = 0; // Runtime::resources(): Tandem's own allocations
    std::uint32_t tandem_allocations = 0;
    std::uint64_t pool_bytes = 0;  // the memory pools' blocks (in use or kept for reuse)
    std::uint32_t pipelines = 0;   // the pipeline shelves' pipelines
    std::uint32_t idle_images = 0; // images the image caches keep for reuse, and their memory
    std::uint64_t idle_image_bytes = 0;
    std::uint32_t threads = 0;
    std::uint32_t fds = 0; // open file descriptors (/proc/self/fd): exported memory and semaphores
};

std::uint32_t open_fds() {
    std::uint32_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        (void)entry;
        ++n;
    }
    return n;
}

std::uint64_t rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Heap usage of every physical device the runtime's adapters are openings of (by device UUID),
// through VK_EXT_memory_budget.
std::pair<std::uint64_t, bool> device_usage(const tandem::Runtime& runtime) {
    std::vector<tandem::DeviceInfo> adapters{runtime.primary_device()};
    for (const tandem::DeviceInfo& w : runtime.worker_devices()) {
        adapters.push_back(w);
    }
    const VkInstance instance = runtime.primary_vulkan().instance;
    std::uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    vkEnumeratePhysicalDevices(instance, &count, physical.data());
    std::uint64_t total = 0;
    bool all = true;
    std::vector<tandem::Uuid> seen;
    for (const tandem::DeviceInfo& a : adapters) {
        if (std::find(seen.begin(), seen.end(), a.device_uuid) != seen.end()) {
            continue; // another opening of the same device
        }
        seen.push_back(a.device_uuid);
        const bool budget = std::find(a.extensions.begin(), a.extensions.end(),
                                      VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) != a.extensions.end();
        bool found = false;
        for (VkPhysicalDevice p : physical) {
            VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
            VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
            props.pNext = &id;
            vkGetPhysicalDeviceProperties2(p, &props);
            if (!std::equal(a.device_uuid.begin(), a.device_uuid.end(), id.deviceUUID) || !budget) {
                continue;
            }
            VkPhysicalDeviceMemoryBudgetPropertiesEXT usage{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
            VkPhysicalDeviceMemoryProperties2 memory{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
            memory.pNext = &usage;
            vkGetPhysicalDeviceMemoryProperties2(p, &memory);
            for (std::uint32_t h = 0; h < memory.memoryProperties.memoryHeapCount; ++h) {
                total += usage.heapUsage[h];
            }
            found = true;
            break;
        }
        all = all && found;
    }
    return {total, all};
}

// Pumps until nothing is left retiring (at most a minute).
void settle(tandem::Runtime& runtime) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (runtime.resources().retiring != 0 && Clock::now() < deadline) {
        runtime.pump();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

Holdings holdings(tandem::Runtime& runtime) {
    settle(runtime);
    Holdings h;
    const auto [bytes, measured] = device_usage(runtime);
    h.device_bytes = bytes;
    h.device_measured = measured;
    // Free heap pages the allocator keeps count in RSS without being held by anyone: they go
    // back to the system first, so RSS compares what is held.
    (void)malloc_trim(0);
    h.rss_bytes = rss_bytes();
    h.heap_bytes = mallinfo2().uordblks;
    const tandem::RuntimeResources r = runtime.resources();
    for (const auto& d : r.devices) {
        h.tandem_bytes += d.bytes;
        h.tandem_allocations += static_cast<std::uint32_t>(d.allocations);
        h.pool_bytes += d.pool_bytes;
        h.pipelines += d.pipelines;
        h.idle_images += d.idle_images;
        h.idle_image_bytes += d.idle_image_bytes;
    }
    h.threads = r.threads;
    h.fds = open_fds();
    return h;
}

nlohmann::json to_json(const Holdings& h) {
    return {{"device_bytes", h.device_measured ? nlohmann::json(h.device_bytes) : nlohmann::json()},
            {"rss_bytes", h.rss_bytes},
            {"heap_bytes", h.heap_bytes},
            {"tandem_bytes", h.tandem_bytes},
            {"tandem_allocations", h.tandem_allocations},
            {"pool_bytes", h.pool_bytes},
            {"pipelines", h.pipelines},
            {"idle_images", h.idle_images},
            {"idle_image_bytes", h.idle_image_bytes},
            {"threads", h.threads},
            {"fds", h.fds}};
}

double ratio(std::uint64_t after, std::uint64_t before) {
    return before == 0 ? (after == 0 ? 1.0 : 0.0)
                       : static_cast<double>(after) / static_cast<double>(before);
}

tandem::TaskDesc task_desc(const std::string& name, const tandem::Placement& placement,
                           std::uint32_t width, std::uint32_t height) {
    tandem::TaskDesc d;
    d.name = name;
    d.width = width;
    d.height = height;
    d.placement = placement;
    return d;
}

// One job of `task`, waited for, its output checked exactly on the primary and released.
bool run_and_check(tandem::Runtime& runtime, tandem::harness::LeaseReader& reader,
                   tandem::TaskId task) {
    const std::uint64_t before = runtime.stats(task).ready;
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (!runtime.submit(task).accepted()) {
        runtime.pump();
        if (Clock::now() > deadline) {
            return false;
        }
    }
    while (runtime.stats(task).ready <= before) {
        runtime.pump();
        if (Clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    auto lease = runtime.acquire(task);
    if (!lease) {
        return false;
    }
    const std::uint64_t v = reader.read(*lease, true);
    const bool ok =
        v != 0 && reader.wait(v, std::chrono::seconds(10)) == VK_SUCCESS &&
        tandem::harness::pattern_mismatch(reader.pixels(v), lease->generation, lease->extent.width,
                                          lease->extent.height) < 0;
    (void)runtime.release(*lease, v);
    return ok;
}

struct Progress {
    const char* what;
    std::uint64_t total;
    Clock::time_point last = Clock::now();
    bool terminal = ::isatty(STDERR_FILENO) != 0;
    void tick(std::uint64_t done) {
        if (!terminal && done != total) {
            return; // a log file gets the last line only
        }
        if (Clock::now() - last > std::chrono::seconds(1) || done == total) {
            last = Clock::now();
            std::fprintf(stderr, "\r%s %llu/%llu", what, static_cast<unsigned long long>(done),
                         static_cast<unsigned long long>(total));
            if (done == total) {
                std::fprintf(stderr, "\n");
            }
        }
    }
};

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Tandem's lifetime benchmark: tasks added, changed and removed for hours"};
    std::uint64_t cycles = 100000;
    std::uint64_t job_every = 100;
    std::uint64_t moves = 10000;
    double seconds = 20;
    double churn_limit = 0;
    std::uint64_t warm_up_cycles = 0;
    std::uint32_t tasks = 8;
    std::string placement_text = "worker:0";
    std::string machine;
    std::string json_file;
    std::string log_level = "warn";
    tandem::RuntimeOptions options;
    options.validation = "off";
    app.add_option("--cycles", cycles, "register/unregister cycles")->capture_default_str();
    app.add_option("--churn-seconds", churn_limit,
                   "stop the churn after this many seconds, at the cycles done (0: no limit)")
        ->capture_default_str();
    app.add_option("--warm-up-cycles", warm_up_cycles,
                   "churn cycles before the baseline, so that it holds the caches at the size "
                   "the churn keeps them (0: max(200, cycles / 20))")
        ->capture_default_str();
    app.add_option("--job-every", job_every, "every Nth cycle runs a job before it goes")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--moves", moves, "moves of an auto task between two workers (0: none)")
        ->capture_default_str();
    app.add_option("--seconds", seconds, "length of the 60 FPS frame loop")->capture_default_str();
    app.add_option("--tasks", tasks, "tasks in the frame loop")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    app.add_option("--placement", placement_text, "where the churned tasks run")
        ->capture_default_str();
    app.add_option("--virtual-devices", options.virtual_devices,
                   "open each physical device this many times (0: $TANDEM_VIRTUAL_DEVICES)");
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
        const auto placement = tandem::Placement::parse(placement_text);
        if (!placement) {
            throw tandem::Error("--placement '" + placement_text + "' is not a placement",
                                "Use primary, worker, worker:N or an adapter index");
        }
        options.scheduler.decision_interval = std::chrono::milliseconds(0);
        // The moves run between openings of one device where there is no other: the scheduler
        // must treat them as separate for a move to happen at all (what is timed is the move).
        options.scheduler.openings_are_separate = true;
        tandem::Runtime runtime(options);
        constexpr std::uint32_t k_w = 64;
        constexpr std::uint32_t k_h = 48;
        tandem::harness::LeaseReader reader(runtime, 2, 128, 96);
        std::uint64_t verified = 0;
        std::uint64_t mismatches = 0;
        const auto check = [&](tandem::TaskId t) {
            const bool ok = run_and_check(runtime, reader, t);
            ++(ok ? verified : mismatches);
        };

        // One churn cycle: a task of one of five sizes registered, prepared (every job_every-th
        // with a job, checked), unregistered. The warm-up runs the same cycles.
        const auto churn_cycle = [&](std::uint64_t i, double* register_us, double* unregister_us) {
            const tandem::TaskDesc d =
                task_desc("churn", *placement, k_w - static_cast<std::uint32_t>(i % 5), k_h);
            auto t0 = Clock::now();
            const tandem::TaskId t = runtime.register_task_async(d);
            if (register_us != nullptr) {
                *register_us = us_since(t0);
            }
            if (i % job_every == 0) {
                check(t);
            } else {
                // Prepared before it goes, so its objects are made and freed every cycle.
                while (runtime.stats(t).preparing) {
                    runtime.pump();
                }
            }
            t0 = Clock::now();
            (void)runtime.unregister_task(t);
            if (unregister_us != nullptr) {
                *unregister_us = us_since(t0);
            }
            runtime.pump();
        };

        // Warm-up: pipelines compiled, allocators and the image caches at the size the churn
        // keeps them (images go back to a cache only once the GPU is past them, so the churn
        // holds a few tasks' worth; its bound is 64 per device).
        const std::uint64_t warm_up =
            warm_up_cycles > 0 ? warm_up_cycles : std::max<std::uint64_t>(200, cycles / 20);
        {
            Progress warm_up_progress{"warm-up", warm_up};
            for (std::uint64_t i = 0; i < warm_up; ++i) {
                churn_cycle(i, nullptr, nullptr);
                warm_up_progress.tick(i + 1);
            }
        }

        // Churn (the benchmark's own sample vectors are made before the baseline).
        std::vector<double> unregister_us;
        std::vector<double> register_async_us;
        unregister_us.reserve(cycles);
        register_async_us.reserve(cycles);
        const Holdings churn_before = holdings(runtime);
        Progress churn_progress{"churn", cycles};
        const auto churn_start = Clock::now();
        // What is held, ten times through the churn (by cycles, or by time with a time limit):
        // a growth that stops (caches filling to their bounds) or one that goes on.
        nlohmann::json churn_curve = nlohmann::json::array();
        const auto sample = [&](std::uint64_t done) {
            nlohmann::json j = to_json(holdings(runtime));
            j["cycles"] = done;
            j["seconds"] = std::chrono::duration<double>(Clock::now() - churn_start).count();
            churn_curve.push_back(j);
        };
        std::uint32_t samples_taken = 0;
        const auto sample_due = [&](std::uint64_t done) {
            const double fraction =
                churn_limit > 0
                    ? std::chrono::duration<double>(Clock::now() - churn_start).count() /
                          churn_limit
                    : static_cast<double>(done) /
                          static_cast<double>(std::max<std::uint64_t>(cycles, 1));
            return fraction * 10.0 >= static_cast<double>(samples_taken + 1);
        };
        for (std::uint64_t i = 0; i < cycles; ++i) {
            if (samples_taken < 9 && i > 0 && sample_due(i)) {
                ++samples_taken;
                sample(i);
            }
            if (churn_limit > 0 &&
                std::chrono::duration<double>(Clock::now() - churn_start).count() > churn_limit) {
                cycles = i; // what is reported is what ran
                break;
            }
            double register_us = 0;
            double unregister_cycle_us = 0;
            churn_cycle(i, &register_us, &unregister_cycle_us);
            register_async_us.push_back(register_us);
            unregister_us.push_back(unregister_cycle_us);
            churn_progress.tick(i + 1);
        }
        const Holdings churn_after = holdings(runtime);
        sample(cycles);
        // The RSS slope over the churn's second half, in bytes per cycle (0 where it stopped
        // growing): what an engine's RSS would do over hours.
        double rss_slope_second_half = 0;
        {
            const nlohmann::json* mid = nullptr;
            for (const auto& c : churn_curve) {
                if (c["cycles"].get<std::uint64_t>() * 2 >= cycles) {
                    mid = &c;
                    break;
                }
            }
            if (mid != nullptr && cycles > (*mid)["cycles"].get<std::uint64_t>()) {
                rss_slope_second_half =
                    (static_cast<double>(churn_after.rss_bytes) -
                     (*mid)["rss_bytes"].get<double>()) /
                    static_cast<double>(cycles - (*mid)["cycles"].get<std::uint64_t>());
            }
        }

        // Moves. The first ones warm up what a device's first task costs (its pipelines, the
        // driver's caches for it); the baseline is taken after them.
        Holdings moves_before = holdings(runtime);
        std::uint64_t moved = 0;
        std::uint64_t blank = 0;
        std::uint64_t backwards = 0;
        std::optional<tandem::TaskId> mover;
        const std::uint64_t move_warm_up = std::min<std::uint64_t>(moves, 20);
        if (moves > 0 && runtime.worker_devices().size() >= 2) {
            const std::uint32_t w0 = runtime.worker_devices()[0].index;
            const std::uint32_t w1 = runtime.worker_devices()[1].index;
            const std::uint32_t p = runtime.primary_device().index;
            const tandem::TaskId t =
                runtime.register_task(task_desc("mover", tandem::Placement::automatic(), k_w, k_h));
            mover = t;
            std::uint64_t shown = 0;
            std::uint32_t shown_device = p;
            Progress move_progress{"moves", moves + move_warm_up};
            for (std::uint64_t m = 0; m < moves + move_warm_up; ++m) {
                if (m == move_warm_up) {
                    moves_before = holdings(runtime);
                }
                const std::uint32_t from = runtime.stats(t).device;
                const std::uint32_t to = from == w0 ? w1 : w0;
                for (int k = 0; k < 9; ++k) {
                    (void)runtime.observe_execute(t, p, 400.0);
                    (void)runtime.observe_execute(t, from, 200.0);
                    (void)runtime.observe_execute(t, to, 0.1);
                }
                const auto deadline = Clock::now() + std::chrono::seconds(30);
                while (Clock::now() < deadline) {
                    (void)runtime.submit(t);
                    runtime.pump();
                    if (auto lease = runtime.acquire(t)) {
                        backwards += lease->generation < shown ? 1 : 0;
                        shown = lease->generation;
                        shown_device = lease->device;
                        (void)runtime.release(*lease, 0);
                    } else {
                        blank += shown > 0 ? 1 : 0;
                    }
                    if (runtime.stats(t).device == to && shown_device == to) {
                        moved += m >= move_warm_up ? 1 : 0;
                        break;
                    }
                }
                move_progress.tick(m + 1);
            }
            check(t);
            // Measured with the task still there: its own objects are part of the baseline.
        }
        const Holdings moves_after = holdings(runtime);
        if (mover) {
            (void)runtime.unregister_task(*mover);
        }

        // Frames: tasks come, go and change shape in a 60 FPS loop.
        std::vector<tandem::TaskId> ids;
        for (std::uint32_t i = 0; i < tasks; ++i) {
            ids.push_back(runtime.register_task(
                task_desc("frame-" + std::to_string(i), *placement, k_w, k_h)));
        }
        std::vector<double> frame_ms;
        std::vector<double> per_task_us;
        std::uint64_t replaced = 0;
        std::uint64_t reconfigured = 0;
        std::vector<std::uint64_t> shown_generation(tasks, 0);
        const auto period = std::chrono::microseconds(16667);
        auto next = Clock::now();
        Clock::time_point previous{};
        const auto end = Clock::now() + std::chrono::duration<double>(seconds);
        for (std::uint64_t frame = 0; Clock::now() < end; ++frame) {
            const auto start = Clock::now();
            if (previous != Clock::time_point{}) {
                frame_ms.push_back(
                    std::chrono::duration<double, std::milli>(start - previous).count());
            }
            previous = start;
            const std::size_t which = frame % tasks;
            if (frame % 6 == 3) { // a task goes and a new one takes its place
                (void)runtime.unregister_task(ids[which]);
                ids[which] = runtime.register_task_async(
                    task_desc("frame-" + std::to_string(which), *placement, k_w, k_h));
                shown_generation[which] = 0;
                ++replaced;
            } else if (frame % 6 == 0) { // one changes size
                const std::uint32_t w = frame % 12 == 0 ? 2 * k_w : k_w;
                (void)runtime.reconfigure(
                    ids[which], task_desc("frame-" + std::to_string(which), *placement, w, k_h));
                ++reconfigured;
            }
            const auto t0 = Clock::now();
            for (const tandem::TaskId id : ids) {
                (void)runtime.submit(id);
            }
            runtime.pump();
            for (std::size_t i = 0; i < ids.size(); ++i) {
                if (auto lease = runtime.acquire(ids[i])) {
                    backwards += lease->generation < shown_generation[i] ? 1 : 0;
                    shown_generation[i] = lease->generation;
                    (void)runtime.release(*lease, 0);
                }
            }
            per_task_us.push_back(us_since(t0) / static_cast<double>(ids.size()));
            next += period;
            std::this_thread::sleep_until(next);
        }
        for (const tandem::TaskId id : ids) {
            check(id);
            (void)runtime.unregister_task(id);
        }

        const Stats su = stats_of(unregister_us);
        const Stats sr = stats_of(register_async_us);
        const Stats sf = stats_of(frame_ms);
        const Stats sc = stats_of(per_task_us);
        const double frame_ratio = sf.median > 0 ? sf.max / sf.median : 0;
        const double churn_device = ratio(churn_after.device_bytes, churn_before.device_bytes);
        const double churn_rss = ratio(churn_after.rss_bytes, churn_before.rss_bytes);
        const double churn_heap = ratio(churn_after.heap_bytes, churn_before.heap_bytes);
        const double moves_device = ratio(moves_after.device_bytes, moves_before.device_bytes);
        const double moves_rss = ratio(moves_after.rss_bytes, moves_before.rss_bytes);
        const double moves_heap = ratio(moves_after.heap_bytes, moves_before.heap_bytes);
        const auto within = [](double r) { return r >= 0.99 && r <= 1.01; };
        std::printf("churn: %llu cycles; unregister_task median %.2f us (p99 %.2f); "
                    "register_task_async median %.2f us\n",
                    static_cast<unsigned long long>(cycles), su.median, su.p99, sr.median);
        std::printf("       device memory %.4f of before%s, RSS %.4f, heap %.4f, Tandem's own "
                    "%llu -> %llu bytes, threads %u -> %u, fds %u -> %u\n",
                    churn_device, churn_before.device_measured ? "" : " (not measured)", churn_rss,
                    churn_heap, static_cast<unsigned long long>(churn_before.tandem_bytes),
                    static_cast<unsigned long long>(churn_after.tandem_bytes), churn_before.threads,
                    churn_after.threads, churn_before.fds, churn_after.fds);
        std::printf("       RSS over the churn's second half %+.1f bytes per cycle; images kept "
                    "for reuse %u -> %u\n",
                    rss_slope_second_half, churn_before.idle_images, churn_after.idle_images);
        std::printf("moves: %llu of %llu; device memory %.4f, RSS %.4f, heap %.4f; %llu blank, "
                    "%llu older\n",
                    static_cast<unsigned long long>(moved), static_cast<unsigned long long>(moves),
                    moves_device, moves_rss, moves_heap, static_cast<unsigned long long>(blank),
                    static_cast<unsigned long long>(backwards));
        std::printf("frames: %zu at 60 FPS, %llu replaced, %llu reconfigured; frame median %.2f "
                    "ms, longest %.2f ms (%.3fx); app thread %.2f us per task per frame\n",
                    frame_ms.size(), static_cast<unsigned long long>(replaced),
                    static_cast<unsigned long long>(reconfigured), sf.median, sf.max, frame_ratio,
                    sc.median);
        std::printf("verified %llu outputs, %llu mismatches\n",
                    static_cast<unsigned long long>(verified),
                    static_cast<unsigned long long>(mismatches));

        if (!json_file.empty()) {
            char host[256] = {};
            ::gethostname(host, sizeof host - 1);
            nlohmann::json devices = nlohmann::json::array();
            std::vector<tandem::DeviceInfo> all{runtime.primary_device()};
            for (const auto& w : runtime.worker_devices()) {
                all.push_back(w);
            }
            for (const auto& info : all) {
                devices.push_back({{"index", info.index},
                                   {"name", info.name},
                                   {"driver", info.driver_name + " " + info.driver_version},
                                   {"uuid", tandem::to_string(info.device_uuid)}});
            }
            nlohmann::json doc;
            doc["benchmark"] = "lifetime";
            doc["percentile_rule"] = "nearest rank"; // core/stats.hpp, every figure
            doc["machine"] = {{"host", host},
                              {"description", machine},
                              {"cpus", std::thread::hardware_concurrency()},
                              {"devices", devices}};
            doc["config"] = {{"cycles", cycles},
                             {"churn_seconds", churn_limit},
                             {"warm_up_cycles", warm_up},
                             {"job_every", job_every},
                             {"moves", moves},
                             {"seconds", seconds},
                             {"tasks", tasks},
                             {"placement", placement->to_string()},
                             {"size", {k_w, k_h}},
                             {"validation", options.validation}};
            doc["ceilings"] = {{"churn_before", to_json(churn_before)},
                               {"moves_before", to_json(moves_before)},
                               {"frame_ms_median", sf.median}};
            doc["rows"] = {
                {{"name", "unregister_task_us"}, {"value", to_json(su)}},
                {{"name", "register_task_async_us"}, {"value", to_json(sr)}},
                {{"name", "churn_after"}, {"value", to_json(churn_after)}},
                {{"name", "churn_curve"}, {"value", churn_curve}},
                {{"name", "churn_rss_bytes_per_cycle_second_half"},
                 {"value", rss_slope_second_half}},
                {{"name", "moves_after"}, {"value", to_json(moves_after)}},
                {{"name", "moves"},
                 {"completed", moved},
                 {"blank_frames", blank},
                 {"older_frames", backwards}},
                {{"name", "frame_ms_60fps"}, {"value", to_json(sf)}},
                {{"name", "app_thread_us_per_task_per_frame"}, {"value", to_json(sc)}},
                {{"name", "frames"}, {"replaced", replaced}, {"reconfigured", reconfigured}}};
            const auto goal = [](const char* name, double measured, double target, bool met) {
                return nlohmann::json{
                    {"name", name}, {"measured", measured}, {"target", target}, {"met", met}};
            };
            doc["goals"] = {
                goal("churn_device_memory_after_over_before", churn_device, 1.01,
                     churn_before.device_measured && within(churn_device)),
                goal("churn_rss_after_over_before", churn_rss, 1.01, within(churn_rss)),
                goal("churn_heap_after_over_before", churn_heap, 1.01, within(churn_heap)),
                goal("moves_device_memory_after_over_before", moves_device, 1.01,
                     moves_before.device_measured && within(moves_device) && moved == moves),
                goal("moves_rss_after_over_before", moves_rss, 1.01, within(moves_rss)),
                goal("moves_heap_after_over_before", moves_heap, 1.01, within(moves_heap)),
                goal("unregister_task_us_median", su.median, 20.0, su.median < 20.0),
                goal("longest_frame_over_median", frame_ratio, 1.5, frame_ratio <= 1.5),
                goal("app_thread_us_per_task_per_frame_median", sc.median, 20.0, sc.median < 20.0)};
            doc["verification"] = {{"verified", verified}, {"mismatches", mismatches}};
            std::ofstream(json_file) << doc.dump(2) << '\n';
        }
        return mismatches == 0 && backwards == 0 ? 0 : 1;
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "tandem-bench-lifetime: %s\n", e.what());
        return 1;
    }
}
