#include "run_capture_report.hpp"

#include <map>

#include "harness/capture_tasks.hpp"
#include "harness/run_report.hpp"
#include "harness/statistics.hpp"
#include "harness/table.hpp"

namespace tandem::cli {
namespace {

// The adapter a task runs on (TaskStats::device).
const DeviceInfo& device_of(const std::vector<DeviceInfo>& devices, std::uint32_t index) {
    for (const DeviceInfo& d : devices) {
        if (d.index == index) {
            return d;
        }
    }
    return devices.front();
}

double total_of(const std::vector<double>& values) {
    double total = 0;
    for (double v : values) {
        total += v;
    }
    return total;
}

// The run as a whole: what ran, for how long, at what frame rate.
void add_run_fields(nlohmann::json& report, const harness::RunScene& scene,
                    const CaptureModeArgs& args, const CaptureRecord& record) {
    const double elapsed = record.elapsed_s;
    report["scene"] = scene.demo() ? "(built-in demo)" : args.scene_path;
    report["tasks_file"] = args.tasks_path.empty() ? "(built in)" : args.tasks_path;
    report["frames"] = record.frames_done;
    report["percentile_rule"] = "nearest rank"; // every p50/p90/p99 in the report
    report["fps"] = args.fps > 0 ? nlohmann::json(args.fps) : nlohmann::json("unlimited");
    report["scene_dt_s"] = args.scene_dt;
    report["elapsed_s"] = elapsed;
    report["frame_rate_hz"] = elapsed > 0 ? static_cast<double>(record.frames_done) / elapsed : 0.0;
    report["frame_time_ms"] = harness::frame_time_json(
        record.frame_ms, "wall clock, frame start to next frame start; frames writing PNGs are "
                         "left out");
    report["clock"] = args.clock;
}

nlohmann::json main_view_json(const harness::RunScene& scene, const CaptureRecord& record) {
    nlohmann::json main_json = {{"camera", scene.main_camera()},
                                {"size", {scene.width(), scene.height()}},
                                {"last_time_s", record.last_time_s},
                                {"pngs", record.main_pngs}};
    if (record.have_timestamps) {
        const std::vector<double>& gpu_ms = record.main_gpu_ms;
        main_json["gpu_ms"] = {{"source", "timestamps"},
                               {"frames", gpu_ms.size()},
                               {"total", total_of(gpu_ms)},
                               {"p50", harness::percentile(gpu_ms, 0.5)},
                               {"p99", harness::percentile(gpu_ms, 0.99)}};
    }
    return main_json;
}

// Counters of every device the task ran on; notes each lost worker among them.
nlohmann::json registrations_json(const TaskStats& stats, std::uint32_t primary,
                                  std::set<std::uint32_t>& lost_workers) {
    nlohmann::json registrations = nlohmann::json::array();
    for (const TaskDeviceStats& r : stats.devices) {
        // GPU time of one capture there, from timestamps (null without them): the mean
        // of every update, the first update, and the mean of the others.
        const harness::CaptureGpuTime c = harness::capture_gpu_time(r);
        const auto json_of = [](const std::optional<double>& ms) {
            return ms ? nlohmann::json(*ms) : nlohmann::json(nullptr);
        };
        registrations.push_back({{"adapter", r.device},
                                 {"active", r.active},
                                 {"accepted", r.accepted},
                                 {"ready", r.ready},
                                 {"newest_generation", r.newest_generation},
                                 {"worker_lost", r.worker_lost},
                                 {"gpu_ms_per_update", json_of(c.per_update_ms)},
                                 {"gpu_ms_first_update", json_of(c.first_update_ms)},
                                 {"gpu_ms_per_later_update", json_of(c.per_later_update_ms)}});
        if (r.worker_lost && r.device != primary) {
            lost_workers.insert(r.device);
        }
    }
    return registrations;
}

// One task: its spec, where it ran, its counters (over every device it ran on), the latencies
// of the last device, and what the frame loop showed of it.
nlohmann::json task_json(const harness::RunTaskInfo& spec, const TaskStats& s,
                         const DeviceInfo& device, bool on_primary, const TaskShown& shown,
                         nlohmann::json registrations, double elapsed) {
    nlohmann::json t = {
        {"name", spec.name},
        {"camera", spec.camera},
        {"size", {spec.width, spec.height}},
        {"rate_hz", spec.rate_hz},
        {"placement", spec.placement.to_string()},
        {"runtime_placement",
         spec.automatic ? std::string("scheduler") : spec.placement.to_string()},
        {"device", harness::device_json(device)},
        {"on_primary", on_primary},
        {"transfer_path", transfer_path_name(s)},
        {"outputs_written_in_place", s.outputs_written_in_place},
        {"registrations", std::move(registrations)},
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
        {"frames_shown", shown.frames},
        {"newest_generation", s.newest_generation},
        {"shown_generation", shown.generation},
        {"shown_adapter", shown.adapter ? nlohmann::json(*shown.adapter) : nlohmann::json()},
        {"shown_time_s", shown.time_s},
        {"surface", spec.surface ? nlohmann::json(*spec.surface) : nlohmann::json()},
        {"png", shown.png.empty() ? nlohmann::json() : nlohmann::json(shown.png)},
        {"worker_lost", s.worker_lost}};
    if (s.worker_lost) {
        t["worker_lost_reason"] = s.worker_lost_reason;
    }
    return t;
}

// "tasks", and the scheduler's "final" placement of each task.
void add_tasks(CaptureReport& out, const Runtime& runtime, const harness::RunScene& scene,
               const CaptureRecord& record, nlohmann::json& final_placement) {
    const std::vector<harness::RunTaskInfo>& specs = scene.tasks();
    const std::uint32_t primary = runtime.primary_device().index;
    nlohmann::json tasks_json = nlohmann::json::array();
    for (std::size_t i = 0; i < record.tasks.size(); ++i) {
        const harness::RunTaskInfo& spec = specs[i];
        const TaskStats s = runtime.stats(record.tasks[i].id);
        out.task_lost = out.task_lost || s.worker_lost;
        nlohmann::json registrations = registrations_json(s, primary, out.lost_workers);
        const DeviceInfo& device = device_of(record.devices, s.device);
        final_placement[spec.name] = {{"adapter", device.index},
                                      {"placement", spec.placement.to_string()},
                                      {"decided_by", spec.automatic ? "scheduler" : "manual"},
                                      {"moves", s.moves}};
        tasks_json.push_back(task_json(spec, s, device, device.index == primary, record.tasks[i],
                                       std::move(registrations), record.elapsed_s));
    }
    out.json["tasks"] = tasks_json;
}

nlohmann::json scheduler_json(const Runtime& runtime, CaptureRecord& record,
                              nlohmann::json final_placement,
                              const std::set<std::uint32_t>& lost_workers) {
    const PlacementReport final_report = runtime.placement();
    nlohmann::json& decisions = record.decisions;
    if (final_report.decision > 0 &&
        (decisions.empty() || decisions.back()["decision"] != final_report.decision)) {
        nlohmann::json last = nlohmann::json::parse(final_report.json);
        last["frame"] = record.last_decision_frame;
        decisions.push_back(last);
    }
    nlohmann::json scheduler = record.scheduler;
    scheduler["decisions_total"] = final_report.decision;
    scheduler["decisions_changed"] = record.decisions_changed;
    scheduler["decisions"] = decisions;
    scheduler["final"] = std::move(final_placement);
    scheduler["lost_workers"] = lost_workers;
    scheduler["failures"] = final_report.failures;
    return scheduler;
}

// Each device's tasks and busy time, from GPU timestamps: the scene-capture commands of the
// tasks there and, on the primary, the main view's frames. The runtime's own transfer and copy
// commands are not included.
nlohmann::json devices_json(const Runtime& runtime, const harness::RunScene& scene,
                            const CaptureRecord& record) {
    std::vector<TaskId> task_ids;
    for (const TaskShown& task : record.tasks) {
        task_ids.push_back(task.id);
    }
    const auto capture_busy = harness::CaptureTasks::gpu_by_device(runtime, task_ids);
    const double main_view_ms = total_of(record.main_gpu_ms);
    const double elapsed = record.elapsed_s;
    const std::vector<DeviceInfo>& all = record.devices;
    nlohmann::json devices = nlohmann::json::array();
    for (std::size_t d = 0; d < all.size(); ++d) {
        nlohmann::json names = nlohmann::json::array();
        for (std::size_t i = 0; i < record.tasks.size(); ++i) {
            if (runtime.stats(record.tasks[i].id).device == all[d].index) {
                names.push_back(scene.tasks()[i].name);
            }
        }
        nlohmann::json j = harness::device_json(all[d]);
        j["role"] = d == 0 ? "primary" : "worker";
        j["tasks"] = names;
        const auto t = capture_busy.find(all[d].index);
        const bool tasks_timed = t == capture_busy.end() || t->second.timed;
        const double tasks_ms = t == capture_busy.end() ? 0.0 : t->second.busy_ms;
        j["tasks_gpu_ms"] = tasks_timed ? nlohmann::json(tasks_ms) : nlohmann::json();
        if (d == 0) {
            j["main_view_gpu_ms"] =
                record.have_timestamps ? nlohmann::json(main_view_ms) : nlohmann::json();
        }
        const bool timed = tasks_timed && (d != 0 || record.have_timestamps);
        j["busy_ms"] =
            timed ? nlohmann::json(tasks_ms + (d == 0 ? main_view_ms : 0.0)) : nlohmann::json();
        j["busy_percent"] =
            timed && elapsed > 0
                ? nlohmann::json(100.0 * j["busy_ms"].get<double>() / (elapsed * 1000.0))
                : nlohmann::json();
        j["busy_source"] = timed ? "GPU timestamps of the capture commands (and the main "
                                   "view on the primary); transfers not included"
                                 : "no timestamps on this device's queue";
        devices.push_back(j);
    }
    return devices;
}

void print_task_table(std::FILE* out, const nlohmann::json& tasks_json) {
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
        table.add({t["name"].get<std::string>(),
                   t["device"]["index"].dump() + " " + t["device"]["name"].get<std::string>(),
                   t["transfer_path"].get<std::string>(), t["accepted"].dump(), t["busy"].dump(),
                   t["ready"].dump(), harness::fixed(t["ready_rate_hz"].get<double>()),
                   ms_text(l, "p50_us"), ms_text(l, "p99_us"), t["shown_generation"].dump()});
    }
    table.print(out);
}

void print_device_busy(std::FILE* out, const nlohmann::json& devices) {
    for (const auto& d : devices) {
        std::fprintf(out, "%-7s adapter %s %s: busy %s\n", d["role"].get<std::string>().c_str(),
                     d["index"].dump().c_str(), d["name"].get<std::string>().c_str(),
                     d["busy_ms"].is_null()
                         ? "unknown (no timestamps)"
                         : (harness::fixed(d["busy_ms"].get<double>(), 1) + " ms (" +
                            harness::fixed(d["busy_percent"].get<double>(), 1) + "% of the run)")
                               .c_str());
    }
}

} // namespace

CaptureReport capture_report(const Runtime& runtime, const harness::RunScene& scene,
                             const CaptureModeArgs& args, CaptureRecord& record) {
    CaptureReport out;
    add_run_fields(out.json, scene, args, record);
    out.json["main_view"] = main_view_json(scene, record);
    nlohmann::json final_placement = nlohmann::json::object();
    add_tasks(out, runtime, scene, record, final_placement);
    out.json["scheduler"] =
        scheduler_json(runtime, record, std::move(final_placement), out.lost_workers);
    out.json["devices"] = devices_json(runtime, scene, record);
    if (!record.failure.empty()) {
        out.json["failure"] = record.failure;
    }
    return out;
}

void print_capture_summary(std::FILE* out, const CaptureReport& report, const CaptureRecord& record,
                           const std::string& report_path) {
    const nlohmann::json& j = report.json;
    print_task_table(out, j["tasks"]);
    std::fprintf(out, "%llu frames in %.2f s (%.1f FPS)",
                 static_cast<unsigned long long>(record.frames_done), record.elapsed_s,
                 j["frame_rate_hz"].get<double>());
    if (record.have_timestamps) {
        std::fprintf(out, ", main view GPU p50 %.2f ms",
                     harness::percentile(record.main_gpu_ms, 0.5));
    }
    std::fprintf(out, "\n");
    print_device_busy(out, j["devices"]);
    for (const std::uint32_t w : report.lost_workers) {
        std::fprintf(out,
                     "worker adapter %u was lost: its auto tasks moved in the next frame "
                     "(its last outputs stayed on their surfaces until then)\n",
                     w);
    }
    const nlohmann::json& scheduler = j["scheduler"];
    if (!record.decisions.empty()) {
        std::fprintf(
            out, "scheduler: %s; %llu of %llu decisions changed a placement\n",
            scheduler["model"].get<std::string>().c_str(),
            static_cast<unsigned long long>(record.decisions_changed),
            static_cast<unsigned long long>(scheduler["decisions_total"].get<std::uint64_t>()));
    }
    std::fprintf(out, "wrote %zu main view PNG(s), task PNGs and %s\n", record.main_pngs.size(),
                 report_path.c_str());
}

} // namespace tandem::cli
