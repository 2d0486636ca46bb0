#include "cli_common.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "harness/tool_log.hpp"
#include "tandem/error.hpp"
#include "tandem/version.hpp"

namespace tandem::cli {

namespace {
std::atomic<bool> g_validation_failed{false};
} // namespace

Session::~Session() {
    report_validation(devices);
}

void write_report_json(const std::string& path, const nlohmann::json& report) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const std::string text = report.dump(2) + "\n";
    if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
        if (f != nullptr) {
            std::fclose(f);
        }
        throw Error("Cannot write '" + path + "'", "Give a writable folder with --out");
    }
    std::fclose(f);
}

void report_validation(const Runtime& runtime) {
    if (runtime.validation_messages() > 0) {
        std::fprintf(stderr, "tandem: %llu validation message(s); the last: %s\n",
                     static_cast<unsigned long long>(runtime.validation_messages()),
                     runtime.last_validation_message().c_str());
        g_validation_failed.store(true);
    }
}

void report_validation(const harness::DeviceSession& session) {
    if (session.validation_messages() > 0) {
        std::fprintf(stderr, "tandem: %llu validation message(s); the last: %s\n",
                     static_cast<unsigned long long>(session.validation_messages()),
                     session.last_validation_message().c_str());
        g_validation_failed.store(true);
    }
}

namespace {
// An option's value, else the environment variable's, else empty.
std::string option_or_env(const std::string& option, const char* variable) {
    if (!option.empty()) {
        return option;
    }
    const char* value = std::getenv(variable);
    return value != nullptr ? std::string(value) : std::string();
}
} // namespace

RuntimeOptions runtime_options(const GlobalOptions& global,
                               std::chrono::milliseconds worker_timeout) {
    RuntimeOptions options;
    options.primary = global.primary;
    options.workers = global.workers;
    // The tool reads the environment and hands the runtime options.
    options.validation = option_or_env(global.validation, "TANDEM_VALIDATION");
    const std::string virtual_devices =
        option_or_env(global.virtual_devices, "TANDEM_VIRTUAL_DEVICES");
    if (!virtual_devices.empty()) {
        options.virtual_devices = harness::parse_virtual_devices(virtual_devices);
    }
    options.worker_timeout = worker_timeout;
    options.log_level = log_level(global);
    return options;
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
    const std::string allowed =
        "; give a whole number from " + std::to_string(min) + " to " + std::to_string(max);
    auto check = [min, max, allowed](std::string& text) -> std::string {
        if (!text.empty() && text.front() == '-') {
            return "'" + text + "' is negative" + allowed;
        }
        std::uint64_t value = 0;
        const char* last = text.data() + text.size();
        const auto [end, ec] = std::from_chars(text.data(), last, value);
        if (text.empty() || ec == std::errc::invalid_argument || end != last) {
            return "'" + text + "' is not a whole number" + allowed;
        }
        if (ec == std::errc::result_out_of_range || value < min || value > max) {
            return "'" + text + "' is out of range" + allowed;
        }
        return {};
    };
    return {check, "[" + std::to_string(min) + "-" + std::to_string(max) + "]"};
}

CLI::Validator positive_seconds(double max) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", max);
    const std::string allowed = std::string("; give a number of seconds above 0, at most ") + limit;
    auto check = [max, allowed](std::string& text) -> std::string {
        if (!text.empty() && text.front() == '-') {
            return "'" + text + "' is negative" + allowed;
        }
        double value = 0;
        const char* last = text.data() + text.size();
        const auto [end, ec] = std::from_chars(text.data(), last, value);
        if (text.empty() || ec != std::errc{} || end != last || !std::isfinite(value)) {
            return "'" + text + "' is not a number" + allowed;
        }
        if (!(value > 0) || value > max) {
            return "'" + text + "' is out of range" + allowed;
        }
        return {};
    };
    return {check, std::string("(0-") + limit + "]"};
}

int report_parse_error(CLI::App& app, const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
        return app.exit(error); // --help, --help-all or --version, printed on stdout
    }
    const std::vector<CLI::App*> parsed = app.get_subcommands();
    if (parsed.empty()) {
        std::string commands;
        const auto all = app.get_subcommands([](CLI::App*) { return true; });
        for (std::size_t i = 0; i < all.size(); ++i) {
            commands += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i]->get_name();
        }
        // CLI11 leaves a word that names no command among the arguments it did not use.
        for (const std::string& word : app.remaining()) {
            if (!word.empty() && word.front() != '-') {
                std::fprintf(stderr,
                             "tandem: error: unknown command '%s'; use %s (tandem --help)\n",
                             word.c_str(), commands.c_str());
                return 2;
            }
        }
        if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
            std::fprintf(stderr, "tandem: error: no command given; use %s (tandem --help)\n",
                         commands.c_str());
            return 2;
        }
    }
    const std::string help =
        parsed.empty() ? "tandem --help" : "tandem " + parsed.back()->get_name() + " --help";
    std::fprintf(stderr, "tandem: error: %s (%s)\n", error.what(), help.c_str());
    return 2;
}

bool validation_failed() {
    return g_validation_failed.load();
}

void add_global_options(CLI::App& app, GlobalOptions& options) {
    // The library's version (tandem/version.hpp), the one the package and the SONAME carry.
    app.set_version_flag("--version", std::string("tandem ") + version(),
                         "Print Tandem's version and exit");
    app.add_option("--validation", options.validation,
                   "Khronos validation: off, core or sync (core plus synchronisation); "
                   "default: $TANDEM_VALIDATION, else off");
    app.add_option("--virtual-devices", options.virtual_devices,
                   "Open each physical device as N logical adapters (1-16); default: "
                   "$TANDEM_VIRTUAL_DEVICES, else 1")
        ->check(whole_number(1, 16));
    app.add_option("--primary", options.primary,
                   "Primary adapter: auto, an index, a UUID (prefix), pci:ADDRESS, "
                   "vendor:device (hex) or part of a name; `tandem devices` lists them")
        ->capture_default_str();
    app.add_option("--workers", options.workers,
                   "Worker adapters: auto (all others), none, or a comma-separated list of "
                   "selectors")
        ->capture_default_str();
    app.add_option("--log-level", options.log_level,
                   "Level of Tandem's messages, on stderr: trace, debug, info, warn, error, off")
        ->capture_default_str();
}

LogLevel log_level(const GlobalOptions& options) {
    return harness::parse_log_level_option(options.log_level);
}

void apply_log_level(const GlobalOptions& options) {
    harness::apply_tool_log_level(log_level(options));
}

Session open_session(const GlobalOptions& options) {
    harness::SessionOptions session;
    session.validation = options.validation;
    session.virtual_devices = options.virtual_devices;
    session.primary = options.primary;
    session.workers = options.workers;
    return Session(harness::DeviceSession(session));
}

} // namespace tandem::cli
