// What every `tandem` subcommand shares: the global options (validation, virtual devices,
// device selection, log level, JSON), and opening the instance and adapters from them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/discovery.hpp"
#include "core/instance.hpp"
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

// Applies the log level; throws tandem::Error on a bad value.
void apply_log_level(const GlobalOptions& options);

// The instance and adapters a command works with. When it dies it reports any validation
// messages seen, and validation_failed() turns true: a run with validation messages fails.
struct Session {
    Session() = default;
    Session(Session&&) = default;
    ~Session();
    std::unique_ptr<detail::Instance> instance;
    std::vector<detail::Adapter> adapters;
    detail::Selection selection;
};

// True once any Session saw a validation message (main then exits with status 3).
[[nodiscard]] bool validation_failed();
// Prints the instance's validation messages, if any, and makes validation_failed() true.
void report_validation(const detail::Instance& instance);

// Creates the instance, lists the adapters and resolves the selection.
[[nodiscard]] Session open_session(const GlobalOptions& options);

// Runtime options from the global options (adapter selection, validation, virtual devices)
// and a worker timeout. Throws tandem::Error on a bad virtual device count.
[[nodiscard]] RuntimeOptions runtime_options(const GlobalOptions& global,
                                             std::chrono::milliseconds worker_timeout);

} // namespace tandem::cli
