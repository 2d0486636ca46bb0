#include "runtime/task_stats.hpp"

#include <utility>

namespace tandem::detail {
namespace {

// The task's counters into `out`; the caller holds task.mutex.
void copy_counters(const Task& task, TaskStats& out) {
    out.accepted = task.accepted;
    out.busy = task.busy;
    out.failed = task.failed;
    out.ready = task.ready;
    out.superseded = task.superseded;
    out.in_flight = task.ring.in_flight_count();
    if (auto c = task.registry.current()) {
        out.newest_generation = c->generation;
    }
    // Acquire: the error is written before the phase.
    const TaskPhase phase = task.phase.load(std::memory_order_acquire);
    out.preparing = phase == TaskPhase::Preparing;
    if (phase == TaskPhase::Failed) {
        out.preparation_error = task.preparation_error;
    }
    out.workload_error = task.workload_error;
}

// Whether the task's worker is lost, and why. Reported once the slots are retired, so a caller
// that sees it also sees them retired. Without task.mutex (the worker locks its own).
void copy_loss(const Task& task, TaskStats& out) {
    out.worker_lost = task.worker->retired();
    if (out.worker_lost) {
        out.worker_lost_reason = task.worker->lost_reason();
    }
}

// Whether the task's jobs are timed: once prepared (acquire, as Task::prepared()), with a timer.
bool timed(const Task& task) {
    return task.prepared() && task.timer != nullptr;
}

} // namespace

TaskStats task_stats(const Task& task) {
    TaskStats out;
    LatencySamples::Snapshot samples[4];
    GpuTimes::Snapshot gpu;
    {
        std::lock_guard lock(task.mutex);
        copy_counters(task, out);
        samples[0] = task.worker_submit_us.snapshot();
        samples[1] = task.transfer_queued_us.snapshot();
        samples[2] = task.worker_done_us.snapshot();
        samples[3] = task.ready_us.snapshot();
        gpu = task.gpu.snapshot();
    }
    // Sorted outside the lock: the worker's threads and pump() need it meanwhile.
    out.worker_submit = LatencySamples::summarise(std::move(samples[0]));
    out.transfer_queued = LatencySamples::summarise(std::move(samples[1]));
    out.worker_done = LatencySamples::summarise(std::move(samples[2]));
    out.ready_observed = LatencySamples::summarise(std::move(samples[3]));
    out.gpu_timed = timed(task);
    out.gpu_us = GpuTimes::summarise(std::move(gpu));
    copy_loss(task, out);
    return out;
}

TaskPulse task_pulse(const Task& task, std::size_t recent) {
    TaskPulse out;
    TaskStats& c = out.counters;
    {
        std::lock_guard lock(task.mutex);
        copy_counters(task, c);
        c.worker_submit.count = task.worker_submit_us.count();
        c.worker_done.count = task.worker_done_us.count();
        c.ready_observed.count = task.ready_us.count();
        c.gpu_us.count = task.gpu.samples.count();
        out.worker_submit_us = task.worker_submit_us.recent_median_us(recent);
        out.worker_done_us = task.worker_done_us.recent_median_us(recent);
        out.ready_us = task.ready_us.recent_median_us(recent);
        out.gpu_us = task.gpu.samples.recent_median_us(recent);
    }
    c.gpu_timed = timed(task);
    copy_loss(task, c);
    return out;
}

TaskGpuTime task_gpu_time(const Task& task) {
    GpuTimes::Snapshot gpu;
    {
        std::lock_guard lock(task.mutex);
        gpu = task.gpu.snapshot();
    }
    return TaskGpuTime{timed(task), GpuTimes::summarise(std::move(gpu))};
}

} // namespace tandem::detail
