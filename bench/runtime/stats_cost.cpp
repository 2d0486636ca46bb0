// tandem-bench-stats-cost: what it costs to ask a runtime how a task stands, once the task has
// run long enough to fill its latency samples (4,096 per stage): Runtime::stats(), whose
// percentiles sort those samples each call, against Runtime::progress(), the counters a poll
// needs. The layer's presenter and frame loop poll one of them many times a frame.
//
//   tandem-bench-stats-cost [--jobs N] [--calls N] [--placement P] [--json FILE]
//
// Runs N jobs of a small pattern task (the first device by default), then times `calls` calls of
// each, alternated in rounds, and prints (and writes) the mean time per call.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tandem/runtime.hpp"

namespace {
using Clock = std::chrono::steady_clock;
}

int main(int argc, char** argv) {
    CLI::App app{"tandem-bench-stats-cost: the cost of Runtime::stats() and Runtime::progress()"};
    std::uint32_t jobs = 5000;
    std::uint32_t calls = 200;
    std::string placement = "primary";
    std::string json_file;
    app.add_option("--jobs", jobs, "Jobs run before timing (4,096 fill every sample ring)")
        ->capture_default_str();
    app.add_option("--calls", calls, "Calls of each, per round (5 rounds)")->capture_default_str();
    app.add_option("--placement", placement, "Where the task runs (Placement::parse)")
        ->capture_default_str();
    app.add_option("--json", json_file, "Also write the result there");
    CLI11_PARSE(app, argc, argv);
    try {
        tandem::RuntimeOptions options;
        options.validation = "off";
        tandem::Runtime runtime(options);
        tandem::TaskDesc desc;
        desc.name = "stats-cost";
        desc.width = 8;
        desc.height = 8;
        const auto where = tandem::Placement::parse(placement);
        if (!where) {
            std::fprintf(stderr, "--placement: '%s' is not a placement (primary, worker, auto)\n",
                         placement.c_str());
            return 2;
        }
        desc.placement = *where;
        const tandem::TaskId task = runtime.register_task(desc);
        for (std::uint32_t done = 0; done < jobs;) {
            if (runtime.submit(task).accepted()) {
                ++done;
            } else {
                runtime.pump();
            }
            if (const auto lease = runtime.acquire(task)) {
                static_cast<void>(runtime.release(*lease, 0));
            }
        }
        while (runtime.progress(task).in_flight > 0) {
            runtime.pump();
        }
        std::uint64_t sink = 0;
        double stats_us = 0;
        double progress_us = 0;
        constexpr int k_rounds = 5;
        for (int round = 0; round < k_rounds; ++round) {
            const auto t0 = Clock::now();
            for (std::uint32_t i = 0; i < calls; ++i) {
                sink += runtime.stats(task).newest_generation;
            }
            const auto t1 = Clock::now();
            for (std::uint32_t i = 0; i < calls; ++i) {
                sink += runtime.progress(task).newest_generation;
            }
            const auto t2 = Clock::now();
            stats_us += std::chrono::duration<double, std::micro>(t1 - t0).count();
            progress_us += std::chrono::duration<double, std::micro>(t2 - t1).count();
        }
        const double per = static_cast<double>(calls) * k_rounds;
        const tandem::TaskStats s = runtime.stats(task);
        const nlohmann::json out = {
            {"device", runtime.primary_device().name},
            {"jobs", jobs},
            {"latency_samples", std::min<std::uint64_t>(s.worker_done.count, 4096)},
            {"calls", calls * k_rounds},
            {"stats_us_per_call", stats_us / per},
            {"progress_us_per_call", progress_us / per},
            {"stats_over_progress", progress_us > 0 ? stats_us / progress_us : 0.0},
            {"checksum", sink}};
        std::printf("%s\n", out.dump(1).c_str());
        if (!json_file.empty()) {
            std::ofstream(json_file) << out.dump(1) << "\n";
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tandem-bench-stats-cost: %s\n", e.what());
        return 1;
    }
    return 0;
}
