// Summary statistics of samples (latencies, frame times, rates) for the tools' reports: the
// nearest-rank percentile and the summary that every Tandem report names the same way. These
// are the runtime's own definitions (one definition of a statistic), for clients of the harness.
// Plain functions; any thread.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::harness {

struct Summary {
    std::size_t n = 0;
    double min = 0, max = 0, mean = 0, p50 = 0, p95 = 0, p99 = 0;
};

// Nearest-rank percentile (q in [0, 1]) of sorted samples; 0 when empty.
[[nodiscard]] double percentile_sorted(std::span<const double> sorted, double q);
// The same of unsorted samples (sorts a copy).
[[nodiscard]] double percentile(std::vector<double> samples, double q);
// The 0.5-percentile: the middle value, the lower of the two middle ones for an even count.
[[nodiscard]] double median_sorted(std::span<const double> sorted);
[[nodiscard]] double median(std::vector<double> samples);
[[nodiscard]] Summary summarise(std::vector<double> samples);
// {"n", "min", "max", "mean", "p50", "p95", "p99"}.
[[nodiscard]] nlohmann::json to_json(const Summary& summary);

} // namespace tandem::harness
