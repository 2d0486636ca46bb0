#include "cli_common.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "tandem/error.hpp"

namespace tandem::cli {

namespace {
std::atomic<bool> g_validation_failed{false};
} // namespace

Session::~Session() {
    if (instance) {
        report_validation(*instance);
    }
}

void report_validation(const detail::Instance& instance) {
    if (instance.validation_messages() > 0) {
        std::fprintf(stderr, "tandem: %llu validation message(s); the last: %s\n",
                     static_cast<unsigned long long>(instance.validation_messages()),
                     instance.last_validation_message().c_str());
        g_validation_failed.store(true);
    }
}

RuntimeOptions runtime_options(const GlobalOptions& global,
                               std::chrono::milliseconds worker_timeout) {
    RuntimeOptions options;
    options.primary = global.primary;
    options.workers = global.workers;
    options.validation = global.validation;
    if (!global.virtual_devices.empty()) {
        options.virtual_devices = detail::parse_virtual_devices(global.virtual_devices);
    }
    options.worker_timeout = worker_timeout;
    return options;
}

bool validation_failed() {
    return g_validation_failed.load();
}

void add_global_options(CLI::App& app, GlobalOptions& options) {
    app.add_option("--validation", options.validation,
                   "Khronos validation: off, core or sync (core plus synchronisation); "
                   "default: $TANDEM_VALIDATION, else off");
    app.add_option("--virtual-devices", options.virtual_devices,
                   "Open each physical device as N logical adapters (1-16); default: "
                   "$TANDEM_VIRTUAL_DEVICES, else 1");
    app.add_option("--primary", options.primary,
                   "Primary adapter: auto, an index, a UUID (prefix) or part of a name")
        ->capture_default_str();
    app.add_option("--workers", options.workers,
                   "Worker adapters: auto (all others), none, or a comma-separated list of "
                   "selectors")
        ->capture_default_str();
    app.add_option("--log-level", options.log_level,
                   "Log level: trace, debug, info, warn, error, off")
        ->capture_default_str();
}

void apply_log_level(const GlobalOptions& options) {
    const auto level = spdlog::level::from_str(options.log_level);
    if (level == spdlog::level::off && options.log_level != "off") {
        throw Error("Log level '" + options.log_level + "' is not known",
                    "Use trace, debug, info, warn, error or off");
    }
    spdlog::set_level(level);
    spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
}

Session open_session(const GlobalOptions& options) {
    detail::Validation validation = detail::validation_from_env(detail::Validation::Off);
    if (!options.validation.empty()) {
        auto parsed = detail::parse_validation(options.validation);
        if (!parsed) {
            throw Error("--validation '" + options.validation + "' is not understood",
                        "Use off, core or sync");
        }
        validation = *parsed;
    }
    std::uint32_t virtual_devices = detail::virtual_devices_from_env(1);
    if (!options.virtual_devices.empty()) {
        virtual_devices = detail::parse_virtual_devices(options.virtual_devices);
    }
    Session session;
    detail::InstanceOptions instance_options;
    instance_options.validation = validation;
    session.instance = std::make_unique<detail::Instance>(instance_options);
    session.adapters = detail::discover_adapters(*session.instance, virtual_devices);
    session.selection = detail::select_adapters(session.adapters, options.primary, options.workers);
    return session;
}

} // namespace tandem::cli
