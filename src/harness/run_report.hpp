// The pieces the tools' reports are made of, so that `tandem run`, `tandem stream` and the
// benchmarks write them the same way: latency statistics and devices as JSON, frame times as
// percentiles, numbers with fixed digits, and file names made of task names. Plain functions;
// any thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tandem/device_info.hpp"
#include "tandem/task.hpp"

namespace tandem::harness {

// {"count", "p50_us", "p90_us", "p99_us", "max_us"}.
[[nodiscard]] nlohmann::json latency_json(const LatencyStats& latency);
// {"index", "name", "type"}.
[[nodiscard]] nlohmann::json device_json(const DeviceInfo& device);
// `value` with `digits` digits after the point ("12.3").
[[nodiscard]] std::string fixed(double value, int digits = 1);
// A file name made of a task's name: letters, digits, '-' and '_' kept, the rest '_'; "task"
// when nothing is left.
[[nodiscard]] std::string file_stem(const std::string& name);
// Frame times in milliseconds as {"n", "p50", "p90", "p99", "mean", "source"}.
[[nodiscard]] nlohmann::json frame_time_json(std::vector<double> frame_ms,
                                             const std::string& source);

} // namespace tandem::harness
