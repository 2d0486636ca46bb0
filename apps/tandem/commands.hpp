// The `tandem` subcommands. Each registers itself on the app and returns the exit code of its
// run through `result` once parsed. Exit codes: 0 success, 1 failure at run time, 2 bad usage, 3
// validation messages (when validation is on).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "cli_common.hpp"

namespace tandem::cli {

using Runner = std::function<int()>;

// `tandem devices`: the capability and pair matrices, as tables or --json.
Runner add_devices_command(CLI::App& app, const GlobalOptions& global);

// `tandem probe`: queue and synchronisation latency, worker -> primary.
Runner add_probe_command(CLI::App& app, const GlobalOptions& global);

// `tandem stream`: one task driven by a timer, read every frame by a simulated primary frame
// loop; prints the stream statistics (--json too) and optionally writes a trace.
Runner add_stream_command(CLI::App& app, const GlobalOptions& global);

// `tandem run`: a scene on the primary with its capture tasks on workers, headless; writes main
// view and task PNGs and report.json into --out.
Runner add_run_command(CLI::App& app, const GlobalOptions& global);

// `tandem calibrate`: measures the selected adapters and pairs and writes the calibration
// profile (the cache, or --out); prints its summary or --json.
Runner add_calibrate_command(CLI::App& app, const GlobalOptions& global);

// `tandem layer`: the Vulkan layer's status, and running a program with it enabled.
Runner add_layer_command(CLI::App& app, const GlobalOptions& global);

} // namespace tandem::cli
