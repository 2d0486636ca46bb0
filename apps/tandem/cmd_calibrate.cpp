// `tandem calibrate`: measures the reference workloads, the capture tasks of a scene (the built-in
// demo's by default), job preparation and reintegration on every selected adapter and each
// transfer path and the synchronisation of every ordered pair of them (calibrate/measure.hpp),
// writes the calibration profile to the cache (or --out) and prints its summary; `tandem run
// --placement auto` reads it.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "calibrate/measure.hpp"
#include "commands.hpp"
#include "core/discovery.hpp"
#include "scene/demo_scene.hpp"
#include "scene/run_inputs.hpp"
#include "scene/snapshot_codec.hpp"
#include "sched/calibration.hpp"
#include "sched/profile.hpp"
#include "tandem/error.hpp"

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
        ->check(whole_number(0, detail::k_max_demo_crowd))
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
            args->out.empty() ? detail::default_profile_path() : std::filesystem::path(args->out);
        // The scene's capture tasks, checked before any device opens.
        std::optional<detail::RunInputs> inputs;
        if (!args->no_tasks) {
            detail::RunRequest request;
            request.scene_path = args->scene;
            request.tasks_path = args->tasks;
            request.demo_crowd = args->demo_crowd;
            inputs = detail::prepare_run(request);
        } else if (!args->scene.empty() || !args->tasks.empty() || args->demo_crowd != 0) {
            throw Error("--no-tasks leaves no scene to measure, yet --scene, --tasks or "
                        "--demo-crowd was given",
                        "Leave out --no-tasks, or the scene options");
        }
        Session session = open_session(global);
        std::vector<std::uint32_t> indices{session.selection.primary};
        for (const std::uint32_t w : session.selection.workers) {
            if (w != session.selection.primary) {
                indices.push_back(w);
            }
        }
        std::vector<DeviceInfo> devices;
        for (const std::uint32_t i : indices) {
            for (const auto& a : session.adapters) {
                if (a.info.index == i) {
                    devices.push_back(a.info);
                }
            }
        }
        const std::vector<PairInfo> pairs = detail::pair_matrix(session.adapters);

        detail::MeasureOptions options;
        options.quick = args->quick;
        options.timeout = std::chrono::milliseconds(args->timeout_ms);
        detail::Profile profile;
        {
            detail::Measurer measurer(*session.instance, session.adapters, indices, options);
            std::vector<detail::ReferenceWorkload> tasks;
            if (inputs) {
                const std::uint64_t triangles = detail::scene_triangles(inputs->scene);
                for (std::size_t i = 0; i < inputs->prepared.size(); ++i) {
                    const detail::TaskSpec& spec = inputs->prepared[i].spec;
                    const std::string key = detail::task_content_key(*inputs, i);
                    measurer.add_task_content(
                        key, inputs->scene.shared_assets(),
                        detail::encode_snapshot(detail::task_snapshot(*inputs, i)));
                    tasks.push_back(
                        {"capture", spec.width, spec.height, triangles, key, spec.name});
                }
            }
            detail::CalibrationHooks hooks = measurer.hooks();
            const bool progress = !args->quiet && ::isatty(STDERR_FILENO) != 0;
            if (progress) {
                hooks.progress = [](const detail::CalibrationProgress& p) {
                    std::fprintf(stderr, "\r  calibrating %zu/%zu: %s\033[K", p.step, p.total,
                                 p.what.c_str());
                    std::fflush(stderr);
                };
            }
            if (!args->quiet) {
                std::fprintf(stderr, "calibrate: %zu adapter(s)%s, %zu task(s) of %s\n",
                             devices.size(), args->quick ? ", quick" : "", tasks.size(),
                             inputs ? inputs->scene_name.c_str() : "no scene");
            }
            profile = detail::run_calibration(devices, pairs, hooks, tasks);
            if (progress) {
                std::fprintf(stderr, "\r\033[K");
            }
            for (auto& d : profile.devices) {
                d.timing = measurer.timing(d.index);
            }
        }
        profile.tandem_version = TANDEM_VERSION_STRING;
        detail::save_profile(profile, path);
        report_validation(*session.instance);
        if (args->json) {
            std::printf("%s\n", detail::to_json(profile).dump(2).c_str());
        }
        if (!args->quiet) {
            std::FILE* out = args->json ? stderr : stdout;
            std::fprintf(out, "%s", detail::profile_summary(profile).c_str());
            std::fprintf(out, "wrote %s\n", path.string().c_str());
        }
        return 0;
    };
}

} // namespace tandem::cli
