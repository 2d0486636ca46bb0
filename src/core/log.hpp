// Logger: where Tandem's own code sends a message (tandem/log.hpp is the application's side).
// A Logger is a level and a callback (none: stderr). Each thread logs to its current logger: the
// one its innermost LogScope opened, else the process default (set_default_log). A Runtime makes
// one Logger from its RuntimeOptions and opens a scope on each of its public calls and threads,
// so what happens on its behalf reaches the application's callback; threads Tandem starts take
// their creator's logger through start_logged_thread().
//
//     detail::log_warn("transfer", "{}: the {} path failed: {}", link, to_string(path), why);
//
// Formats with fmt, only when the current logger's level lets the message through: a filtered
// message costs a thread-local read and an atomic load. The category must be one of the set
// tandem/log.hpp lists (checked at compile time). Logging never throws and never writes to
// stdout; a message that cannot be formatted (out of memory) is dropped.
//
// Threads: everything here from any thread. Lifetime: a Logger lives as long as its holders
// (shared_ptr). A LogScope does not hold its logger (it is cheap enough for every public call):
// the logger must outlive the scope. A thread from start_logged_thread() holds its own. The
// process default is never destroyed, so threads outliving main() and static destructors may log.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "tandem/log.hpp"

namespace tandem::detail {

// A category of tandem/log.hpp's list; a name outside it does not compile.
class LogCategory {
public:
    // Implicit: each call writes its category as a string literal.
    consteval LogCategory(const char* name) : m_name(name) {
        if (!known(m_name)) {
            throw "not a category of tandem/log.hpp"; // in a constant expression: a compile error
        }
    }
    [[nodiscard]] constexpr std::string_view name() const noexcept { return m_name; }

private:
    static constexpr bool known(std::string_view name) {
        for (std::string_view category : {"device", "validation", "sync", "transfer", "runtime",
                                          "scheduler", "workload", "scene", "render", "cli"}) {
            if (name == category) {
                return true;
            }
        }
        return false;
    }
    std::string_view m_name;
};

class Logger : public std::enable_shared_from_this<Logger> {
public:
    // Messages at `level` or above go to `callback`; to stderr when it is null.
    [[nodiscard]] static std::shared_ptr<Logger> create(LogLevel level, LogCallback callback = {});
    Logger(const Logger&) = delete;
    Logger& operator=(const Logger&) = delete;

    [[nodiscard]] LogLevel level() const noexcept {
        // Relaxed: a level is a filter; a message racing with a change may see either level.
        return m_level.load(std::memory_order_relaxed);
    }
    [[nodiscard]] bool enabled(LogLevel level) const noexcept {
        return level != LogLevel::Off && level >= this->level();
    }
    // Both take effect for the next message on every thread.
    void set_level(LogLevel level) noexcept { m_level.store(level, std::memory_order_relaxed); }
    void set_callback(LogCallback callback);

    // Hands one message to the callback (or stderr) whatever the level: callers check enabled().
    void write(LogLevel level, std::string_view category, std::string_view message) const noexcept;

private:
    Logger(LogLevel level, LogCallback callback);

    std::atomic<LogLevel> m_level;
    mutable std::mutex m_mutex;                    // m_callback; never held while the callback runs
    std::shared_ptr<const LogCallback> m_callback; // null: stderr
};

// The process default: what a thread without a scope logs to. Warn, stderr until changed.
[[nodiscard]] Logger& default_logger() noexcept;
// The calling thread's logger: its innermost scope's, else the process default.
[[nodiscard]] const Logger& current_logger() noexcept;

// Makes `logger` the calling thread's logger until the scope ends (then the one before it again).
// Scopes nest; each must end on the thread that opened it, innermost first.
class LogScope {
public:
    explicit LogScope(const Logger& logger) noexcept;
    // Null: the process default for this scope.
    explicit LogScope(const std::shared_ptr<const Logger>& logger) noexcept;
    ~LogScope();
    LogScope(const LogScope&) = delete;
    LogScope& operator=(const LogScope&) = delete;

private:
    const Logger* m_previous;
};

// What a thread started now should log to: the calling thread's scope's logger, held; null when
// it has none (the new thread then follows the process default, as the caller does).
[[nodiscard]] std::shared_ptr<const Logger> inherited_logger() noexcept;

// A std::thread running `body` under the calling thread's logger (inherited_logger()): how every
// thread Tandem starts is made, so its messages go where its creator's do.
//     m_thread = start_logged_thread([this] { run(); });
template <typename Body>
[[nodiscard]] std::thread start_logged_thread(Body&& body) {
    return std::thread([logger = inherited_logger(), body = std::forward<Body>(body)]() mutable {
        const LogScope scope(logger);
        body();
    });
}

// Formats and writes one message to `logger`; never throws.
void write_formatted(const Logger& logger, LogLevel level, std::string_view category,
                     fmt::string_view format, fmt::format_args args) noexcept;

// Logs to the calling thread's logger at `level`; formats only when the level lets it through.
template <typename... Args>
void log_at(LogLevel level, LogCategory category, fmt::format_string<Args...> format,
            Args&&... args) noexcept {
    const Logger& logger = current_logger();
    if (logger.enabled(level)) {
        write_formatted(logger, level, category.name(), fmt::string_view(format),
                        fmt::make_format_args(args...));
    }
}

template <typename... Args>
void log_trace(LogCategory category, fmt::format_string<Args...> format, Args&&... args) noexcept {
    log_at(LogLevel::Trace, category, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_debug(LogCategory category, fmt::format_string<Args...> format, Args&&... args) noexcept {
    log_at(LogLevel::Debug, category, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_info(LogCategory category, fmt::format_string<Args...> format, Args&&... args) noexcept {
    log_at(LogLevel::Info, category, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_warn(LogCategory category, fmt::format_string<Args...> format, Args&&... args) noexcept {
    log_at(LogLevel::Warn, category, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_error(LogCategory category, fmt::format_string<Args...> format, Args&&... args) noexcept {
    log_at(LogLevel::Error, category, format, std::forward<Args>(args)...);
}

} // namespace tandem::detail
