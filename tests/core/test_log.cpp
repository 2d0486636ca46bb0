// Logging (core/log.hpp, tandem/log.hpp): the level filters, a callback receives level, category
// and text, a scope routes its own thread only and the threads it starts, and without a callback
// the messages go to stderr and nothing ever to stdout. No GPU.
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/log.hpp"

namespace tandem::test {
namespace {

struct Message {
    LogLevel level;
    std::string category;
    std::string text;
};

// Messages a callback received, from any thread.
class Received {
public:
    [[nodiscard]] LogCallback callback() {
        return [this](LogLevel level, std::string_view category, std::string_view text) {
            std::lock_guard lock(m_mutex);
            m_messages.push_back({level, std::string(category), std::string(text)});
        };
    }
    [[nodiscard]] std::vector<Message> messages() const {
        std::lock_guard lock(m_mutex);
        return m_messages;
    }
    [[nodiscard]] std::vector<std::string> texts() const {
        std::vector<std::string> out;
        for (const Message& m : messages()) {
            out.push_back(m.text);
        }
        return out;
    }

private:
    mutable std::mutex m_mutex;
    std::vector<Message> m_messages;
};

// Counts how often it is formatted: a filtered message must not format its arguments.
struct Counted {
    int* formats;
};

// Everything a file descriptor (1: stdout, 2: stderr) receives while it lives.
class CapturedFd {
public:
    explicit CapturedFd(int fd) : m_fd(fd), m_file(std::tmpfile()) {
        std::fflush(nullptr);
        m_saved = dup(m_fd);
        dup2(fileno(m_file), m_fd);
    }
    ~CapturedFd() { restore(); }
    CapturedFd(const CapturedFd&) = delete;
    CapturedFd& operator=(const CapturedFd&) = delete;

    // Restores the descriptor and returns what it received.
    std::string text() {
        restore();
        std::string out;
        std::rewind(m_file);
        char buffer[512];
        std::size_t n = 0;
        while ((n = std::fread(buffer, 1, sizeof buffer, m_file)) > 0) {
            out.append(buffer, n);
        }
        return out;
    }

private:
    void restore() {
        if (m_saved >= 0) {
            std::fflush(nullptr);
            dup2(m_saved, m_fd);
            close(m_saved);
            m_saved = -1;
        }
    }
    int m_fd;
    std::FILE* m_file;
    int m_saved = -1;
};

// Each test leaves the process default as the library starts it: warn, stderr.
class Log : public ::testing::Test {
protected:
    void TearDown() override { set_default_log(LogLevel::Warn); }
};

} // namespace
} // namespace tandem::test

template <>
struct fmt::formatter<tandem::test::Counted> : fmt::formatter<int> {
    template <typename FormatContext>
    auto format(const tandem::test::Counted& counted, FormatContext& context) const {
        ++*counted.formats;
        return fmt::formatter<int>::format(*counted.formats, context);
    }
};

namespace tandem::test {
namespace {

TEST_F(Log, LevelsAreNamedAndParsed) {
    for (LogLevel level : {LogLevel::Trace, LogLevel::Debug, LogLevel::Info, LogLevel::Warn,
                           LogLevel::Error, LogLevel::Off}) {
        EXPECT_EQ(parse_log_level(to_string(level)), level);
    }
    EXPECT_EQ(std::string(to_string(LogLevel::Warn)), "warn");
    EXPECT_EQ(parse_log_level("warning"), LogLevel::Warn);
    EXPECT_FALSE(parse_log_level("loud"));
    EXPECT_FALSE(parse_log_level(""));
}

TEST_F(Log, TheLevelLetsThroughItselfAndWhatIsMoreSevere) {
    Received received;
    const auto logger = detail::Logger::create(LogLevel::Warn, received.callback());
    const detail::LogScope scope(*logger);
    int formats = 0;
    detail::log_trace("runtime", "trace {}", Counted{&formats});
    detail::log_debug("runtime", "debug {}", Counted{&formats});
    detail::log_info("runtime", "info {}", Counted{&formats});
    EXPECT_EQ(formats, 0) << "a filtered message was formatted";
    detail::log_warn("runtime", "warn {}", Counted{&formats});
    detail::log_error("runtime", "error {}", Counted{&formats});
    EXPECT_EQ(formats, 2);
    EXPECT_EQ(received.texts(), (std::vector<std::string>{"warn 1", "error 2"}));

    logger->set_level(LogLevel::Trace);
    detail::log_trace("runtime", "trace");
    detail::log_at(LogLevel::Debug, "runtime", "debug");
    logger->set_level(LogLevel::Off);
    detail::log_error("runtime", "error while off");
    EXPECT_EQ(received.texts(), (std::vector<std::string>{"warn 1", "error 2", "trace", "debug"}));
}

TEST_F(Log, TheCallbackReceivesLevelCategoryAndMessage) {
    Received received;
    const auto logger = detail::Logger::create(LogLevel::Info, received.callback());
    const detail::LogScope scope(*logger);
    detail::log_warn("transfer", "{}->{}: the {} path failed: {}", "adapter1", "adapter0",
                     "host-copy", 42);
    detail::log_info("scene", "loaded");
    const auto messages = received.messages();
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0].level, LogLevel::Warn);
    EXPECT_EQ(messages[0].category, "transfer");
    EXPECT_EQ(messages[0].text, "adapter1->adapter0: the host-copy path failed: 42");
    EXPECT_EQ(messages[1].level, LogLevel::Info);
    EXPECT_EQ(messages[1].category, "scene");
    EXPECT_EQ(messages[1].text, "loaded");
}

TEST_F(Log, ACallbackThatThrowsDoesNotReachTheCaller) {
    int calls = 0;
    const auto logger = detail::Logger::create(
        LogLevel::Warn, [&calls](LogLevel, std::string_view, std::string_view) {
            ++calls;
            throw 1;
        });
    const detail::LogScope scope(*logger);
    EXPECT_NO_THROW(detail::log_error("runtime", "the callback throws"));
    EXPECT_EQ(calls, 1); // the callback ran, and threw
    EXPECT_NO_THROW(detail::log_error("runtime", "and again"));
    EXPECT_EQ(calls, 2); // a callback that threw still gets the next message
}

TEST_F(Log, AScopeRoutesItsOwnThreadAndTheThreadsItStartsOnly) {
    Received scoped;
    Received fallback;
    set_default_log(LogLevel::Trace, fallback.callback());
    const auto logger = detail::Logger::create(LogLevel::Trace, scoped.callback());
    {
        const detail::LogScope scope(*logger);
        detail::log_info("runtime", "scope's thread");
        std::thread([] { detail::log_info("runtime", "plain thread"); }).join();
        detail::start_logged_thread([] { detail::log_info("runtime", "started thread"); }).join();
        {
            Received inner;
            const auto inner_logger = detail::Logger::create(LogLevel::Trace, inner.callback());
            const detail::LogScope nested(*inner_logger);
            detail::log_info("runtime", "nested scope");
            EXPECT_EQ(inner.texts(), (std::vector<std::string>{"nested scope"}));
        }
        detail::log_info("runtime", "scope again");
    }
    detail::log_info("runtime", "after the scope");
    // A thread started without a scope follows the process default, as its creator does.
    detail::start_logged_thread([] { detail::log_info("runtime", "started unscoped"); }).join();

    EXPECT_EQ(scoped.texts(),
              (std::vector<std::string>{"scope's thread", "started thread", "scope again"}));
    EXPECT_EQ(fallback.texts(),
              (std::vector<std::string>{"plain thread", "after the scope", "started unscoped"}));
}

TEST_F(Log, AStartedThreadKeepsItsLoggerAfterItsCreatorLetsGo) {
    auto received = std::make_shared<Received>();
    auto logger = detail::Logger::create(LogLevel::Info, received->callback());
    std::mutex mutex;
    std::condition_variable cv;
    bool go = false;
    std::thread thread;
    {
        const detail::LogScope scope(*logger);
        thread = detail::start_logged_thread([&] {
            std::unique_lock lock(mutex);
            cv.wait(lock, [&] { return go; });
            detail::log_warn("sync", "after the creator's scope and logger are gone");
        });
    }
    logger.reset();
    {
        std::lock_guard lock(mutex);
        go = true;
    }
    cv.notify_one();
    thread.join();
    EXPECT_EQ(received->texts(),
              (std::vector<std::string>{"after the creator's scope and logger are gone"}));
}

TEST_F(Log, WithoutACallbackWarningsGoToStderrAndNothingToStdout) {
    CapturedFd out(1);
    CapturedFd err(2);
    detail::log_info("transfer", "an info line");
    detail::log_warn("transfer", "a {} line", "warning");
    detail::log_error("device", "an error line");
    {
        // A logger of its own without a callback writes to stderr too, at its level.
        const auto logger = detail::Logger::create(LogLevel::Debug);
        const detail::LogScope scope(*logger);
        detail::log_debug("scene", "a debug line");
        detail::log_trace("scene", "a trace line");
    }
    set_default_log(LogLevel::Off);
    detail::log_error("device", "an error while off");
    const std::string stdout_text = out.text();
    const std::string stderr_text = err.text();

    EXPECT_EQ(stdout_text, "");
    EXPECT_NE(stderr_text.find("tandem warn transfer: a warning line\n"), std::string::npos)
        << stderr_text;
    EXPECT_NE(stderr_text.find("tandem error device: an error line\n"), std::string::npos)
        << stderr_text;
    EXPECT_NE(stderr_text.find("tandem debug scene: a debug line\n"), std::string::npos)
        << stderr_text;
    EXPECT_EQ(stderr_text.find("info line"), std::string::npos) << stderr_text;
    EXPECT_EQ(stderr_text.find("trace line"), std::string::npos) << stderr_text;
    EXPECT_EQ(stderr_text.find("while off"), std::string::npos) << stderr_text;
    // One line each, starting with the time.
    EXPECT_EQ(stderr_text.rfind('[', 0), 0u) << stderr_text;
}

TEST_F(Log, TheDefaultLoggerCanBeRoutedAndSilenced) {
    Received received;
    set_default_log(LogLevel::Info, received.callback());
    detail::log_info("cli", "routed");
    detail::log_debug("cli", "filtered");
    set_default_log(LogLevel::Off, received.callback());
    detail::log_error("cli", "silenced");
    EXPECT_EQ(received.texts(), (std::vector<std::string>{"routed"}));
}

} // namespace
} // namespace tandem::test
