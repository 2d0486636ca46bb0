// Where the messages of Tandem's tools (the `tandem` CLI and the benchmarks) go: their
// --log-level, and what it sets. The library's messages go to stderr (tandem/log.hpp), never to
// stdout, which carries only the tools' results (tables, --json). Main thread, before the work.
#pragma once

#include <string_view>

#include "tandem/log.hpp"

namespace tandem::harness {

// A --log-level value: trace, debug, info, warn, error or off. Throws tandem::Error naming the
// bad text otherwise.
[[nodiscard]] LogLevel parse_log_level_option(std::string_view text);

// What Tandem logs outside a Runtime goes to stderr at `level` or above (set_default_log); a
// Runtime's messages follow its RuntimeOptions::log_level, which the tools set to the same level.
void apply_tool_log_level(LogLevel level);

} // namespace tandem::harness
