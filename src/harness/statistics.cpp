#include "harness/statistics.hpp"

#include "core/stats.hpp"

namespace tandem::harness {
namespace {

detail::Summary to_detail(const Summary& s) {
    detail::Summary d;
    d.n = s.n;
    d.min = s.min;
    d.max = s.max;
    d.mean = s.mean;
    d.p50 = s.p50;
    d.p95 = s.p95;
    d.p99 = s.p99;
    return d;
}

} // namespace

double percentile_sorted(std::span<const double> sorted, double q) {
    return detail::percentile_sorted(sorted, q);
}

double percentile(std::vector<double> samples, double q) {
    return detail::percentile(std::move(samples), q);
}

double median_sorted(std::span<const double> sorted) {
    return detail::percentile_sorted(sorted, 0.5);
}

double median(std::vector<double> samples) {
    return detail::median(std::move(samples));
}

Summary summarise(std::vector<double> samples) {
    const detail::Summary d = detail::summarise(std::move(samples));
    return {d.n, d.min, d.max, d.mean, d.p50, d.p95, d.p99};
}

nlohmann::json to_json(const Summary& summary) {
    return detail::to_json(to_detail(summary));
}

} // namespace tandem::harness
