// Statistics of a task (TaskStats) and of one instance (TaskPulse, what the scheduler polls).
// A task's counters are the application's own (its submits' answers, its outputs), summed over
// its instances and those that left; its latencies, GPU time, preparation and loss are the
// active instance's; each device's part is listed. Samples are copied under the locks and
// sorted outside them: sorting under a lock once starved a worker into a timeout.
//
// Threads: any. collect_stats() with the task's mutex held (it takes each instance's mutex in
// turn); summarise() with nothing held. Never touches a device.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/latency.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/task.hpp"
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
    // Jobs completed here, the application's and trial ones: ready + superseded + trials done.
    std::uint64_t completed = 0;
};

// What one instance's statistics are made of, copied under its mutex.
struct InstanceStatsPart {
    TaskDeviceStats device;
    std::uint64_t superseded = 0;
    std::uint64_t failed_jobs = 0;
    std::uint32_t in_flight = 0;
    bool worker_lost = false;
    std::string worker_lost_reason;
    std::optional<TransferPath> transfer_path;
    std::string input_path;
    bool inputs_read_in_place = false;
    bool outputs_written_in_place = false;
    std::uint32_t inputs_copied_by_compute = 0;
    bool outputs_kept_on_worker = false;
    GpuTimes::Snapshot gpu;
    // The active instance's only: every stage's samples.
    LatencySamples::Snapshot samples[4];
};

// What a task's statistics are made of.
struct TaskStatsParts {
    TaskStats base;                           // the task-level fields, filled
    GpuTimes::Snapshot input_copy_gpu;        // summarised into base.input_copy_gpu_us
    std::vector<InstanceStatsPart> instances; // the active one first
};

// What progress() answers. Caller holds task.mutex.
[[nodiscard]] TaskProgress collect_progress(const Task& task) noexcept;

// Copies what stats() needs. Caller holds task.mutex.
[[nodiscard]] TaskStatsParts collect_stats(const Task& task, const LinkFailures& links);
// The statistics, sorted and summed outside every lock.
[[nodiscard]] TaskStats summarise(TaskStatsParts parts);
// What a scheduler polls: the instance's counters, newest generation and loss, with each
// stage's latency as the median of its newest `recent` samples instead of percentiles over every
// sample. Cheap: copies at most `recent` values per stage. Takes the instance's mutex.
[[nodiscard]] TaskPulse instance_pulse(const TaskInstance& instance, std::size_t recent);

} // namespace tandem::detail
