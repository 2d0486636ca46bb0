// What `tandem calibrate` measures and how it turns raw timings into a Profile: the reference
// workloads and transfer sizes, robust summaries of repeated timings (the median of
// core/stats.hpp, included for the measuring side too), the fit of a transfer path's latency and
// bandwidth from timings at several sizes, the walk over devices, pairs and paths
// (run_calibration), and the summary printed at the end. The measuring itself
// (running workloads, timing copies) belongs to the runtime and transfer layers, which plug in
// through CalibrationHooks.
// Plain functions over plain data; run_calibration calls the hooks on the caller's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "sched/profile.hpp"

namespace tandem::detail {

// A workload calibration measures. `content` is empty for the generated references; for one of
// the application's tasks it is the task's content key (WorkloadSample::content), and `label`
// names the task for the progress line and summary.
struct ReferenceWorkload {
    std::string kind;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint64_t work = 0;
    std::string content;
    std::string label;
};

// What calibration runs on every device: the pattern compute task at 256x256 and 1024x1024, and
// scene captures at 256x256, 512x512 and 1024x1024 with 1,000 and 100,000 triangles. Two sizes
// (and two triangle counts) at least per kind, so the cost model can interpolate.
[[nodiscard]] std::vector<ReferenceWorkload> reference_workloads();

// Bytes moved per transfer measurement: 64 KiB, 1 MiB and 16 MiB, enough to separate a path's
// fixed latency from its bandwidth.
[[nodiscard]] std::vector<std::uint64_t> reference_transfer_sizes();

struct TransferSample {
    std::uint64_t bytes = 0;
    double ms = 0.0;
};

// Fits time = latency + bytes / bandwidth through the samples: the median per size first (so a
// stalled copy does not count), then least squares over the sizes. The latency is clamped at 0;
// a non-positive slope (bandwidth beyond what the sizes can show) gives the fastest bandwidth the
// largest size allows. Throws Error when there are fewer than two distinct sizes.
[[nodiscard]] LinkCost fit_link(const std::vector<TransferSample>& samples);

struct CalibrationProgress {
    std::size_t step = 0; // 1-based, the measurement about to run
    std::size_t total = 0;
    std::string what; // "pattern 1024x1024 on adapter 1", "host-imported 1 -> 0", ...
};

// The measurements, supplied by the layers that can make them. Each returns the timings of
// several repetitions in milliseconds (the calibration keeps their median); an empty result
// means "cannot be measured here" and leaves that entry out of the profile. A hook left empty
// skips its part entirely.
struct CalibrationHooks {
    // GPU time of one update of `workload` on `device`.
    std::function<std::vector<double>(const DeviceInfo& device, const ReferenceWorkload& workload)>
        workload;
    // CPU time to record and submit one job on `device`.
    std::function<std::vector<double>(const DeviceInfo& device)> prepare;
    // `device` as a primary: copying a result of each reference size into a sampled image.
    std::function<std::vector<TransferSample>(const DeviceInfo& device)> reintegrate;
    // Moving each reference size from pair.worker to pair.primary over `path`.
    std::function<std::vector<TransferSample>(const PairInfo& pair, TransferPath path)> transfer;
    // Worker completion to the primary being able to start (GPU-side or through the bridge).
    std::function<std::vector<double>(const PairInfo& pair)> sync;
    std::function<void(const CalibrationProgress& progress)> progress;
};

// Measures every device (reference workloads, then `tasks`, the application's own workloads,
// then preparation and reintegration) and every ordered pair of distinct adapters in `pairs`
// (each available path, and the synchronisation) through `hooks`, and returns the profile, keyed
// by the devices' identities and stamped with the current time.
[[nodiscard]] Profile run_calibration(const std::vector<DeviceInfo>& devices,
                                      const std::vector<PairInfo>& pairs,
                                      const CalibrationHooks& hooks,
                                      const std::vector<ReferenceWorkload>& tasks = {});

// The summary `tandem calibrate` prints: per device its reference costs, per pair each path's
// bandwidth and latency and the synchronisation.
[[nodiscard]] std::string profile_summary(const Profile& profile);

} // namespace tandem::detail
