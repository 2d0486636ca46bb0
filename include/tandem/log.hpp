// Logging: where Tandem's messages go. Tandem never writes to stdout. Each message carries a
// level, a category and one line of text; an application routes them with a callback and a level
// (RuntimeOptions::log and log_level for what a Runtime logs, set_default_log for the rest), the
// way Vulkan's debug-utils messenger and Dawn's and wgpu's logging callbacks do. Without a
// callback, messages at the level or above go to stderr, one line each:
//     [12:34:56.789] tandem warn transfer: adapter1->adapter0: the host-copy path failed ...
//
// Categories are a fixed set of short names, stable across releases (new ones may be added):
//     device      instance, adapters and logical devices (and the Vulkan loader's messages)
//     validation  the Khronos validation layer's messages, when Tandem enabled it
//     sync        the host bridges that carry completions between devices
//     transfer    transfer paths, their self-tests and the links that use them
//     runtime     tasks, workers and the runtime's own threads
//     scheduler   placement decisions and calibration
//     workload    workloads (compute, capture, the application's)
//     scene       scene data and glTF loading
//     render      Tandem's renderer
//     cli         the `tandem` tool and its benchmarks
//
// Threads: a callback may be called from any thread, Tandem's own and the application's, and
// from several at once: it must be thread-safe and must not throw (an exception it throws is
// dropped). It must not call the Runtime that logs to it: Tandem may hold that Runtime's locks
// while it logs. Keep it short; queue the message if handling it takes long.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "tandem/export.hpp"

namespace tandem {

// Ordered by severity: a level lets through itself and everything after it. Off lets nothing
// through; no message is ever logged at Off.
enum class LogLevel { Trace, Debug, Info, Warn, Error, Off };

// One message: its level, its category (the list above) and its text, without a trailing newline.
// The views are valid during the call only.
using LogCallback =
    std::function<void(LogLevel level, std::string_view category, std::string_view message)>;

// "trace", "debug", "info", "warn", "error", "off".
[[nodiscard]] TANDEM_API const char* to_string(LogLevel level) noexcept;
// The names to_string gives (and "warning"); nullopt for anything else.
[[nodiscard]] TANDEM_API std::optional<LogLevel> parse_log_level(std::string_view text) noexcept;

// The process's default logger: messages logged outside every Runtime's calls and threads (glTF
// loading, a tool's device discovery) go to `callback` at `level` or above; a null callback: to
// stderr. Until it is called: warnings and errors to stderr. Thread-safe; takes effect for the
// next message on every thread.
TANDEM_API void set_default_log(LogLevel level, LogCallback callback = {});

} // namespace tandem
