// GpuTimes: the GPU times of one task registration's jobs (JobTimer's, core/job_timer.hpp), as
// TaskStats::gpu_us reports them: the newest samples for percentiles, the total and the first
// job's. Threads: its owner (Task) guards it with its mutex.
#pragma once

#include <cstdint>

#include "core/job_timer.hpp"
#include "runtime/latency.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

// The GPU times of one registration's jobs (the owner serialises access: Task::mutex).
struct GpuTimes {
    LatencySamples samples;
    double total_us = 0;
    std::uint64_t first_generation = 0; // 0: none yet
    double first_us = 0;
    std::uint64_t untimed = 0; // jobs recorded without timestamps (TaskInstance::timing_period)

    void add(const JobTime& t) {
        samples.add(t.us);
        total_us += t.us;
        // Times arrive almost in generation order; the first job's is the oldest generation's.
        if (first_generation == 0 || t.generation < first_generation) {
            first_generation = t.generation;
            first_us = t.us;
        }
    }
    // What stats() copies under the owner's lock, to summarise outside it.
    struct Snapshot {
        LatencySamples::Snapshot samples;
        double total_us = 0;
        double first_us = 0;
        std::uint64_t untimed = 0;
    };
    [[nodiscard]] Snapshot snapshot() const {
        return {samples.snapshot(), total_us, first_us, untimed};
    }
    [[nodiscard]] static GpuTimeStats summarise(Snapshot snapshot);
};

} // namespace tandem::detail
