// LatencySamples: microsecond samples of one pipeline stage and their percentiles. Bounded: once
// full, new samples replace old ones round-robin, so memory stays fixed on long streams.
// Not thread-safe; the owner (a task, under its mutex) serialises access.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tandem/task.hpp"

namespace tandem::detail {

class LatencySamples {
public:
    static constexpr std::size_t k_capacity = 1u << 18;

    void add(double us) {
        ++m_count;
        if (m_samples.size() < k_capacity) {
            m_samples.push_back(static_cast<float>(us));
        } else {
            m_samples[m_next] = static_cast<float>(us);
            m_next = (m_next + 1) % k_capacity;
        }
    }

    [[nodiscard]] LatencyStats stats() const {
        LatencyStats out;
        out.count = m_count;
        if (m_samples.empty()) {
            return out;
        }
        std::vector<float> sorted = m_samples;
        std::sort(sorted.begin(), sorted.end());
        auto at = [&](double q) {
            const auto i = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1));
            return static_cast<double>(sorted[i]);
        };
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
