// LatencySamples: microsecond samples of one pipeline stage and their percentiles. Bounded: once
// full, new samples replace old ones round-robin, so memory stays fixed on long streams (16 KiB
// per stage and task instance: a runtime with hundreds of tasks, each on a few devices, keeps
// them all).
// Not thread-safe; the owner (a task, under its mutex) serialises access. Percentiles sort, so
// an owner that holds a lock others need takes a snapshot() under it and summarises outside:
// sorting under a task's mutex starved its worker thread when a caller asked for statistics in
// a loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/stats.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

class LatencySamples {
public:
    static constexpr std::size_t k_capacity = 1u << 12;

    struct Snapshot {
        std::vector<float> samples;
        std::uint64_t count = 0;
    };

    void add(double us) {
        ++m_count;
        if (m_samples.size() < k_capacity) {
            m_samples.push_back(static_cast<float>(us));
        } else {
            m_samples[m_next] = static_cast<float>(us);
            m_next = (m_next + 1) % k_capacity;
        }
    }

    [[nodiscard]] Snapshot snapshot() const { return Snapshot{m_samples, m_count}; }
    [[nodiscard]] std::uint64_t count() const noexcept { return m_count; }

    [[nodiscard]] LatencyStats stats() const { return summarise(snapshot()); }

    // The median (core/stats.hpp) of the newest `n` samples, 0 when there are none: recent
    // behaviour, cheap enough to ask every frame (copies at most n values, no sort).
    [[nodiscard]] double recent_median_us(std::size_t n) const {
        const std::size_t size = m_samples.size();
        n = std::min(n, size);
        if (n == 0) {
            return 0.0;
        }
        const std::size_t newest = size < k_capacity ? size - 1 : (m_next + size - 1) % size;
        std::vector<float> recent(n);
        for (std::size_t i = 0; i < n; ++i) {
            recent[i] = m_samples[(newest + size - i) % size];
        }
        return median_in_place(std::span<float>(recent));
    }

    [[nodiscard]] static LatencyStats summarise(Snapshot snapshot) {
        LatencyStats out;
        out.count = snapshot.count;
        if (snapshot.samples.empty()) {
            return out;
        }
        std::vector<float>& sorted = snapshot.samples;
        std::sort(sorted.begin(), sorted.end());
        auto at = [&](double q) { return percentile_sorted(std::span<const float>(sorted), q); };
        out.p50_us = at(0.50);
        out.p90_us = at(0.90);
        out.p99_us = at(0.99);
        out.max_us = static_cast<double>(sorted.back());
        return out;
    }

private:
    std::vector<float> m_samples;
    std::size_t m_next = 0;
    std::uint64_t m_count = 0;
};

} // namespace tandem::detail
