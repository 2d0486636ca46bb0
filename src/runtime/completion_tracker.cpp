#include "runtime/completion_tracker.hpp"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

CompletionTracker::CompletionTracker(const TaskRegistry& tasks, LeaseTable& leases,
                                     LinkFailures& links, const Device& primary,
                                     const TimelineSemaphore& reads, TraceLog& trace,
                                     const std::atomic<std::int64_t>& timeout_ms)
    : m_tasks(tasks), m_leases(leases), m_links(links), m_primary(primary), m_reads(reads),
      m_trace(trace), m_trace_app(trace.track("app thread")), m_timeout_ms(timeout_ms) {}

CompletionTracker::~CompletionTracker() {
    stop();
}

void CompletionTracker::start() {
    m_thread = std::thread([this] { run(); });
}

void CompletionTracker::stop() noexcept {
    m_stop.store(true, std::memory_order_relaxed);
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void CompletionTracker::pump() noexcept {
    const auto t0 = Clock::now();
    pump_all();
    if (m_trace.enabled()) {
        m_trace.span(m_trace_app, "pump", t0, Clock::now());
    }
}

void CompletionTracker::job_completed(const WorkerJob& job) noexcept {
    Task& task = *job.task;
    if (task.timer) {
        // Read under the timer's own lock (host memory), counted under the task's.
        if (const auto time = task.timer->completed(job.slot, job.generation)) {
            std::lock_guard lock(task.mutex);
            task.gpu.add(*time);
        }
    }
    task.workload->completed(job.slot, job.generation);
}

void CompletionTracker::run() noexcept {
    // Polls the counters rather than blocking in vkWaitSemaphores: on the H200s a thread blocked
    // there (even with a 2 ms timeout) made the application's frame loop on the same device about
    // 2 ms slower per frame, and blocking waits can wake late. The sleep grows while nothing
    // completes and drops back at once when something does, so an idle runtime costs a wake-up
    // every k_max_sleep and a busy one sees completions within microseconds.
    constexpr auto k_min_sleep = std::chrono::microseconds(5);
    constexpr auto k_max_sleep = std::chrono::microseconds(200);
    auto sleep = k_min_sleep;
    std::vector<std::pair<VkSemaphore, std::uint64_t>> expected;
    while (!m_stop.load(std::memory_order_relaxed)) {
        pump_all();
        // What completes next: every transport's primary timeline (each task's earliest value
        // in flight) and the application's primary timeline (the earliest release value).
        expected.clear();
        std::uint64_t reads_needed = UINT64_MAX;
        const std::size_t count = m_tasks.count();
        for (std::size_t t = 0; t < count; ++t) {
            Task& task = m_tasks[t];
            if (!task.prepared() || task.worker->lost()) {
                continue;
            }
            std::uint64_t next = UINT64_MAX;
            {
                std::lock_guard lock(task.mutex);
                for (std::uint32_t i = 0; i < task.ring.size(); ++i) {
                    const SlotRecord& slot = task.ring[i];
                    if (slot.state == SlotState::WorkerInFlight ||
                        slot.state == SlotState::Transferring) {
                        next = std::min(next, slot.primary_value);
                    }
                    if (const auto reads = LeaseTable::awaited_reads(slot)) {
                        reads_needed = std::min(reads_needed, *reads);
                    }
                }
            }
            if (next != UINT64_MAX) {
                expected.emplace_back(task.transport->primary_semaphore(), next);
            }
        }
        if (reads_needed != UINT64_MAX) {
            expected.emplace_back(m_reads.handle(), reads_needed);
        }
        // Poll until one of them is reached (or new work may have arrived: at most k_max_sleep).
        bool reached = false;
        const auto give_up = Clock::now() + k_max_sleep;
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
                sleep = std::min(sleep * 2, k_max_sleep);
            }
        }
        if (reached) {
            sleep = k_min_sleep;
        } else if (expected.empty()) {
            std::this_thread::sleep_for(k_max_sleep);
        }
    }
}

void CompletionTracker::pump_all() noexcept {
    std::uint64_t reads = 0;
    if (m_reads.value(reads) == VK_SUCCESS) {
        m_leases.observe_reads(reads);
    }
    const std::size_t count = m_tasks.count();
    for (std::size_t t = 0; t < count; ++t) {
        pump_task(m_tasks[t], reads);
    }
}

void CompletionTracker::pump_task(Task& task, std::uint64_t reads_value) noexcept {
    if (!task.prepared()) {
        return;
    }
    Worker& worker = *task.worker;
    const auto now = Clock::now();
    std::string lost_reason;
    std::uint64_t copied = 0;
    std::uint64_t worked = 0;
    if (!worker.lost()) {
        if (task.transport->failed()) {
            if (!m_links.retire(task, true)) {
                lost_reason = "its transfer failed: " + task.transport->error();
            }
        } else {
            // The primary's counter, and the worker's as its watcher last saw it (host memory:
            // nothing here touches the worker's device).
            VkResult r = task.transport->primary_value(copied);
            worked = worker.completed_work();
            if (r == VK_SUCCESS) {
                r = worker.watch_result();
            }
            if (r != VK_SUCCESS) {
                lost_reason = std::string("its device reported ") + tandem::to_string(r);
            }
        }
    }
    const auto timeout = this->timeout();
    {
        std::lock_guard lock(task.mutex);
        std::uint32_t completed[16];
        std::uint32_t completed_count = 0;
        for (std::uint32_t i = 0; i < task.ring.size(); ++i) {
            SlotRecord& s = task.ring[i];
            if (lost_reason.empty() && !worker.lost() &&
                (s.state == SlotState::WorkerInFlight || s.state == SlotState::Transferring)) {
                if (!s.worker_done_seen && worked >= s.work_value) {
                    s.worker_done_seen = true;
                    // When the watcher saw the work complete (its newest progress, which is this
                    // job's or a later one's), not when this pump came by.
                    s.times.worker_done = std::clamp(worker.last_progress(), s.times.request, now);
                    task.worker_done_us.add(micros(s.times.request, s.times.worker_done));
                    if (s.state == SlotState::WorkerInFlight) {
                        (void)task.ring.apply(i, SlotEvent::WorkerDone);
                    }
                    m_trace.span(task.trace_worker_queue, task.desc.name, s.times.worker_submit,
                                 now, s.generation, task.desc.name);
                }
                if (copied >= s.primary_value) {
                    if (!s.worker_done_seen) {
                        // The copy waited for the work, so it is done too: the watcher had not
                        // reported it yet. Observed now, as far as anyone here knows.
                        s.worker_done_seen = true;
                        s.times.worker_done = now;
                        task.worker_done_us.add(micros(s.times.request, now));
                    }
                    (void)task.ring.apply(i, SlotEvent::CopyDone);
                    s.times.ready = now;
                    task.ready_us.add(micros(s.times.request, now));
                    m_trace.span(task.trace_transfer_queue, "to primary " + task.desc.name,
                                 std::max(s.times.transfer_queued, s.times.worker_done), now,
                                 s.generation, task.desc.name);
                    completed[completed_count++] = i;
                }
            }
            LeaseTable::finish_reads(task, i, reads_value);
            // Overdue: in flight for longer than the timeout during which the worker completed
            // nothing (a slow worker with a long queue is busy, not lost).
            if (lost_reason.empty() && in_flight(s.state) &&
                now - std::max(s.times.request, worker.last_progress()) > timeout) {
                // Say where it stopped, so a report from a machine names the stage.
                lost_reason =
                    "generation " + std::to_string(s.generation) + " of " + task.desc.name +
                    " did not complete within " + std::to_string(timeout.count()) +
                    " ms in which its worker completed nothing (slot " + std::to_string(i) + " " +
                    to_string(s.state) + "; worker work " + std::to_string(worked) + "/" +
                    std::to_string(s.work_value) + ", primary copy " + std::to_string(copied) +
                    "/" + std::to_string(s.primary_value) + ")";
                lost_reason += "; " + worker.activity();
                if (const auto why = task.transport->not_ready_reason(); !why.empty()) {
                    lost_reason += "; the transfer last refused a submit because " + why;
                }
            }
        }
        // Offer what completed in generation order, so outputs seen complete in one pass are
        // published oldest first (the older ones count as ready, not superseded).
        std::sort(completed, completed + completed_count, [&](std::uint32_t a, std::uint32_t b) {
            return task.ring[a].generation < task.ring[b].generation;
        });
        for (std::uint32_t k = 0; k < completed_count; ++k) {
            const std::uint32_t i = completed[k];
            SlotRecord& s = task.ring[i];
            const auto offer = task.registry.offer(s.generation, i);
            if (offer.published) {
                s.published = true;
                ++task.ready;
                if (offer.replaced) {
                    SlotRecord& old = task.ring[*offer.replaced];
                    old.published = false;
                    if (old.state == SlotState::Ready) {
                        recycle(task, *offer.replaced);
                    }
                }
            } else {
                ++task.superseded;
                recycle(task, i);
            }
        }
    }
    if (!lost_reason.empty()) {
        lose_worker(worker, lost_reason);
    }
}

void CompletionTracker::lose_worker(Worker& worker, const std::string& reason) noexcept {
    if (!worker.mark_lost(reason)) {
        return;
    }
    const std::size_t count = m_tasks.count();
    for (std::size_t t = 0; t < count; ++t) {
        Task& task = m_tasks[t];
        if (task.worker != &worker) {
            continue;
        }
        std::lock_guard lock(task.mutex);
        for (std::uint32_t i = 0; i < task.ring.size(); ++i) {
            const SlotState s = task.ring[i].state;
            // Ready and Leased slots hold finished outputs on the primary: they stay readable.
            if (s == SlotState::Free || in_flight(s)) {
                (void)task.ring.apply(i, SlotEvent::Fail);
            }
        }
    }
    worker.mark_retired();
}

bool CompletionTracker::drain() noexcept {
    bool reached = true;
    const auto timeout = this->timeout();
    const std::size_t count = m_tasks.count();
    for (std::size_t t = 0; t < count; ++t) {
        Task& task = m_tasks[t];
        if (!task.prepared()) {
            continue; // never ran a job
        }
        std::uint64_t primary_value = 0;
        std::uint64_t work_value = 0;
        std::uint64_t release_value = 0;
        {
            std::lock_guard lock(task.mutex);
            for (std::uint32_t i = 0; i < task.ring.size(); ++i) {
                const SlotRecord& s = task.ring[i];
                primary_value = std::max(primary_value, s.primary_value);
                work_value = std::max(work_value, s.work_value);
                release_value = std::max(release_value, s.release_value);
            }
        }
        auto wait = [&](VkDevice device, VkSemaphore semaphore, std::uint64_t value) {
            if (value == 0 || semaphore == VK_NULL_HANDLE) {
                return;
            }
            VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            info.semaphoreCount = 1;
            info.pSemaphores = &semaphore;
            info.pValues = &value;
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
            const VkResult r =
                vkWaitSemaphores(device, &info, static_cast<std::uint64_t>(ns.count()));
            if (r != VK_SUCCESS) {
                reached = false;
                spdlog::warn("task {}: shutdown wait ended with {}", task.desc.name,
                             tandem::to_string(r));
            }
        };
        // Lost workers too: a submit reported as failed may still have reached the GPU; on a
        // really lost device the wait returns VK_ERROR_DEVICE_LOST at once.
        wait(task.worker->device().handle(), task.worker->work_timeline().handle(),
             std::max(work_value, task.worker->last_work_value()));
        if (task.transport && !task.transport->failed()) {
            wait(m_primary.handle(), task.transport->primary_semaphore(), primary_value);
        }
        wait(m_primary.handle(), m_reads.handle(), release_value);
    }
    return reached;
}

} // namespace tandem::detail
