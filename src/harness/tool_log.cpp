#include "harness/tool_log.hpp"

#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "tandem/error.hpp"

namespace tandem::harness {

LogLevel parse_log_level_option(std::string_view text) {
    const auto level = parse_log_level(text);
    if (!level) {
        throw Error("Log level '" + std::string(text) + "' is not known",
                    "Use trace, debug, info, warn, error or off");
    }
    return *level;
}

void apply_tool_log_level(LogLevel level) {
    set_default_log(level);
    // The runtime layer's own messages still go through spdlog, whose default logger writes to
    // stdout: they go to stderr too, at the same level, until that layer logs through
    // core/log.hpp (then this part goes, and the harness no longer links spdlog).
    spdlog::set_default_logger(spdlog::stderr_color_mt("tandem-runtime"));
    spdlog::set_level(level == LogLevel::Off
                          ? spdlog::level::off
                          : static_cast<spdlog::level::level_enum>(static_cast<int>(level)));
    spdlog::set_pattern("[%H:%M:%S.%e] tandem %l runtime: %v");
}

} // namespace tandem::harness
