#include "runtime/task_stats.hpp"

#include <algorithm>
#include <utility>

namespace tandem::detail {
namespace {

// Whether the instance's jobs are timed: once prepared, with a timer.
bool timed(const TaskInstance& instance) {
    return instance.prepared() && instance.timing.timer != nullptr;
}

// One instance's part; `active`: with its samples. Takes the instance's mutex.
InstanceStatsPart part_of(const TaskInstance& instance, bool active) {
    InstanceStatsPart p;
    TaskDeviceStats& d = p.device;
    d.device = instance.device();
    d.active = active;
    d.trial = instance.trial;
    const InstancePhase phase = instance.phase.load(std::memory_order_acquire);
    d.preparing = phase == InstancePhase::Preparing;
    if (phase == InstancePhase::Failed) {
        d.preparation_error = instance.preparation_error; // written before the phase
    }
    {
        std::lock_guard lock(instance.mutex);
        d.accepted = instance.counts.accepted;
        d.ready = instance.counts.ready;
        d.trial_jobs = instance.counts.trial_jobs;
        d.in_flight = instance.ring.in_flight_count();
        if (const auto c = instance.registry.current()) {
            d.newest_generation = c->generation;
        }
        p.superseded = instance.counts.superseded;
        p.failed_jobs = instance.counts.failed_jobs;
        p.gpu = instance.counts.gpu.snapshot();
        if (active) {
            p.samples[0] = instance.counts.worker_submit_us.snapshot();
            p.samples[1] = instance.counts.transfer_queued_us.snapshot();
            p.samples[2] = instance.counts.worker_done_us.snapshot();
            p.samples[3] = instance.counts.ready_us.snapshot();
        }
    }
    d.gpu_timed = timed(instance);
    // Reported once the slots are retired, so a caller that sees it also sees them retired.
    p.worker_lost = instance.worker->retired();
    if (p.worker_lost) {
        p.worker_lost_reason = instance.worker->lost_reason();
    }
    d.worker_lost = p.worker_lost;
    switch (phase) {
    case InstancePhase::Preparing:
        p.transfer_path.reset(); // TaskStats::preparing says why
        break;
    case InstancePhase::Failed:
        p.transfer_path.reset();
        break;
    case InstancePhase::Ready:
        p.transfer_path = parse_transfer_path(instance.transport->path_name());
        p.outputs_written_in_place = instance.transport->writes_in_place();
        p.outputs_kept_on_worker = instance.keeps_output_on_worker();
        if (!instance.inputs.empty()) {
            p.input_path = instance.inputs.path_name();
            p.inputs_read_in_place = instance.inputs.read_in_place();
            p.inputs_copied_by_compute = static_cast<std::uint32_t>(
                std::count_if(instance.inputs.compute.begin(), instance.inputs.compute.end(),
                              [](const auto& copy) { return copy != nullptr; }));
        } else if (!instance.desc.inputs.empty()) {
            p.input_path = "chained"; // every input is another task's output, read in place
        }
        break;
    }
    return p;
}

} // namespace

TaskProgress collect_progress(const Task& task) noexcept {
    TaskProgress out;
    out.stopped = task.failures.stopped;
    out.reconfigurations = task.counts.reconfigurations;
    const auto add = [&](const TaskInstance& instance) {
        std::lock_guard lock(instance.mutex);
        out.in_flight += instance.ring.in_flight_count();
        if (const auto c = instance.registry.current()) {
            out.newest_generation = std::max(out.newest_generation, c->generation);
        }
    };
    for (const auto* list : {&task.instances, &task.retiring}) {
        for (const auto& instance : *list) {
            add(*instance);
        }
    }
    if (const TaskInstance* active = task.active) {
        out.preparing = active->phase.load(std::memory_order_acquire) == InstancePhase::Preparing;
        out.worker_lost = active->worker->retired();
    }
    return out;
}

TaskStatsParts collect_stats(const Task& task, const LinkFailures& links) {
    TaskStatsParts out;
    TaskStats& s = out.base;
    s.accepted = task.counts.accepted;
    s.busy = task.counts.busy;
    s.failed = task.counts.failed;
    s.ready = task.counts.retired.ready;
    s.superseded = task.counts.retired.superseded;
    s.failed_jobs = task.counts.retired.failed_jobs;
    s.trial_jobs = task.counts.retired.trial_jobs;
    s.workload_error = task.failures.last;
    s.stopped = task.failures.stopped;
    s.moves = task.counts.moves;
    s.reconfigurations = task.counts.reconfigurations;
    s.input_copies = task.counts.input_copies;
    // Relaxed: a counter, ordering nothing.
    s.input_sends = task.counts.input_sends.load(std::memory_order_relaxed);
    s.input_sends_early = task.counts.input_sends_early.load(std::memory_order_relaxed);
    s.chained_reads = task.counts.chained_reads;
    s.lent_submits = task.counts.lent_submits;
    s.lent_signalled_submits = task.counts.lent_signalled_submits;
    out.input_copy_gpu = task.counts.input_copy_gpu.snapshot();
    if (!task.preparation.fallback_error.empty()) {
        s.preparation_error = task.preparation.fallback_error;
    } else if (!task.preparation.reconfigure_error.empty()) {
        s.preparation_error = task.preparation.reconfigure_error;
    }
    const TaskInstance* active = task.active;
    if (active != nullptr) {
        out.instances.push_back(part_of(*active, true));
        s.dropped_paths = links.dropped_paths(active->device());
    }
    if (active != nullptr && active->prepared()) {
        {
            std::lock_guard lock(active->mutex); // a feed's error
            active->feeds.stats(s.feeds);
        }
        for (TaskFeedStats& f : s.feeds) {
            f.dropped_paths = links.dropped_paths(active->device(), f.device);
        }
    }
    for (const auto& instance : task.instances) {
        if (instance.get() != active) {
            out.instances.push_back(part_of(*instance, false));
        }
    }
    // Those leaving use still hold counts (and may still complete jobs).
    for (const auto& instance : task.retiring) {
        const InstanceStatsPart p = part_of(*instance, false);
        s.ready += p.device.ready;
        s.superseded += p.superseded;
        s.failed_jobs += p.failed_jobs;
        s.trial_jobs += p.device.trial_jobs;
        s.in_flight += p.device.in_flight;
        s.newest_generation = std::max(s.newest_generation, p.device.newest_generation);
    }
    return out;
}

TaskStats summarise(TaskStatsParts parts) {
    TaskStats out = std::move(parts.base);
    out.input_copy_gpu_us = GpuTimes::summarise(std::move(parts.input_copy_gpu));
    for (std::size_t i = 0; i < parts.instances.size(); ++i) {
        InstanceStatsPart& p = parts.instances[i];
        TaskDeviceStats& d = p.device;
        out.ready += d.ready;
        out.superseded += p.superseded;
        out.failed_jobs += p.failed_jobs;
        out.trial_jobs += d.trial_jobs;
        out.in_flight += d.in_flight;
        out.newest_generation = std::max(out.newest_generation, d.newest_generation);
        d.gpu_us = GpuTimes::summarise(std::move(p.gpu));
        if (i == 0 && d.active) {
            out.device = d.device;
            out.worker_submit = LatencySamples::summarise(std::move(p.samples[0]));
            out.transfer_queued = LatencySamples::summarise(std::move(p.samples[1]));
            out.worker_done = LatencySamples::summarise(std::move(p.samples[2]));
            out.ready_observed = LatencySamples::summarise(std::move(p.samples[3]));
            out.gpu_timed = d.gpu_timed;
            out.gpu_us = d.gpu_us;
            out.preparing = d.preparing;
            if (out.preparation_error.empty()) {
                out.preparation_error = d.preparation_error;
            }
            out.worker_lost = p.worker_lost;
            out.worker_lost_reason = p.worker_lost_reason;
            out.transfer_path = p.transfer_path;
            out.input_path = p.input_path;
            out.inputs_read_in_place = p.inputs_read_in_place;
            out.inputs_copied_by_compute = p.inputs_copied_by_compute;
            out.outputs_kept_on_worker = p.outputs_kept_on_worker;
            out.outputs_written_in_place = p.outputs_written_in_place;
        }
        out.devices.push_back(std::move(d));
    }
    return out;
}

TaskPulse instance_pulse(const TaskInstance& instance, std::size_t recent) {
    TaskPulse out;
    TaskStats& c = out.counters;
    const InstancePhase phase = instance.phase.load(std::memory_order_acquire);
    c.preparing = phase == InstancePhase::Preparing;
    if (phase == InstancePhase::Failed) {
        c.preparation_error = instance.preparation_error;
    }
    {
        std::lock_guard lock(instance.mutex);
        c.accepted = instance.counts.accepted;
        c.ready = instance.counts.ready;
        c.superseded = instance.counts.superseded;
        c.failed_jobs = instance.counts.failed_jobs;
        c.trial_jobs = instance.counts.trial_jobs;
        c.in_flight = instance.ring.in_flight_count();
        if (const auto current = instance.registry.current()) {
            c.newest_generation = current->generation;
        }
        c.worker_submit.count = instance.counts.worker_submit_us.count();
        c.worker_done.count = instance.counts.worker_done_us.count();
        c.ready_observed.count = instance.counts.ready_us.count();
        c.gpu_us.count = instance.counts.gpu.samples.count();
        c.gpu_us.untimed = instance.counts.gpu.untimed;
        out.worker_submit_us = instance.counts.worker_submit_us.recent_median_us(recent);
        out.worker_done_us = instance.counts.worker_done_us.recent_median_us(recent);
        out.ready_us = instance.counts.ready_us.recent_median_us(recent);
        out.gpu_us = instance.counts.gpu.samples.recent_median_us(recent);
        out.completed = instance.counts.completed();
    }
    c.gpu_timed = timed(instance);
    c.worker_lost = instance.worker->retired();
    if (c.worker_lost) {
        c.worker_lost_reason = instance.worker->lost_reason();
    }
    return out;
}

} // namespace tandem::detail
