#include "runtime/completion_tracker.hpp"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "core/cpu.hpp"
#include "core/log.hpp"

#include "core/vk_check.hpp"
#include "runtime/event_queue.hpp"
#include "runtime/retry.hpp"
#include "runtime/task_chains.hpp"
#include "runtime/task_preparer.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

// The tasks one pass looks at: each thread that pumps keeps its own list (its capacity reused).
thread_local std::vector<std::shared_ptr<Task>> t_tasks;

std::string ms_text(std::chrono::milliseconds ms) {
    return std::to_string(ms.count()) + " ms";
}

} // namespace

CompletionTracker::CompletionTracker(TaskTable& tasks, LeaseTable& leases, LinkFailures& links,
                                     TaskPreparer& preparer, RetireList& retire,
                                     const Device& primary, const TimelineSemaphore& reads,
                                     const TimelineSemaphore& input_copies, TraceLog& trace,
                                     const std::atomic<std::int64_t>& timeout_ms,
                                     std::chrono::milliseconds first_job_timeout,
                                     EventQueue& events)
    : m_tasks(tasks), m_events(events), m_leases(leases), m_links(links), m_preparer(preparer),
      m_retire(retire), m_primary(primary), m_reads(reads), m_input_copies(input_copies),
      m_trace(trace), m_trace_app(trace.track("app thread")), m_timeout_ms(timeout_ms),
      m_first_job_timeout(first_job_timeout) {}

CompletionTracker::~CompletionTracker() {
    stop();
}

void CompletionTracker::start(bool poll) {
    m_thread = start_waiting_thread(!poll, [this] { run(); });
}

void CompletionTracker::stop() noexcept {
    m_stop.store(true, std::memory_order_relaxed);
    kick();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void CompletionTracker::kick() noexcept {
    {
        std::lock_guard lock(m_kick_mutex);
        m_kicked = true;
    }
    m_kick_cv.notify_one();
}

void CompletionTracker::pump() noexcept {
    const auto t0 = Clock::now();
    pump_all();
    if (m_trace.enabled()) {
        m_trace.span(m_trace_app, "pump", t0, Clock::now());
    }
}

void CompletionTracker::job_completed(const WorkerJob& job) noexcept {
    TaskInstance& instance = *job.instance;
    if (instance.timing.timer) {
        // Read under the timer's own lock (host memory), counted under the instance's.
        if (const auto time = instance.timing.timer->completed(job.slot, job.generation)) {
            std::lock_guard lock(instance.mutex);
            instance.counts.gpu.add(*time);
        }
    }
    instance.workload->completed(job.slot, job.generation);
}

void CompletionTracker::run() noexcept {
    // Polls the counters rather than blocking in vkWaitSemaphores: on the H200s a thread blocked
    // there (even with a 2 ms timeout) made the application's frame loop on the same device about
    // 2 ms slower per frame, and blocking waits can wake late. The sleep grows while nothing
    // completes and drops back at once when something does or work is submitted (kick), so a
    // busy runtime sees completions within microseconds. Its cap grows with the time nothing
    // completed (backed_off): k_busy_progress_poll while work completes every few milliseconds,
    // up to k_longest_poll once the runtime is idle or its work is long (a wake-up a
    // millisecond).
    auto sleep = k_first_progress_poll;
    auto progress_at = Clock::now(); // when something last completed or was submitted
    std::vector<std::pair<VkSemaphore, std::uint64_t>> expected;
    std::vector<std::shared_ptr<Task>> tasks;
    while (!m_stop.load(std::memory_order_relaxed)) {
        m_rounds.fetch_add(1, std::memory_order_relaxed);
        pump_all();
        // Retired objects are destroyed here only, on this thread, never the application's: so
        // no semaphore polled below goes while it is polled.
        m_retire.collect();
        m_leases.note_long_held(Clock::now()); // here, so that it is logged without a pump
        // What completes next: every transport's primary timeline (each instance's earliest
        // value in flight) and the application's primary timeline (the earliest release value).
        expected.clear();
        std::uint64_t reads_needed = UINT64_MAX;
        m_tasks.snapshot(tasks);
        for (const auto& task : tasks) {
            std::lock_guard task_lock(task->mutex);
            for (const auto* list : {&task->instances, &task->retiring}) {
                for (const auto& instance : *list) {
                    if (!instance->prepared() || instance->worker->lost()) {
                        continue;
                    }
                    std::uint64_t next = UINT64_MAX;
                    {
                        std::lock_guard lock(instance->mutex);
                        for (std::uint32_t i = 0; i < instance->ring.size(); ++i) {
                            const SlotRecord& slot = instance->ring[i];
                            if (slot.state == SlotState::WorkerInFlight ||
                                slot.state == SlotState::Transferring) {
                                next = std::min(next, slot.primary_value);
                            }
                            if (const auto reads = LeaseTable::awaited_reads(*instance, slot)) {
                                reads_needed = std::min(reads_needed, *reads);
                            }
                        }
                    }
                    if (next != UINT64_MAX) {
                        expected.emplace_back(instance->transport->receiver_semaphore(), next);
                    }
                }
            }
        }
        tasks.clear();
        if (reads_needed != UINT64_MAX) {
            expected.emplace_back(m_reads.handle(), reads_needed);
        }
        // Poll until one of them is reached (or new work may have arrived: at most `longest`).
        // The semaphores stay valid meanwhile: only this thread destroys retired objects.
        bool reached = false;
        const auto longest = backed_off(k_busy_progress_poll, Clock::now() - progress_at);
        const auto give_up = Clock::now() + longest;
        while (!reached && !expected.empty() && Clock::now() < give_up &&
               !m_stop.load(std::memory_order_relaxed)) {
            for (const auto& [semaphore, value] : expected) {
                std::uint64_t current = 0;
                VkResult r = VK_SUCCESS;
                {
                    // Serialised with the device's other host semaphore access, as
                    // TimelineSemaphore does.
                    const auto lock = m_primary.host_semaphore_guard();
                    r = vkGetSemaphoreCounterValue(m_primary.handle(), semaphore, &current);
                }
                if (r != VK_SUCCESS || current >= value) {
                    reached = true; // an error is reported by pump_all
                    break;
                }
            }
            if (!reached) {
                std::this_thread::sleep_for(sleep);
                sleep = std::min(sleep * 2, longest);
            }
        }
        if (reached) {
            sleep = k_first_progress_poll;
            progress_at = Clock::now();
        } else if (expected.empty()) {
            std::unique_lock lock(m_kick_mutex);
            m_kick_cv.wait_for(lock, longest, [&] { return m_kicked; });
        }
        std::lock_guard lock(m_kick_mutex);
        if (m_kicked) {
            m_kicked = false;
            sleep = k_first_progress_poll;
            progress_at = Clock::now();
        }
    }
}

void CompletionTracker::pump_all() noexcept {
    std::uint64_t reads = 0;
    if (m_reads.value(reads) == VK_SUCCESS) {
        m_leases.observe_reads(reads);
    }
    try {
        m_tasks.snapshot(t_tasks);
    } catch (...) {
        return; // out of memory: the next pump tries again
    }
    for (const auto& task : t_tasks) {
        Losses losses;
        bool removable = false;
        {
            std::lock_guard lock(task->mutex);
            pump_task(*task, reads, losses, removable);
        }
        for (auto& [worker, reason] : losses.workers) {
            lose_worker(*worker, reason);
        }
        if (removable) {
            m_tasks.remove(task->id); // its id never names a task again
        }
    }
    t_tasks.clear();
}

void CompletionTracker::pump_task(Task& task, std::uint64_t reads_value, Losses& losses,
                                  bool& removable) noexcept {
    settle_pending(task);
    for (const auto* list : {&task.instances, &task.retiring}) {
        for (const auto& instance : *list) {
            pump_instance(task, *instance, reads_value, losses);
        }
    }
    retire_quiescent(task);
    removable = !task.live && task.instances.empty() && task.retiring.empty();
}

void CompletionTracker::settle_pending(Task& task) noexcept {
    TaskInstance* pending = task.pending;
    if (pending == nullptr || pending->preparing()) {
        return;
    }
    // A chain moves as a unit (runtime/task_chains.hpp): a follower takes its new device once its
    // leader runs there; a leader leaves once its matching consumers took every generation it
    // made where they run (they then follow it, answering Preparing meanwhile).
    if (task.move_waits_for_consumers()) {
        return;
    }
    if (pending->prepared() && task.pending_kind == PendingKind::Move) {
        const std::uint32_t leader_at =
            task.links.leader != nullptr
                ? task.links.leader->active_device.load(std::memory_order_acquire)
                : Task::k_no_device;
        if (leader_at != Task::k_no_device && leader_at != pending->device()) {
            return;
        }
    }
    task.pending = nullptr;
    try {
        if (!pending->prepared()) {
            const std::string why = pending->preparation_error;
            switch (task.pending_kind) {
            case PendingKind::Move:
                task.preparation.refused.push_back(pending->device());
                task.preparation.move_failures.push_back(
                    "task \"" + task.desc.name + "\" could not run on adapter " +
                    std::to_string(pending->device()) + ": " + why);
                break;
            case PendingKind::Fallback:
                task.preparation.fallback_error =
                    (task.active != nullptr ? LinkFailures::failure(*task.active) + "; "
                                            : std::string()) +
                    "no other path could be prepared: " + why;
                log_error("runtime", "task '{}': {}", task.desc.name,
                          task.preparation.fallback_error);
                break;
            case PendingKind::Feeds:
                task.links.feed_error = "it could not be prepared to send its output to another "
                                        "worker: " +
                                        why;
                log_error("runtime", "task '{}': {}", task.desc.name, task.links.feed_error);
                break;
            case PendingKind::Reconfigure:
                task.preparation.reconfigure_error = why;
                log_error("runtime",
                          "task '{}' keeps its shape: its new one could not be prepared: {}",
                          task.desc.name, why);
                break;
            }
            task.retire(pending);
            return;
        }
        TaskInstance* old = task.active;
        if (old != nullptr && task.shown.generation == 0 && old->prepared()) {
            // Nothing handed out yet: the old instance's newest output is shown (kept, and
            // acquired) until the new one has its own, so a task that moves or is reconfigured
            // before the application's first acquire is not blank while outputs exist.
            std::lock_guard lock(old->mutex);
            if (const auto current = old->registry.current()) {
                task.shown.serial = old->serial;
                task.shown.generation = current->generation;
            }
        }
        {
            std::lock_guard lock(pending->mutex);
            const auto current = pending->registry.current();
            pending->activated_after = current ? current->generation : 0;
        }
        pending->trial = false;
        task.set_active(pending);
        switch (task.pending_kind) {
        case PendingKind::Move:
            ++task.counts.moves;
            m_events.post(RuntimeEventKind::TaskMoved, task.id, pending->device(), 0,
                          TaskError::None, "the scheduler moved the task to ",
                          pending->worker->label());
            // The old device's instance stays for a quick move back, unless it cannot serve.
            if (old != nullptr &&
                (old->worker->lost() || old->link_failed.load(std::memory_order_acquire) ||
                 !old->prepared())) {
                task.retire(old);
            }
            break;
        case PendingKind::Fallback:
        case PendingKind::Feeds:
            if (old != nullptr) {
                task.retire(old);
            }
            break;
        case PendingKind::Reconfigure:
            ++task.counts.reconfigurations;
            task.adopt_shape(pending->desc);
            task.preparation.reconfigure_error.clear();
            // Every other instance has the old shape.
            for (std::size_t i = task.instances.size(); i-- > 0;) {
                if (task.instances[i].get() != pending) {
                    task.retire(task.instances[i].get());
                }
            }
            break;
        }
    } catch (...) {
        // Out of memory describing a failure: the instance is settled all the same.
    }
}

void CompletionTracker::pump_instance(Task& task, TaskInstance& instance, std::uint64_t reads_value,
                                      Losses& losses) noexcept {
    if (!instance.prepared()) {
        return;
    }
    Worker& worker = *instance.worker;
    const auto now = Clock::now();
    std::string lost_reason;
    std::uint64_t copied = 0;
    std::uint64_t worked = 0;
    if (!worker.lost() && !instance.link_failed.load(std::memory_order_acquire)) {
        if (instance.transport->failed()) {
            if (!m_links.retire(instance, true)) {
                lost_reason = "its transfer failed: " + instance.transport->error();
            }
        } else {
            // The primary's counter, and the worker's as its watcher last saw it (host memory:
            // nothing here touches the worker's device).
            VkResult r = instance.transport->receiver_value(copied);
            worked = worker.completed_work();
            if (r == VK_SUCCESS) {
                r = worker.watch_result();
            }
            if (r != VK_SUCCESS) {
                lost_reason = std::string("its device reported ") + tandem::to_string(r);
            }
        }
    }
    const auto allowance = worker.allowance(timeout(), m_first_job_timeout);
    std::lock_guard lock(instance.mutex);
    // The job's work was seen complete at `at`: its latencies, and the worker's allowance learns
    // how long a job takes there.
    const auto worker_done = [&](SlotRecord& s, Clock::time_point at) {
        s.worker_done_seen = true;
        s.times.worker_done = at;
        instance.counts.worker_done_us.add(micros(s.times.request, at));
        worker.note_job_time(micros(s.times.worker_submit, at));
        if (instance.first_job == 1) {
            instance.first_job = 2; // measured: the worker's allowance knows it now
            worker.unmeasured.fetch_sub(1, std::memory_order_relaxed);
        }
    };
    std::uint32_t completed[16];
    std::uint32_t completed_count = 0;
    for (std::uint32_t i = 0; i < instance.ring.size(); ++i) {
        SlotRecord& s = instance.ring[i];
        if (lost_reason.empty() && !worker.lost() &&
            (s.state == SlotState::WorkerInFlight || s.state == SlotState::Transferring)) {
            if (!s.worker_done_seen && worked >= s.work_value) {
                // When the watcher saw the work complete (its newest progress, which is this
                // job's or a later one's), not when this pump came by.
                worker_done(s, std::clamp(worker.last_progress(), s.times.request, now));
                if (s.state == SlotState::WorkerInFlight) {
                    (void)instance.ring.apply(i, SlotEvent::WorkerDone);
                }
                m_trace.span(instance.trace_worker_queue, instance.desc.name, s.times.worker_submit,
                             now, s.generation, instance.desc.name);
            }
            // Kept on its worker: complete once its work is (nothing crosses to the primary).
            if (instance.keeps_output_on_worker() ? s.worker_done_seen
                                                  : copied >= s.primary_value) {
                if (!s.worker_done_seen) {
                    // The copy waited for the work, so it is done too: the watcher had not
                    // reported it yet. Observed now, as far as anyone here knows.
                    worker_done(s, now);
                }
                (void)instance.ring.apply(i, SlotEvent::CopyDone);
                s.times.ready = now;
                instance.counts.ready_us.add(micros(s.times.request, now));
                m_trace.span(instance.trace_transfer_queue, "to primary " + instance.desc.name,
                             std::max(s.times.transfer_queued, s.times.worker_done), now,
                             s.generation, instance.desc.name);
                completed[completed_count++] = i;
            }
        }
        LeaseTable::finish_reads(instance, i, reads_value);
        // A job's holds on other tasks' slots go once it completed or will not run (its work
        // value orders the producer's next write of the slot); a producer's slot kept for a
        // chain is recycled once nothing keeps it.
        if (instance.sources.holding(i) &&
            (s.worker_done_seen || s.state == SlotState::Free || s.state == SlotState::Ready ||
             s.state == SlotState::Kept || s.state == SlotState::Leased ||
             (s.state == SlotState::Retired && instance.host_jobs == 0))) {
            instance.sources.release(i, s.work_value);
        }
        if (s.state == SlotState::Kept) {
            recycle(instance, i);
        }
        // Overdue: in flight for longer than the worker's allowance during which it completed
        // nothing (a slow worker, or a long queue ahead of the job, is busy, not lost).
        if (lost_reason.empty() && !worker.lost() && in_flight(s.state) &&
            now - std::max(s.times.request, worker.last_progress()) > allowance) {
            // Say where it stopped, so a report from a machine names the stage.
            lost_reason = "it made no progress for longer than its allowance of " +
                          ms_text(allowance) + " while generation " + std::to_string(s.generation) +
                          " of " + instance.desc.name + " waited (slot " + std::to_string(i) + " " +
                          to_string(s.state) + "; worker work " + std::to_string(worked) + "/" +
                          std::to_string(s.work_value) + ", primary copy " +
                          std::to_string(copied) + "/" + std::to_string(s.primary_value) + ")";
            lost_reason += "; " + worker.activity();
            if (const auto why = instance.transport->not_ready_reason(); !why.empty()) {
                lost_reason += "; the transfer last refused a submit because " + why;
            }
        }
    }
    // Offer what completed in generation order, so outputs seen complete in one pass are
    // published oldest first (the older ones count as ready, not superseded). Trial jobs are
    // measurements: counted and recycled, never published.
    std::sort(completed, completed + completed_count, [&](std::uint32_t a, std::uint32_t b) {
        return instance.ring[a].generation < instance.ring[b].generation;
    });
    for (std::uint32_t k = 0; k < completed_count; ++k) {
        const std::uint32_t i = completed[k];
        SlotRecord& s = instance.ring[i];
        if (s.trial) {
            ++instance.counts.trials_done;
            recycle(instance, i);
            continue;
        }
        task.failures.in_a_row = 0;
        const auto offer = instance.registry.offer(s.generation, i);
        if (offer.published) {
            s.published = true;
            ++instance.counts.ready;
            if (offer.replaced) {
                SlotRecord& old = instance.ring[*offer.replaced];
                old.published = false;
                if (old.state == SlotState::Ready) {
                    recycle(instance, *offer.replaced);
                }
            }
        } else {
            ++instance.counts.superseded;
            recycle(instance, i);
        }
    }
    if (!lost_reason.empty()) {
        try {
            losses.workers.emplace_back(&worker, std::move(lost_reason));
        } catch (...) {
            // Out of memory: the next pump finds it again.
        }
    }
}

void CompletionTracker::retire_quiescent(Task& task) noexcept {
    for (std::size_t i = task.retiring.size(); i-- > 0;) {
        TaskInstance& instance = *task.retiring[i];
        // A live task's last shown output stays until another instance's replaces it.
        if (task.live && instance.serial == task.shown.serial) {
            continue;
        }
        if (instance.preparing()) {
            (void)m_preparer.cancel(instance); // still queued: it fails now, unprepared
            continue;
        }
        try {
            std::vector<RetirePoint> points;
            std::vector<const Device*> devices;
            {
                std::lock_guard lock(instance.mutex);
                if (!instance.quiescent()) {
                    continue;
                }
                points = instance.retire_points(m_reads, m_input_copies);
                devices = instance.retire_devices(m_primary);
                task.counts.retired.ready += instance.counts.ready;
                task.counts.retired.superseded += instance.counts.superseded;
                task.counts.retired.failed_jobs += instance.counts.failed_jobs;
                task.counts.retired.trial_jobs += instance.counts.trial_jobs;
                if (instance.first_job == 1) {
                    instance.first_job = 0;
                    instance.worker->unmeasured.fetch_sub(1, std::memory_order_relaxed);
                }
            }
            std::unique_ptr<TaskInstance> owned = std::move(task.retiring[i]);
            task.retiring.erase(task.retiring.begin() + static_cast<std::ptrdiff_t>(i));
            m_retire.retire(std::move(owned), std::move(points), std::move(devices));
        } catch (...) {
            // Out of memory: it stays retiring; the next pass tries again.
        }
    }
}

void CompletionTracker::lose_worker(Worker& worker, const std::string& reason) noexcept {
    if (!worker.mark_lost(reason)) {
        return;
    }
    const std::uint32_t device = worker.device().info().index;
    m_events.post(RuntimeEventKind::DeviceLost, TaskId{}, device, 0, TaskError::DeviceLost,
                  worker.label(), " is lost: ", reason);
    std::vector<std::shared_ptr<Task>> tasks;
    try {
        m_tasks.snapshot(tasks);
    } catch (...) {
        // Out of memory: its slots stay as they are; nothing new is submitted to a lost worker.
    }
    for (const auto& task : tasks) {
        std::lock_guard task_lock(task->mutex);
        for (const auto* list : {&task->instances, &task->retiring}) {
            for (const auto& instance : *list) {
                if (instance->worker != &worker) {
                    continue;
                }
                std::lock_guard lock(instance->mutex);
                for (std::uint32_t i = 0; i < instance->ring.size(); ++i) {
                    const SlotRecord& slot = instance->ring[i];
                    const SlotState s = slot.state;
                    if (in_flight(s) && !slot.trial) {
                        m_events.post(RuntimeEventKind::JobFailed, task->id, device,
                                      slot.generation, TaskError::DeviceLost,
                                      "the job failed with its device: ", reason);
                    }
                    // Ready and Leased slots hold finished outputs on the primary: readable.
                    if (s == SlotState::Free || held(s)) {
                        (void)instance->ring.apply(i, SlotEvent::Fail);
                    }
                }
            }
        }
    }
    worker.mark_retired();
}

bool CompletionTracker::drain(std::chrono::steady_clock::time_point deadline) noexcept {
    bool reached = true;
    std::vector<std::shared_ptr<Task>> tasks;
    std::vector<RetirePoint> points;
    try {
        m_tasks.snapshot(tasks);
        for (const auto& task : tasks) {
            std::lock_guard task_lock(task->mutex);
            for (const auto* list : {&task->instances, &task->retiring}) {
                for (const auto& instance : *list) {
                    if (instance->preparing()) {
                        continue; // the preparation thread stopped: it never ran a job
                    }
                    // The hand-offs under way go on within the bound, so that the work
                    // submitted before the stop reaches the primary (its slot then completes at
                    // the next pump instead of staying in flight).
                    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::max(std::chrono::steady_clock::duration::zero(),
                                 deadline - std::chrono::steady_clock::now()));
                    std::lock_guard lock(instance->mutex);
                    const auto more = instance->retire_points(m_reads, m_input_copies, left);
                    points.insert(points.end(), more.begin(), more.end());
                }
            }
        }
    } catch (...) {
        reached = false;
    }
    // Lost workers too: a submit reported as failed may still have reached the GPU; on a really
    // lost device the wait returns VK_ERROR_DEVICE_LOST at once.
    for (const RetirePoint& p : points) {
        const auto left = std::max(std::chrono::steady_clock::duration::zero(),
                                   deadline - std::chrono::steady_clock::now());
        const VkResult r = wait_timeline(*p.device, p.semaphore, p.value,
                                         std::chrono::duration_cast<std::chrono::nanoseconds>(left),
                                         "shutdown wait");
        if (r != VK_SUCCESS) {
            reached = false;
        }
    }
    if (!m_retire.drain(deadline)) {
        reached = false;
    }
    return reached;
}

} // namespace tandem::detail
