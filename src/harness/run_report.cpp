#include "harness/run_report.hpp"

#include <algorithm>
#include <cstdio>

#include "core/stats.hpp"

namespace tandem::harness {

nlohmann::json latency_json(const LatencyStats& l) {
    // No samples: the figures are null, not 0 (a job that took no time).
    auto figure = [&](double us) { return l.count == 0 ? nlohmann::json() : nlohmann::json(us); };
    return {{"count", l.count},
            {"p50_us", figure(l.p50_us)},
            {"p90_us", figure(l.p90_us)},
            {"p99_us", figure(l.p99_us)},
            {"max_us", figure(l.max_us)}};
}

nlohmann::json device_json(const DeviceInfo& d) {
    return {{"index", d.index}, {"name", d.name}, {"type", d.type}};
}

std::string fixed(double v, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
    return buffer;
}

std::string file_stem(const std::string& name) {
    std::string s;
    for (char c : name) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '_';
        s += keep ? c : '_';
    }
    return s.empty() ? "task" : s;
}

nlohmann::json frame_time_json(std::vector<double> frame_ms, const std::string& source) {
    std::sort(frame_ms.begin(), frame_ms.end());
    auto at = [&](double q) { return detail::percentile_sorted(frame_ms, q); };
    double sum = 0;
    for (double v : frame_ms) {
        sum += v;
    }
    return {{"n", frame_ms.size()},
            {"p50", at(0.5)},
            {"p90", at(0.9)},
            {"p99", at(0.99)},
            {"mean", frame_ms.empty() ? 0.0 : sum / static_cast<double>(frame_ms.size())},
            {"source", source}};
}

} // namespace tandem::harness
