// tandem-bench-placement: how good the scheduler's placements are. For the built-in demo's tasks
// on the adapters present it runs `tandem run` with --placement auto and then with every
// assignment of tasks to adapters (a tasks file with each task's placement fixed), short runs at
// an unlimited frame rate with scene time and task rates on the wall clock, and reports each
// run's primary frame time (the report's mean frame time, start to start; median over --runs),
// the ratio best / auto (goal >= 0.95: auto within 5% of the best assignment), whether auto left a
// task on a CPU device when the best assignment without CPU devices was faster, and the median
// |predicted - measured| / measured of task costs (goal <= 20%): the profile's execute prediction
// in each run's first decision against the capture's GPU time per update measured from timestamps
// on the device it ran on. Prints a table; --json FILE writes the document of the project's
// benchmark method.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "harness/demo_tasks.hpp"
#include "harness/statistics.hpp"

namespace {

using nlohmann::json;

struct Options {
    std::string tandem = TANDEM_CLI_PATH;
    std::uint64_t frames = 2000;
    std::uint32_t runs = 1;
    std::string size = "1280x720";
    std::string profile;
    std::string json_file;
    std::string machine;
    std::string primary;
    std::string workers;
    std::string virtual_devices;
    std::string validation = "off";
    bool openings_are_separate = false;
    std::size_t limit = 729; // assignments at most (3 tasks on 9 adapters)
};

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

// Runs `command`, returns its exit status; stderr is kept in `err`.
int run_shell(const std::string& command, std::string& err) {
    const std::string err_path = "/tmp/tandem-bench-placement-stderr-" + std::to_string(::getpid());
    const int status = std::system((command + " >/dev/null 2>" + err_path).c_str());
    std::ifstream in(err_path);
    std::stringstream ss;
    ss << in.rdbuf();
    err = ss.str();
    std::filesystem::remove(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

using tandem::harness::median; // nearest rank: the lower middle of an even count

struct RunResult {
    std::string label;
    std::vector<std::uint32_t> assignment; // adapter per task (auto: the final placement)
    std::vector<double> frame_ms;          // per repetition
    json report;                           // of the last repetition
    std::string error;
    [[nodiscard]] double median_ms() const { return median(frame_ms); }
};

} // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"tandem-bench-placement: the scheduler's auto placement against every "
                 "assignment of the demo's tasks to the adapters present"};
    app.add_option("--tandem", o.tandem, "The tandem binary")->capture_default_str();
    app.add_option("--frames", o.frames, "Main view frames per run")->capture_default_str();
    app.add_option("--runs", o.runs, "Repetitions of each run (median)")->capture_default_str();
    app.add_option("--size", o.size, "Main view size")->capture_default_str();
    app.add_option("--profile", o.profile, "Calibration profile (default: tandem's cache)");
    app.add_option("--limit", o.limit, "Assignments at most")->capture_default_str();
    app.add_option("--json", o.json_file, "Write the result document here");
    app.add_option("--machine", o.machine, "A sentence describing the machine, for the JSON");
    app.add_option("--primary", o.primary, "Passed to tandem");
    app.add_option("--workers", o.workers, "Passed to tandem");
    app.add_option("--virtual-devices", o.virtual_devices, "Passed to tandem");
    app.add_option("--validation", o.validation, "Passed to tandem")->capture_default_str();
    app.add_flag("--openings-are-separate", o.openings_are_separate,
                 "Passed to tandem run for the auto run: openings of one physical device are "
                 "treated as separate devices (else auto moves nothing between them)");
    CLI11_PARSE(app, argc, argv);
    if (o.runs == 0 || o.frames == 0) {
        std::fprintf(stderr, "tandem-bench-placement: --runs and --frames must be positive\n");
        return 2;
    }

    std::string global = " --validation " + quote(o.validation);
    if (!o.primary.empty()) {
        global += " --primary " + quote(o.primary);
    }
    if (!o.workers.empty()) {
        global += " --workers " + quote(o.workers);
    }
    if (!o.virtual_devices.empty()) {
        global += " --virtual-devices " + quote(o.virtual_devices);
    }
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tandem-bench-placement-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::vector<std::string> task_names = tandem::harness::demo_task_names();
    const std::size_t n_tasks = task_names.size();

    std::size_t run_counter = 0;
    const auto run = [&](const std::string& label, const std::string& args) {
        RunResult r;
        r.label = label;
        for (std::uint32_t k = 0; k < o.runs; ++k) {
            const auto out = dir / ("run" + std::to_string(run_counter++));
            std::string cmd = quote(o.tandem) + global +
                              " run --quiet --fps 0 --clock wall --png-every 0" + " --frames " +
                              std::to_string(o.frames) + " --size " + quote(o.size) + " --out " +
                              quote(out.string()) + " " + args;
            if (!o.profile.empty()) {
                cmd += " --profile " + quote(o.profile);
            }
            std::string err;
            const int status = run_shell(cmd, err);
            if (status != 0) {
                r.error = "exit " + std::to_string(status) + ": " + err;
                return r;
            }
            r.report = json::parse(std::ifstream(out / "report.json"));
            if (r.report.contains("frame_time_ms") && r.report["frame_time_ms"]["n"] > 0) {
                r.frame_ms.push_back(r.report["frame_time_ms"]["mean"].get<double>());
            } else {
                const double frames = r.report["frames"].get<double>();
                r.frame_ms.push_back(1000.0 * r.report["elapsed_s"].get<double>() / frames);
            }
            std::filesystem::remove_all(out);
        }
        for (const auto& t : r.report["tasks"]) {
            r.assignment.push_back(t["device"]["index"].get<std::uint32_t>());
        }
        return r;
    };

    // Auto first: its report names the adapters (and their types).
    std::fprintf(stderr, "placement bench: auto...\n");
    RunResult automatic =
        run("auto", std::string("--placement auto") +
                        (o.openings_are_separate ? " --openings-are-separate" : ""));
    if (!automatic.error.empty()) {
        std::fprintf(stderr, "tandem-bench-placement: the auto run failed: %s\n",
                     automatic.error.c_str());
        return 1;
    }
    std::vector<std::uint32_t> adapters;
    std::map<std::uint32_t, std::string> type_of;
    std::map<std::uint32_t, std::string> name_of;
    for (const auto& d : automatic.report["devices"]) {
        const auto index = d["index"].get<std::uint32_t>();
        adapters.push_back(index);
        type_of[index] = d.value("type", std::string("other"));
        name_of[index] = d["name"].get<std::string>();
    }

    // Every assignment, odometer order.
    std::vector<RunResult> fixed;
    std::vector<std::size_t> digit(n_tasks, 0);
    std::size_t total = 1;
    for (std::size_t i = 0; i < n_tasks; ++i) {
        total *= adapters.size();
    }
    total = std::min(total, o.limit);
    for (std::size_t a = 0; a < total; ++a) {
        std::vector<std::string> placements;
        std::string label;
        for (std::size_t i = 0; i < n_tasks; ++i) {
            placements.push_back(std::to_string(adapters[digit[i]]));
            label += (i ? "," : "") + placements.back();
        }
        const auto file = dir / ("tasks" + std::to_string(a) + ".json");
        std::ofstream(file) << tandem::harness::demo_tasks_document(placements).dump(2);
        std::fprintf(stderr, "placement bench: %zu/%zu  %s\n", a + 1, total, label.c_str());
        fixed.push_back(run(label, "--tasks " + quote(file.string())));
        for (std::size_t i = 0; i < n_tasks; ++i) {
            if (++digit[i] < adapters.size()) {
                break;
            }
            digit[i] = 0;
        }
    }
    std::filesystem::remove_all(dir);

    // Best assignment, and the best without any task on a CPU device.
    const RunResult* best = nullptr;
    const RunResult* best_no_cpu = nullptr;
    for (const auto& r : fixed) {
        if (!r.error.empty()) {
            continue;
        }
        if (best == nullptr || r.median_ms() < best->median_ms()) {
            best = &r;
        }
        const bool cpu = std::any_of(r.assignment.begin(), r.assignment.end(),
                                     [&](std::uint32_t d) { return type_of[d] == "cpu"; });
        if (!cpu && (best_no_cpu == nullptr || r.median_ms() < best_no_cpu->median_ms())) {
            best_no_cpu = &r;
        }
    }
    if (best == nullptr) {
        std::fprintf(stderr, "tandem-bench-placement: every fixed assignment failed\n");
        return 1;
    }
    const double ratio = best->median_ms() / automatic.median_ms();
    const bool auto_on_cpu = std::any_of(automatic.assignment.begin(), automatic.assignment.end(),
                                         [&](std::uint32_t d) { return type_of[d] == "cpu"; });
    const bool cpu_slower =
        auto_on_cpu && best_no_cpu != nullptr && best_no_cpu->median_ms() < automatic.median_ms();

    // Predicted (the first decision: profile only) against measured (GPU timestamps). The
    // profile predicts a task from its own calibration when `tandem calibrate` measured it, else
    // from the reference workloads; the reference-only error is kept too, and each error by the
    // kind of device it ran on.
    std::vector<double> errors;
    std::vector<double> reference_errors;
    std::map<std::string, std::vector<double>> errors_by_type;
    json samples = json::array();
    const auto collect = [&](const RunResult& r) {
        if (!r.error.empty() || !r.report.contains("scheduler")) {
            return;
        }
        const auto& decisions = r.report["scheduler"]["decisions"];
        if (decisions.empty()) {
            return;
        }
        const auto& first = decisions[0];
        for (const auto& t : r.report["tasks"]) {
            for (const auto& reg : t["registrations"]) {
                // The first update on a device pays for pipeline creation (and shader
                // compilation on lavapipe), which calibration's warm-up run leaves out too: the
                // later updates are what is compared, or every update when there was only one.
                const bool later = reg.contains("gpu_ms_per_later_update") &&
                                   !reg["gpu_ms_per_later_update"].is_null();
                const auto& timed =
                    later ? reg["gpu_ms_per_later_update"] : reg["gpu_ms_per_update"];
                if (timed.is_null()) {
                    continue;
                }
                const double measured = timed.get<double>();
                const auto device = reg["adapter"].get<std::uint32_t>();
                for (const auto& e : first["tasks"]) {
                    if (e["task"] != t["name"]) {
                        continue;
                    }
                    for (const auto& d : e["devices"]) {
                        if (d["device"] != device || d["execute"].is_null() ||
                            d["execute"]["source"] != "profile" || measured <= 0) {
                            continue;
                        }
                        const auto& execute = d["execute"];
                        const double predicted = execute["ms"].get<double>();
                        const double reference = execute.value("reference_ms", predicted);
                        const double error = std::abs(predicted - measured) / measured;
                        errors.push_back(error);
                        reference_errors.push_back(std::abs(reference - measured) / measured);
                        errors_by_type[type_of[device]].push_back(error);
                        samples.push_back({{"run", r.label},
                                           {"task", t["name"]},
                                           {"adapter", device},
                                           {"calibrated", execute.value("calibrated", "reference")},
                                           {"predicted_ms", predicted},
                                           {"reference_ms", reference},
                                           {"measured_ms", measured},
                                           {"measured_updates", later ? "later" : "all"}});
                    }
                }
            }
        }
    };
    collect(automatic);
    for (const auto& r : fixed) {
        collect(r);
    }
    const double prediction_error = median(errors);
    const double reference_error = median(reference_errors);

    // The table.
    std::printf("%-24s %12s %12s %12s\n", "assignment", "frame ms", "min", "max");
    const auto row = [](const RunResult& r) {
        if (!r.error.empty()) {
            std::printf("%-24s failed: %s\n", r.label.c_str(), r.error.c_str());
            return;
        }
        std::printf("%-24s %12.3f %12.3f %12.3f\n", r.label.c_str(), r.median_ms(),
                    *std::min_element(r.frame_ms.begin(), r.frame_ms.end()),
                    *std::max_element(r.frame_ms.begin(), r.frame_ms.end()));
    };
    std::string auto_label = "auto (";
    for (std::size_t i = 0; i < automatic.assignment.size(); ++i) {
        auto_label += (i ? "," : "") + std::to_string(automatic.assignment[i]);
    }
    automatic.label = auto_label + ")";
    row(automatic);
    for (const auto& r : fixed) {
        row(r);
    }
    std::printf("\ntasks:");
    for (const auto& name : task_names) {
        std::printf(" %s", name.c_str());
    }
    std::printf("; adapters:");
    for (const auto a : adapters) {
        std::printf(" %u=%s (%s)", a, name_of[a].c_str(), type_of[a].c_str());
    }
    std::printf("\ngoals: best/auto %.3f (>= 0.95: %s); auto on a CPU device when that was slower: "
                "%s; median |predicted-measured|/measured %.1f%% over %zu samples (<= 20%%: %s)\n",
                ratio, ratio >= 0.95 ? "met" : "NOT met", cpu_slower ? "yes (NOT met)" : "no",
                100.0 * prediction_error, errors.size(),
                errors.empty() ? "no samples" : (prediction_error <= 0.2 ? "met" : "NOT met"));
    std::printf("prediction error: reference workloads only %.1f%%", 100.0 * reference_error);
    for (const auto& [type, e] : errors_by_type) {
        std::printf("; on %s devices %.1f%% (%zu)", type.c_str(), 100.0 * median(e), e.size());
    }
    std::printf("\n");

    if (!o.json_file.empty()) {
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        json devices = json::array();
        for (const auto a : adapters) {
            devices.push_back({{"index", a}, {"name", name_of[a]}, {"type", type_of[a]}});
        }
        json rows = json::array();
        const auto row_json = [](const RunResult& r) {
            json j = {{"name", r.label}, {"assignment", r.assignment}};
            if (!r.error.empty()) {
                j["error"] = r.error;
            } else {
                j["frame_ms"] = {{"median", r.median_ms()},
                                 {"min", *std::min_element(r.frame_ms.begin(), r.frame_ms.end())},
                                 {"max", *std::max_element(r.frame_ms.begin(), r.frame_ms.end())},
                                 {"n", r.frame_ms.size()}};
            }
            return j;
        };
        rows.push_back(row_json(automatic));
        for (const auto& r : fixed) {
            rows.push_back(row_json(r));
        }
        json doc;
        doc["benchmark"] = "placement";
        doc["percentile_rule"] = "nearest rank"; // core/stats.hpp, every figure
        doc["machine"] = {{"host", host},
                          {"description", o.machine},
                          {"cpus", std::thread::hardware_concurrency()},
                          {"devices", devices}};
        const json names = task_names;
        doc["config"] = {{"frames", o.frames},
                         {"runs", o.runs},
                         {"size", o.size},
                         {"fps", "unlimited"},
                         {"tasks", names},
                         {"validation", o.validation},
                         {"profile", o.profile.empty() ? json("(cache)") : json(o.profile)},
                         {"openings_are_separate", o.openings_are_separate},
                         {"assignments", fixed.size()}};
        doc["ceilings"] = {{"best_frame_ms", best->median_ms()},
                           {"best_assignment", best->assignment},
                           {"best_without_cpu_frame_ms",
                            best_no_cpu ? json(best_no_cpu->median_ms()) : json(nullptr)}};
        doc["rows"] = rows;
        doc["auto_scheduler"] = automatic.report["scheduler"];
        doc["prediction_samples"] = samples;
        json by_type = json::object();
        for (const auto& [type, e] : errors_by_type) {
            by_type[type] = {{"median_error", median(e)}, {"samples", e.size()}};
        }
        doc["prediction_error"] = {
            {"median", errors.empty() ? json(nullptr) : json(prediction_error)},
            {"median_reference_only",
             reference_errors.empty() ? json(nullptr) : json(reference_error)},
            {"by_device_type", by_type}};
        doc["goals"] = {{{"name", "best_over_auto_frame_time"},
                         {"measured", ratio},
                         {"target", 0.95},
                         {"met", ratio >= 0.95}},
                        {{"name", "auto_on_cpu_when_slower"},
                         {"measured", cpu_slower},
                         {"target", false},
                         {"met", !cpu_slower}},
                        {{"name", "median_task_cost_prediction_error"},
                         {"measured", errors.empty() ? json(nullptr) : json(prediction_error)},
                         {"target", 0.2},
                         {"met", !errors.empty() && prediction_error <= 0.2}}};
        std::ofstream(o.json_file) << doc.dump(2) << '\n';
    }
    return 0;
}
