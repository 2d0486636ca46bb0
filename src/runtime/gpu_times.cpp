#include "runtime/gpu_times.hpp"

#include <utility>

namespace tandem::detail {

GpuTimeStats GpuTimes::summarise(Snapshot snapshot) {
    const LatencyStats s = LatencySamples::summarise(std::move(snapshot.samples));
    GpuTimeStats out;
    out.count = s.count;
    out.p50_us = s.p50_us;
    out.p90_us = s.p90_us;
    out.p99_us = s.p99_us;
    out.max_us = s.max_us;
    out.total_us = snapshot.total_us;
    out.first_us = snapshot.first_us;
    out.untimed = snapshot.untimed;
    return out;
}

} // namespace tandem::detail
