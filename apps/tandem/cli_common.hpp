// What every `tandem` subcommand shares: the global options (validation, virtual devices,
// device selection, log level, JSON), and opening the instance and adapters from them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include "harness/device_session.hpp"
#include "tandem/log.hpp"
#include "tandem/runtime.hpp"

namespace tandem::cli {

struct GlobalOptions {
    std::string validation;      // empty: TANDEM_VALIDATION, else off
    std::string virtual_devices; // empty: TANDEM_VIRTUAL_DEVICES, else 1
    std::string primary = "auto";
    std::string workers = "auto";
    std::string log_level = "warn";
};

void add_global_options(CLI::App& app, GlobalOptions& options);

// The check of every unsigned option of every command: decimal digits only (no sign, fraction or
// exponent) making a number from `min` to `max`. Anything else is a usage error (exit 2) whose
// message names the option and what it allows ("--frames: '-5' is negative; give a whole number
// from 1 to 1000000"). Without it CLI11 would read -5 as 18446744073709551611.
[[nodiscard]] CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);

// The longest worker or measurement timeout an option accepts: an hour.
inline constexpr std::uint64_t k_max_timeout_ms = 3'600'000;

// The same for an option in seconds: a decimal number greater than 0 and at most `max`.
[[nodiscard]] CLI::Validator positive_seconds(double max);

// Exit status of a command line CLI11 refused (2, bad usage; 0 for --help and --version), after
// printing the reason on stderr (an unknown command is named as one).
[[nodiscard]] int report_parse_error(CLI::App& app, const CLI::ParseError& error);

// The --log-level value; throws tandem::Error on a bad value.
[[nodiscard]] LogLevel log_level(const GlobalOptions& options);
// Makes it the level of what Tandem logs outside a Runtime (set_default_log: to stderr); a
// Runtime's options take it from runtime_options(). Throws tandem::Error on a bad value.
void apply_log_level(const GlobalOptions& options);

// The instance and adapters a command works with. When it dies it reports any validation
// messages seen, and validation_failed() turns true: a run with validation messages fails.
struct Session {
    explicit Session(harness::DeviceSession opened) : devices(std::move(opened)) {}
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    harness::DeviceSession devices;
};

// True once any Session saw a validation message (main then exits with status 3).
[[nodiscard]] bool validation_failed();
// Prints the session's validation messages, if any, and makes validation_failed() true.
void report_validation(const harness::DeviceSession& session);
// The same for a runtime's own instance.
void report_validation(const Runtime& runtime);

// Writes a command's report as indented JSON (report.json); throws tandem::Error when it cannot.
void write_report_json(const std::string& path, const nlohmann::json& report);

// Creates the instance, lists the adapters and resolves the selection.
[[nodiscard]] Session open_session(const GlobalOptions& options);

// Runtime options from the global options (adapter selection, validation, virtual devices, log
// level; an option left empty is read from TANDEM_VALIDATION and TANDEM_VIRTUAL_DEVICES) and a
// worker timeout. Throws tandem::Error on a bad virtual device count.
[[nodiscard]] RuntimeOptions runtime_options(const GlobalOptions& global,
                                             std::chrono::milliseconds worker_timeout);

} // namespace tandem::cli
