// Statistics of one registration (Task): what RuntimeImpl::stats, pulse and gpu_time return.
// Counters and samples are copied under the task's mutex and sorted outside it, so a caller
// that polls in a loop never keeps the worker's threads from the task (sorting under the lock
// once starved a worker into a timeout).
//
// Threads: any; each call takes the task's mutex once, with nothing else held, and reads the
// worker's loss through Worker's own lock afterwards. Never touches a device.
#pragma once

#include <cstddef>

#include "runtime/task_state.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

struct TaskPulse {
    TaskStats counters;          // the latency fields hold only counts
    double worker_submit_us = 0; // medians of the newest samples, from each request
    double worker_done_us = 0;
    double ready_us = 0;
    // The median of the newest GPU times of its jobs (counters.gpu_us.count of them so far);
    // 0 when there are none.
    double gpu_us = 0;
};

// A registration's GPU time (TaskStats::gpu_timed and gpu_us).
struct TaskGpuTime {
    bool timed = false;
    GpuTimeStats us;
};

// Counters, every stage's percentiles, the GPU time, preparation and loss.
[[nodiscard]] TaskStats task_stats(const Task& task);
// What a scheduler polls every frame: the counters, newest generation and loss, with each
// stage's latency as the median of its newest `recent` samples instead of percentiles over
// every sample. Cheap: copies at most `recent` values per stage.
[[nodiscard]] TaskPulse task_pulse(const Task& task, std::size_t recent);
[[nodiscard]] TaskGpuTime task_gpu_time(const Task& task);

} // namespace tandem::detail
