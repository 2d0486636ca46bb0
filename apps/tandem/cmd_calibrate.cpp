// `tandem calibrate`: measures the reference workloads, the capture tasks of a scene (the built-in
// demo's by default), job preparation and reintegration on every selected adapter and each
// transfer path and the synchronisation of every ordered pair of them (harness/calibration.hpp),
// writes the calibration profile to the cache (or --out) and prints its summary; `tandem run
// --placement auto` reads it.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "harness/calibration.hpp"
#include "harness/profile_file.hpp"
#include "harness/run_scene.hpp"
#include "tandem/error.hpp"
#include "tandem/version.hpp"

namespace tandem::cli {
namespace {

struct CalibrateArgs {
    std::string out;
    std::string scene;
    std::string tasks;
    std::uint32_t demo_crowd = 0;
    bool no_tasks = false;
    std::uint32_t timeout_ms = 10000;
    bool quick = false;
    bool json = false;
    bool quiet = false;
};

} // namespace

Runner add_calibrate_command(CLI::App& app, const GlobalOptions& global) {
    auto args = std::make_shared<CalibrateArgs>();
    CLI::App* sub = app.add_subcommand(
        "calibrate", "Measure workloads, transfers and synchronisation on the selected adapters "
                     "and write the calibration profile the scheduler (run --placement auto) uses");
    sub->add_option("--out", args->out,
                    "Profile file; default: $XDG_CACHE_HOME/tandem/profile.json (else "
                    "~/.cache/tandem/profile.json)");
    sub->add_option("--scene", args->scene,
                    "Also measure this glTF scene's capture tasks (run --scene); default: the "
                    "built-in demo");
    sub->add_option("--tasks", args->tasks, "Tasks file of those captures (run --tasks)");
    sub->add_option("--demo-crowd", args->demo_crowd,
                    "The demo's crowd, as run --demo-crowd will use it")
        ->check(whole_number(0, harness::max_demo_crowd()))
        ->capture_default_str();
    sub->add_flag("--no-tasks", args->no_tasks,
                  "Measure only the reference workloads, no scene's tasks");
    sub->add_flag("--quick", args->quick,
                  "Fewer repetitions and transfer sizes (64 KiB and 1 MiB): for tests and CI");
    sub->add_option("--timeout-ms", args->timeout_ms, "Wait limit of one measurement")
        ->check(whole_number(1, k_max_timeout_ms))
        ->capture_default_str();
    sub->add_flag("--json", args->json, "Print the profile JSON to stdout");
    sub->add_flag("--quiet", args->quiet, "No progress line and no summary");

    return [args, &global]() -> int {
        const std::filesystem::path path =
            args->out.empty() ? harness::default_profile_path() : std::filesystem::path(args->out);
        // The scene's capture tasks, checked before any device opens.
        std::optional<harness::RunScene> scene;
        if (!args->no_tasks) {
            harness::RunSceneRequest request;
            request.scene_path = args->scene;
            request.tasks_path = args->tasks;
            request.demo_crowd = args->demo_crowd;
            scene.emplace(request);
        } else if (!args->scene.empty() || !args->tasks.empty() || args->demo_crowd != 0) {
            throw Error("--no-tasks leaves no scene to measure, yet --scene, --tasks or "
                        "--demo-crowd was given",
                        "Leave out --no-tasks, or the scene options");
        }
        Session session = open_session(global);
        harness::CalibrationRequest request;
        request.quick = args->quick;
        request.timeout = std::chrono::milliseconds(args->timeout_ms);
        request.scene = scene ? &*scene : nullptr;
        request.tandem_version = tandem::version();
        const bool progress = !args->quiet && ::isatty(STDERR_FILENO) != 0;
        if (progress) {
            request.on_progress = [](std::size_t step, std::size_t total, const std::string& what) {
                std::fprintf(stderr, "\r  calibrating %zu/%zu: %s\033[K", step, total,
                             what.c_str());
                std::fflush(stderr);
            };
        }
        if (!args->quiet) {
            request.on_start = [&](std::size_t adapters, std::size_t tasks) {
                std::fprintf(stderr, "calibrate: %zu adapter(s)%s, %zu task(s) of %s\n", adapters,
                             args->quick ? ", quick" : "", tasks,
                             scene ? scene->name().c_str() : "no scene");
            };
        }
        const harness::CalibrationProfile profile = harness::calibrate(session.devices, request);
        if (progress) {
            std::fprintf(stderr, "\r\033[K");
        }
        profile.save(path);
        report_validation(session.devices);
        if (args->json) {
            std::printf("%s\n", profile.json().dump(2).c_str());
        }
        if (!args->quiet) {
            std::FILE* out = args->json ? stderr : stdout;
            std::fprintf(out, "%s", profile.summary().c_str());
            std::fprintf(out, "wrote %s\n", path.string().c_str());
        }
        return 0;
    };
}

} // namespace tandem::cli
