// TraceLog: timeline events the runtime records while tracing is on (spans on named tracks:
// "worker1 main queue", "primary transfer queue", "worker1 submit thread", "app thread",
// "primary->worker1 bridge"). Spans of GPU work are host-observed: from the host submit to the
// pump that saw completion; a bridge's hand-offs are instants (DevicePair).
// Bounded (events past k_capacity are counted, not stored). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tandem::detail {

struct TraceSpan {
    std::uint32_t track = 0;
    std::string name;
    std::int64_t begin_us = 0; // since the log's origin
    std::int64_t end_us = 0;
    std::uint64_t generation = 0;
    std::string task;
};

class TraceLog {
public:
    static constexpr std::size_t k_capacity = 1u << 20;
    using Clock = std::chrono::steady_clock;

    explicit TraceLog(bool enabled) : m_enabled(enabled), m_origin(Clock::now()) {}

    [[nodiscard]] bool enabled() const noexcept { return m_enabled; }

    // The track id for `name` ("<device> <queue>" or "<thread>"), created on first use.
    [[nodiscard]] std::uint32_t track(const std::string& name) {
        std::lock_guard lock(m_mutex);
        for (std::uint32_t i = 0; i < m_tracks.size(); ++i) {
            if (m_tracks[i] == name) {
                return i;
            }
        }
        m_tracks.push_back(name);
        return static_cast<std::uint32_t>(m_tracks.size() - 1);
    }

    void span(std::uint32_t track, std::string name, Clock::time_point begin, Clock::time_point end,
              std::uint64_t generation = 0, std::string task = {}) {
        if (!m_enabled) {
            return;
        }
        std::lock_guard lock(m_mutex);
        if (m_spans.size() >= k_capacity) {
            ++m_dropped;
            return;
        }
        m_spans.push_back(TraceSpan{track, std::move(name), micros(begin), micros(end), generation,
                                    std::move(task)});
    }

    struct Snapshot {
        std::vector<std::string> tracks;
        std::vector<TraceSpan> spans;
        std::uint64_t dropped = 0;
    };
    [[nodiscard]] Snapshot snapshot() const {
        std::lock_guard lock(m_mutex);
        return Snapshot{m_tracks, m_spans, m_dropped};
    }

private:
    [[nodiscard]] std::int64_t micros(Clock::time_point t) const noexcept {
        return std::chrono::duration_cast<std::chrono::microseconds>(t - m_origin).count();
    }

    const bool m_enabled;
    const Clock::time_point m_origin;
    mutable std::mutex m_mutex;
    std::vector<std::string> m_tracks;
    std::vector<TraceSpan> m_spans;
    std::uint64_t m_dropped = 0;
};

} // namespace tandem::detail
