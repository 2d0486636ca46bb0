#include "harness/tool_log.hpp"

#include <string>

#include "tandem/error.hpp"

namespace tandem::harness {

LogLevel parse_log_level_option(std::string_view text) {
    const auto level = parse_log_level(text);
    if (!level) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Log level '" + std::string(text) + "' is not known",
                    "Use trace, debug, info, warn, error or off");
    }
    return *level;
}

void apply_tool_log_level(LogLevel level) {
    set_default_log(level);
}

} // namespace tandem::harness
