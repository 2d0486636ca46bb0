// Summary statistics over a set of samples (latencies in microseconds, rates, ...): the one
// definition of a median and a percentile in Tandem, and the summary that benchmarks, the probe
// and stream statistics report. Plain functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::detail {

struct Summary {
    std::size_t n = 0;
    double min = 0, max = 0, mean = 0, p50 = 0, p95 = 0, p99 = 0;
};

// Tandem's one percentile rule, nearest rank: the q-percentile (q in [0, 1]) of n samples is the
// ceil(q * n)-th smallest (1-based), the smallest for q = 0, and 0 when there are none. Every
// figure is thus a measured value, never an interpolation. The median is the 0.5-percentile: the
// middle value for an odd count, the LOWER of the two middle values (the n/2-th smallest) for an
// even one. Every report uses these (runtime statistics, calibration, the cost model's estimates,
// the probe, run reports, benchmarks); bench/percentile.py is the same rule for Python.

// 0-based index of the nearest-rank q-percentile among n >= 1 sorted samples.
[[nodiscard]] inline std::size_t percentile_index(std::size_t n, double q) {
    const double rank = std::ceil(q * static_cast<double>(n));
    const std::size_t index = rank < 1.0 ? 0 : static_cast<std::size_t>(rank) - 1;
    return std::min(index, n - 1);
}

// The q-percentile of samples sorted ascending.
template <typename T>
[[nodiscard]] double percentile_sorted(std::span<const T> sorted, double q) {
    return sorted.empty() ? 0.0 : static_cast<double>(sorted[percentile_index(sorted.size(), q)]);
}
[[nodiscard]] inline double percentile_sorted(const std::vector<double>& sorted, double q) {
    return percentile_sorted(std::span<const double>(sorted), q);
}
template <typename T>
[[nodiscard]] double median_sorted(std::span<const T> sorted) {
    return percentile_sorted(sorted, 0.5);
}
[[nodiscard]] inline double median_sorted(const std::vector<double>& sorted) {
    return percentile_sorted(sorted, 0.5);
}

// The q-percentile of unsorted samples, which it reorders: a selection (std::nth_element),
// linear where a sort is n log n, for callers that ask every frame.
template <typename T>
[[nodiscard]] double percentile_in_place(std::span<T> samples, double q) {
    if (samples.empty()) {
        return 0.0;
    }
    const auto nth =
        samples.begin() + static_cast<std::ptrdiff_t>(percentile_index(samples.size(), q));
    std::nth_element(samples.begin(), nth, samples.end());
    return static_cast<double>(*nth);
}
template <typename T>
[[nodiscard]] double median_in_place(std::span<T> samples) {
    return percentile_in_place(samples, 0.5);
}

// The same of unsorted samples, by value (reorders the copy).
[[nodiscard]] inline double percentile(std::vector<double> samples, double q) {
    return percentile_in_place(std::span<double>(samples), q);
}
[[nodiscard]] inline double median(std::vector<double> samples) {
    return percentile(std::move(samples), 0.5);
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
