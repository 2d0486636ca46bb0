// What every `tandem` subcommand shares: the global options (validation, virtual devices,
// device selection, log level, JSON), and opening the instance and adapters from them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/discovery.hpp"
#include "core/instance.hpp"

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

// Creates the instance, lists the adapters and resolves the selection.
[[nodiscard]] Session open_session(const GlobalOptions& options);

// Parses a rate in Hz: any positive finite number, '.' or ',' as decimal mark.
// Throws tandem::Error with a sentence naming the bad text.
[[nodiscard]] double parse_rate_hz(const std::string& text);

} // namespace tandem::cli
