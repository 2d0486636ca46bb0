// tandem: the command-line front end. Subcommands live in cmd_*.cpp; this file parses, routes,
// and turns tandem::Error into a one-sentence message and a non-zero exit (commands.hpp lists
// the exit statuses).
#include <cstdio>
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "harness/cpu_threads.hpp"
#include "tandem/error.hpp"

int main(int argc, char** argv) {
    CLI::App app{"tandem: heterogeneous multi-GPU offload on Vulkan.\n"
                 "The primary GPU renders as usual; worker GPUs render or compute bounded tasks "
                 "and hand the results back as textures on the primary."};
    app.require_subcommand(1);
    app.footer("Exit status: 0 success; 1 an error (what was wrong and what to do, on stderr), a "
               "text value the command cannot use included (a rate, size, mode, placement, file); "
               "2 bad usage: an unknown command or option, a missing value, or a number its "
               "option does not allow (negative, not a number, out of range); 3 Vulkan "
               "validation messages (with validation on).");
    tandem::cli::GlobalOptions global;
    tandem::cli::add_global_options(app, global);

    std::vector<std::pair<CLI::App*, tandem::cli::Runner>> commands;
    auto devices = tandem::cli::add_devices_command(app, global);
    commands.emplace_back(app.get_subcommand("devices"), devices);
    auto probe = tandem::cli::add_probe_command(app, global);
    commands.emplace_back(app.get_subcommand("probe"), probe);
    auto stream = tandem::cli::add_stream_command(app, global);
    commands.emplace_back(app.get_subcommand("stream"), stream);
    auto calibrate = tandem::cli::add_calibrate_command(app, global);
    commands.emplace_back(app.get_subcommand("calibrate"), calibrate);
    auto run_command = tandem::cli::add_run_command(app, global);
    commands.emplace_back(app.get_subcommand("run"), run_command);
    auto layer = tandem::cli::add_layer_command(app, global);
    commands.emplace_back(app.get_subcommand("layer"), layer);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return tandem::cli::report_parse_error(app, e);
    }
    try {
        tandem::harness::keep_cores_from_cpu_devices();
        tandem::cli::apply_log_level(global);
        for (auto& [sub, run] : commands) {
            if (sub->parsed()) {
                const int status = run();
                // Any validation message fails the run, whatever the command reported.
                return tandem::cli::validation_failed() ? 3 : status;
            }
        }
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "tandem: error: %s\n", e.what());
        return tandem::cli::validation_failed() ? 3 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tandem: internal error: %s\n", e.what());
        return 1;
    }
    return 2;
}
