#include "core/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace tandem {

const char* to_string(LogLevel level) noexcept {
    switch (level) {
    case LogLevel::Trace:
        return "trace";
    case LogLevel::Debug:
        return "debug";
    case LogLevel::Info:
        return "info";
    case LogLevel::Warn:
        return "warn";
    case LogLevel::Error:
        return "error";
    case LogLevel::Off:
        return "off";
    }
    return "?";
}

std::optional<LogLevel> parse_log_level(std::string_view text) noexcept {
    for (LogLevel level : {LogLevel::Trace, LogLevel::Debug, LogLevel::Info, LogLevel::Warn,
                           LogLevel::Error, LogLevel::Off}) {
        if (text == to_string(level)) {
            return level;
        }
    }
    if (text == "warning") {
        return LogLevel::Warn;
    }
    return std::nullopt;
}

void set_default_log(LogLevel level, LogCallback callback) {
    detail::Logger& logger = detail::default_logger();
    logger.set_callback(std::move(callback));
    logger.set_level(level);
}

namespace detail {

namespace {
// The calling thread's innermost scope's logger; null: the process default.
thread_local const Logger* t_current = nullptr;

// One line on stderr: "[12:34:56.789] tandem warn transfer: text". One fwrite, so lines from
// several threads never interleave (stdio locks the stream for each call).
void write_to_stderr(LogLevel level, std::string_view category, std::string_view message) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm local{};
    localtime_r(&seconds, &local);
    const std::string line =
        fmt::format("[{:02}:{:02}:{:02}.{:03}] tandem {} {}: {}\n", local.tm_hour, local.tm_min,
                    local.tm_sec, millis, to_string(level), category, message);
    std::fwrite(line.data(), 1, line.size(), stderr);
}
} // namespace

std::shared_ptr<Logger> Logger::create(LogLevel level, LogCallback callback) {
    // Not make_shared: the constructor is private, so every Logger is owned by a shared_ptr and
    // inherited_logger() can always hold the one it finds.
    return std::shared_ptr<Logger>(new Logger(level, std::move(callback)));
}

Logger::Logger(LogLevel level, LogCallback callback)
    : m_level(level),
      m_callback(callback ? std::make_shared<const LogCallback>(std::move(callback)) : nullptr) {}

void Logger::set_callback(LogCallback callback) {
    auto held = callback ? std::make_shared<const LogCallback>(std::move(callback)) : nullptr;
    std::lock_guard lock(m_mutex);
    m_callback = std::move(held);
}

void Logger::write(LogLevel level, std::string_view category,
                   std::string_view message) const noexcept {
    std::shared_ptr<const LogCallback> callback;
    {
        // A copy, so a set_callback() meanwhile cannot destroy the one running, and the lock is
        // not held while it runs (it may log, or take its own locks).
        std::lock_guard lock(m_mutex);
        callback = m_callback;
    }
    try {
        if (callback) {
            (*callback)(level, category, message);
        } else {
            write_to_stderr(level, category, message);
        }
    } catch (...) {
        // The callback's contract says it does not throw; logging never fails its caller.
    }
}

Logger& default_logger() noexcept {
    // Never destroyed: threads that outlive main() and static destructors may still log.
    static const auto* const logger = new std::shared_ptr<Logger>(Logger::create(LogLevel::Warn));
    return **logger;
}

const Logger& current_logger() noexcept {
    const Logger* current = t_current;
    return current != nullptr ? *current : default_logger();
}

LogScope::LogScope(const Logger& logger) noexcept : m_previous(t_current) {
    t_current = &logger;
}

LogScope::LogScope(const std::shared_ptr<const Logger>& logger) noexcept : m_previous(t_current) {
    t_current = logger.get();
}

LogScope::~LogScope() {
    t_current = m_previous;
}

std::shared_ptr<const Logger> inherited_logger() noexcept {
    const Logger* current = t_current;
    return current != nullptr ? current->weak_from_this().lock() : nullptr;
}

void write_formatted(const Logger& logger, LogLevel level, std::string_view category,
                     fmt::string_view format, fmt::format_args args) noexcept {
    try {
        const std::string message = fmt::vformat(format, args);
        logger.write(level, category, message);
    } catch (...) {
        // Out of memory formatting: the message is lost, never the caller's work.
    }
}

} // namespace detail
} // namespace tandem
