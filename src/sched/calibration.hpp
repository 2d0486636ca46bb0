// What `tandem calibrate` measures and how it turns raw timings into a Profile: the reference
// workloads and transfer sizes, robust summaries of repeated timings (median), the fit of a
// transfer path's latency and bandwidth from timings at several sizes, and the summary printed
// at the end. The measuring itself (running workloads, timing copies) belongs to the runtime and
// transfer layers; this is the arithmetic they share with the scheduler.
// Plain functions over plain data; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/profile.hpp"

namespace tandem::detail {

struct ReferenceWorkload {
    std::string kind;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint64_t work = 0;
};

// What calibration runs on every device: the pattern compute task at 256x256 and 1024x1024, and
// scene captures at 256x256, 512x512 and 1024x1024 with 1,000 and 100,000 triangles. Two sizes
// (and two triangle counts) at least per kind, so the cost model can interpolate.
[[nodiscard]] std::vector<ReferenceWorkload> reference_workloads();

// Bytes moved per transfer measurement: 64 KiB, 1 MiB and 16 MiB, enough to separate a path's
// fixed latency from its bandwidth.
[[nodiscard]] std::vector<std::uint64_t> reference_transfer_sizes();

// The median of `samples` (the mean of the middle two for an even count); 0 when empty.
[[nodiscard]] double median(std::vector<double> samples);

struct TransferSample {
    std::uint64_t bytes = 0;
    double ms = 0.0;
};

// Fits time = latency + bytes / bandwidth through the samples: the median per size first (so a
// stalled copy does not count), then least squares over the sizes. The latency is clamped at 0;
// a non-positive slope (bandwidth beyond what the sizes can show) gives the fastest bandwidth the
// largest size allows. Throws Error when there are fewer than two distinct sizes.
[[nodiscard]] LinkCost fit_link(const std::vector<TransferSample>& samples);

// The summary `tandem calibrate` prints: per device its reference costs, per pair each path's
// bandwidth and latency and the synchronisation.
[[nodiscard]] std::string profile_summary(const Profile& profile);

} // namespace tandem::detail
