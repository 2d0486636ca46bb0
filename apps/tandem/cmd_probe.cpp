// `tandem probe`: the queue and synchronisation diagnostic. It runs the probe of
// harness/probe.hpp (jobs from a worker adapter to the primary at a target rate, every stage of
// each timed, in signal, empty or copy mode) and prints its latency percentiles per stage as a
// table or --json.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "harness/probe.hpp"
#include "harness/rate.hpp"
#include "harness/statistics.hpp"
#include "harness/table.hpp"

namespace tandem::cli {

namespace {

constexpr std::uint32_t k_max_jobs = 1'000'000; // each keeps its times until the end
constexpr std::uint32_t k_max_in_flight = 64;

struct ProbeOptions {
    std::string mode = "copy";
    std::string queue = "transfer";
    std::string rate = "1000";
    std::uint32_t jobs = 200;
    std::uint32_t in_flight = 1;
    bool quiet = false;
    bool json = false;
    double timeout_s = 5.0;
};

int run_probe(const GlobalOptions& global, const ProbeOptions& o) {
    harness::ProbeRequest request;
    request.mode = harness::parse_probe_mode(o.mode);
    request.queue = harness::parse_probe_queue(o.queue);
    request.rate_hz = harness::parse_rate_hz(o.rate);
    request.jobs = o.jobs;
    request.in_flight = o.in_flight;
    request.timeout_s = o.timeout_s;
    Session s = open_session(global);
    const auto started = [&](const harness::ProbeSetup& setup) {
        if (!o.quiet && !o.json) {
            std::printf("probe: %s mode on %s queues, %s sync, worker %u -> primary %u, %.3f Hz, "
                        "%u jobs, %u in flight\n",
                        o.mode.c_str(), o.queue.c_str(),
                        setup.gpu_side_sync ? "GPU-side" : "host-bridged", setup.worker,
                        setup.primary, request.rate_hz, o.jobs, o.in_flight);
        }
    };
    const harness::ProbeResult r = harness::run_probe(s.devices, request, started);
    const bool gpu_side = r.setup.gpu_side_sync;
    const bool bridge = !gpu_side;
    const double rate = request.rate_hz;
    const auto& submit = r.submit;
    const auto& worker_done = r.worker_done;
    const auto& bridge_s = r.bridge;
    const auto& primary_s = r.primary_done;
    const auto& total = r.total;

    if (o.json) {
        nlohmann::json doc = {
            {"command", "probe"},
            {"mode", o.mode},
            {"queue", o.queue},
            {"sync", gpu_side ? "gpu" : "host-bridge"},
            {"worker", {{"index", r.setup.worker}, {"name", r.setup.worker_name}}},
            {"primary", {{"index", r.setup.primary}, {"name", r.setup.primary_name}}},
            {"target_rate_hz", rate},
            {"jobs", o.jobs},
            {"in_flight", o.in_flight},
            {"timer_ticks", r.ticks},
            {"accepted", r.accepted},
            {"busy", r.busy},
            {"completed", r.completed},
            {"elapsed_s", r.elapsed_s},
            {"ready_rate_hz", r.ready_rate_hz},
            {"latency_us",
             {{"submit", harness::to_json(submit)},
              {"worker_done", harness::to_json(worker_done)},
              {"bridge", harness::to_json(bridge_s)},
              {"primary_done", harness::to_json(primary_s)},
              {"total", harness::to_json(total)}}},
        };
        std::printf("%s\n", doc.dump(2).c_str());
        return 0;
    }
    std::printf("ticks %llu, accepted %llu, busy %llu, completed %llu in %.3f s: %.1f ready/s\n\n",
                static_cast<unsigned long long>(r.ticks),
                static_cast<unsigned long long>(r.accepted),
                static_cast<unsigned long long>(r.busy),
                static_cast<unsigned long long>(r.completed), r.elapsed_s, r.ready_rate_hz);
    harness::Table table({"stage (us)", "p50", "p95", "p99", "min", "max", "n"});
    auto row = [&](const char* name, const harness::Summary& v) {
        char b[6][32];
        std::snprintf(b[0], 32, "%.1f", v.p50);
        std::snprintf(b[1], 32, "%.1f", v.p95);
        std::snprintf(b[2], 32, "%.1f", v.p99);
        std::snprintf(b[3], 32, "%.1f", v.min);
        std::snprintf(b[4], 32, "%.1f", v.max);
        std::snprintf(b[5], 32, "%zu", v.n);
        table.add({name, b[0], b[1], b[2], b[3], b[4], b[5]});
    };
    row("request -> submitted", submit);
    row("submitted -> worker done", worker_done);
    if (bridge) {
        row("worker done -> primary submitted (bridge)", bridge_s);
    }
    row(bridge ? "primary submitted -> primary done" : "worker done -> primary done", primary_s);
    row("request -> primary done", total);
    table.print();
    return 0;
}

} // namespace

Runner add_probe_command(CLI::App& app, const GlobalOptions& global) {
    auto* cmd = app.add_subcommand(
        "probe", "Queue and synchronisation diagnostic: jobs from a worker to the primary at a "
                 "target rate, with latency percentiles per stage");
    auto o = std::make_shared<ProbeOptions>();
    cmd->add_option("--mode", o->mode,
                    "signal (semaphores only), empty (empty command buffers) or copy (a 256-byte "
                    "copy on each side)")
        ->capture_default_str();
    cmd->add_option("--queue", o->queue, "Queue on both sides: graphics, compute or transfer")
        ->capture_default_str();
    cmd->add_option("--rate", o->rate, "Target job rate in Hz ('.' or ',' as decimal mark)")
        ->capture_default_str();
    cmd->add_option("--jobs", o->jobs, "Number of jobs")
        ->check(whole_number(1, k_max_jobs))
        ->capture_default_str();
    cmd->add_option("--in-flight", o->in_flight, "Jobs in flight at most (1-64)")
        ->check(whole_number(1, k_max_in_flight))
        ->capture_default_str();
    cmd->add_option("--timeout", o->timeout_s, "Seconds a job may take before it is an error")
        ->check(positive_seconds(static_cast<double>(k_max_timeout_ms) / 1000.0))
        ->capture_default_str();
    cmd->add_flag("--quiet", o->quiet, "Print only the results");
    cmd->add_flag("--json", o->json, "Print the results as JSON");
    return [o, &global]() { return run_probe(global, *o); };
}

} // namespace tandem::cli
