#include "runtime/task_instance.hpp"

#include <algorithm>

#include "runtime/task.hpp"

namespace tandem::detail {

void recycle(TaskInstance& instance, std::uint32_t slot) noexcept {
    SlotRecord& s = instance.ring[slot];
    const bool retired =
        instance.worker->lost() || instance.link_failed.load(std::memory_order_relaxed);
    if (!retired &&
        (s.readers.holds > 0 || (!s.trial && instance.owner->links.wanted(s.generation)))) {
        (void)instance.ring.apply(slot, SlotEvent::Keep);
        return;
    }
    (void)instance.ring.apply(slot, retired ? SlotEvent::Fail : SlotEvent::Recycle);
}

TaskInstance::~TaskInstance() = default;

bool TaskInstance::quiescent() const noexcept {
    if (preparing() || host_jobs != 0) {
        return false;
    }
    for (std::uint32_t i = 0; i < ring.size(); ++i) {
        const SlotRecord& s = ring[i];
        // A consumer's holds on its producers go with the completion pass.
        if (held(s.state) || s.readers.leases != 0 || s.readers.holds != 0 || sources.holding(i)) {
            return false;
        }
    }
    // The watcher still holds the jobs it has not reported; on a lost worker it may never
    // report them, and the instance waits for the runtime's destruction, which stops it first.
    return worker->completed_work() >= last_work_value;
}

std::vector<RetirePoint> TaskInstance::retire_points(const TimelineSemaphore& reads,
                                                     const TimelineSemaphore& input_copies,
                                                     std::chrono::milliseconds hand_off_wait) {
    std::vector<RetirePoint> points;
    if (last_work_value > 0) {
        points.push_back({&worker->device(), worker->work_timeline().handle(), last_work_value});
    }
    if (transport) {
        const auto more = transport->quiesce(hand_off_wait);
        points.insert(points.end(), more.begin(), more.end());
    }
    for (const auto& link : inputs.links) {
        const auto more = link->quiesce(hand_off_wait);
        points.insert(points.end(), more.begin(), more.end());
    }
    feeds.retire_points(points, hand_off_wait);
    if (inputs.last_copy > 0) {
        points.push_back({&input_copies.device(), input_copies.handle(), inputs.last_copy});
    }
    // The application's writes of lent images its submits signalled: a job that failed before
    // its batch never waited for them.
    for (const LoanSignal& signal : inputs.signals) {
        if (signal.named > 0) {
            points.push_back({&signal.semaphore.device(), signal.semaphore.handle(), signal.named});
        }
    }
    std::uint64_t release = 0;
    std::uint64_t worker_release = 0;
    for (std::uint32_t i = 0; i < ring.size(); ++i) {
        release = std::max(release, ring[i].readers.release_value);
        worker_release = std::max(worker_release, ring[i].readers.worker_release_value);
    }
    if (release > 0) {
        points.push_back({&reads.device(), reads.handle(), release});
    }
    if (const TimelineSemaphore* worker_reads = worker->reads_timeline();
        worker_reads != nullptr && worker_release > 0) {
        points.push_back({&worker_reads->device(), worker_reads->handle(), worker_release});
    }
    return points;
}

std::vector<const Device*> TaskInstance::retire_devices(const Device& primary) const {
    std::vector<const Device*> devices{&worker->device()};
    if (&primary != &worker->device()) {
        devices.push_back(&primary);
    }
    feeds.devices(devices);
    return devices;
}

bool JobTiming::time_next(bool trial_job, std::chrono::steady_clock::time_point now) noexcept {
    if (!timer) {
        return false;
    }
    if (trial_job) {
        return true; // what the scheduler measures the task by
    }
    if (recorded_jobs++ < k_first_timed_jobs || now - last_timed >= period) {
        last_timed = now;
        return true;
    }
    return false;
}

} // namespace tandem::detail
