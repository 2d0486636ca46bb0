// Summary statistics over a set of samples (latencies in microseconds, rates, ...): the median
// and tail percentiles that benchmarks, the probe and stream statistics report. Plain functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::detail {

struct Summary {
    std::size_t n = 0;
    double min = 0, max = 0, mean = 0, p50 = 0, p95 = 0, p99 = 0;
};

// Nearest-rank percentile (q in [0, 1]) of sorted samples; 0 when empty. The one definition
// of a percentile in Tandem's reports (runtime statistics, the probe, run reports, benchmarks).
template <typename T>
[[nodiscard]] double percentile_sorted(std::span<const T> sorted, double q) {
    if (sorted.empty()) {
        return 0.0;
    }
    const double rank = std::ceil(q * static_cast<double>(sorted.size()));
    const std::size_t index = rank < 1.0 ? 0 : static_cast<std::size_t>(rank) - 1;
    return static_cast<double>(sorted[std::min(index, sorted.size() - 1)]);
}
[[nodiscard]] inline double percentile_sorted(const std::vector<double>& sorted, double q) {
    return percentile_sorted(std::span<const double>(sorted), q);
}
// The same of unsorted samples (sorts a copy).
[[nodiscard]] inline double percentile(std::vector<double> samples, double q) {
    std::sort(samples.begin(), samples.end());
    return percentile_sorted(samples, q);
}

[[nodiscard]] inline Summary summarise(std::vector<double> samples) {
    Summary s;
    s.n = samples.size();
    if (samples.empty()) {
        return s;
    }
    std::sort(samples.begin(), samples.end());
    s.min = samples.front();
    s.max = samples.back();
    double sum = 0;
    for (double v : samples) {
        sum += v;
    }
    s.mean = sum / static_cast<double>(samples.size());
    s.p50 = percentile_sorted(samples, 0.50);
    s.p95 = percentile_sorted(samples, 0.95);
    s.p99 = percentile_sorted(samples, 0.99);
    return s;
}

[[nodiscard]] inline nlohmann::json to_json(const Summary& s) {
    return {{"n", s.n},     {"min", s.min}, {"max", s.max}, {"mean", s.mean},
            {"p50", s.p50}, {"p95", s.p95}, {"p99", s.p99}};
}

} // namespace tandem::detail
