#include "runtime/worker.hpp"

#include <algorithm>
#include <chrono>

#include "core/atomic_max.hpp"
#include "core/cpu.hpp"
#include "core/log.hpp"
#include "runtime/retry.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

Worker::Worker(const Device& device, std::uint32_t index, JobFn on_job, JobFn on_drop,
               JobFn on_complete, bool spin)
    : m_device(device), m_index(index), m_on_job(std::move(on_job)), m_on_drop(std::move(on_drop)),
      m_on_complete(std::move(on_complete)), m_spin(spin),
      m_work(device, device.label() + " work timeline") {
    if (index != 0) {
        m_reads.emplace(device, device.label() + " application reads timeline");
    }
    // Without `spin` they sleep at once, with a tight timer slack (core/cpu.hpp).
    m_thread = start_waiting_thread(!spin, [this] { run(); });
    m_transfer_thread = start_waiting_thread(!spin, [this] { run_transfers(); });
    m_watch_thread = start_waiting_thread(!spin, [this] { run_watch(); });
}

Worker::~Worker() {
    stop();
}

bool Worker::reads_reached(std::uint64_t value) const noexcept {
    if (value == 0 || m_reads_seen.load(std::memory_order_relaxed) >= value) {
        return true;
    }
    if (!m_reads) {
        return false;
    }
    std::uint64_t now = 0;
    if (m_reads->value(now) != VK_SUCCESS) {
        return true; // a lost device: nothing waits on it any more
    }
    raise_to(m_reads_seen, now);
    return now >= value;
}

void Worker::enqueue(const WorkerJob& job) {
    enqueue(job, [] { return false; });
}

void Worker::wake() noexcept {
    {
        // Taken and let go so that the job thread is either asleep or about to see the job.
        std::lock_guard lock(m_mutex);
    }
    m_cv.notify_one();
}

std::size_t Worker::queued_jobs(std::span<WorkerJob> out) const {
    std::lock_guard lock(m_mutex);
    std::size_t n = 0;
    for (auto it = m_queue.begin(); it != m_queue.end() && n < out.size(); ++it) {
        if (m_hold.count({it->instance, it->generation}) == 0) {
            out[n++] = *it;
        }
    }
    return n;
}

void Worker::note_submitted(const WorkerJob& job, std::uint64_t work_value) {
    {
        std::lock_guard lock(m_mutex);
        m_submitted.emplace_back(work_value, job);
    }
    m_watch_cv.notify_one();
}

void Worker::enqueue_transfer(const WorkerJob& job, std::function<void()> step) {
    bool dropped = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_stop) {
            dropped = true;
        } else {
            m_transfers.push_back(TransferStep{job, std::move(step)});
            m_transfer_posts.fetch_add(1, std::memory_order_release);
        }
    }
    if (dropped) {
        m_on_drop(*this, job);
        return;
    }
    m_transfer_cv.notify_one();
}

void Worker::hold(const TaskInstance* instance, std::uint64_t generation) {
    std::lock_guard lock(m_mutex);
    m_hold.emplace(instance, generation);
}

std::chrono::milliseconds
Worker::allowance(std::chrono::milliseconds timeout,
                  std::chrono::milliseconds first_job_timeout) const noexcept {
    using std::chrono::milliseconds;
    const double longest_ms = m_longest_job_us.load(std::memory_order_relaxed) / 1000.0;
    milliseconds out = std::max(timeout, milliseconds(static_cast<std::int64_t>(4.0 * longest_ms)));
    if (unmeasured.load(std::memory_order_relaxed) > 0) {
        out = std::max(out, first_job_timeout);
    }
    return out;
}

void Worker::note_job_time(double us) noexcept {
    raise_to(m_longest_job_us, us);
}

void Worker::release_held() {
    {
        std::lock_guard lock(m_mutex);
        m_hold.clear();
        for (auto it = m_held.rbegin(); it != m_held.rend(); ++it) {
            m_queue.push_front(*it);
        }
        m_job_posts.fetch_add(1, std::memory_order_release);
        m_held.clear();
    }
    m_cv.notify_one();
}

std::string Worker::lost_reason() const {
    std::lock_guard lock(m_mutex);
    return m_lost_reason;
}

bool Worker::mark_lost(const std::string& reason) {
    {
        std::lock_guard lock(m_mutex);
        if (m_lost.load(std::memory_order_relaxed)) {
            return false;
        }
        m_lost_reason = reason;
        // Release: a reader that sees lost() also sees the reason (it locks m_mutex anyway).
        m_lost.store(true, std::memory_order_release);
    }
    log_warn("runtime", "{} is lost: {}", label(), reason);
    return true;
}

void Worker::set_activity(Thread thread, const char* what, std::uint64_t generation) noexcept {
    Activity& a = m_activity[static_cast<int>(thread)];
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    a.since_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                     std::memory_order_relaxed);
    a.generation.store(generation, std::memory_order_relaxed);
    a.what.store(what, std::memory_order_release);
}

std::string Worker::activity() const {
    std::size_t queued[2] = {0, 0};
    {
        std::lock_guard lock(m_mutex);
        queued[0] = m_queue.size();
        queued[1] = m_transfers.size();
    }
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    std::string out;
    for (int i = 0; i < 2; ++i) {
        const Activity& a = m_activity[i];
        const char* what = a.what.load(std::memory_order_acquire);
        const std::uint64_t generation = a.generation.load(std::memory_order_relaxed);
        const auto since = std::chrono::nanoseconds(a.since_ns.load(std::memory_order_relaxed));
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count();
        out += i == 0 ? "job thread: " : "; transfer thread: ";
        out += what;
        if (generation != 0) {
            out += " of generation " + std::to_string(generation);
        }
        out += " for " + std::to_string(ms) + " ms, " + std::to_string(queued[i]) + " queued";
    }
    return out;
}

void Worker::stop() {
    std::deque<WorkerJob> dropped;
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        dropped.swap(m_queue);
        m_job_posts.fetch_add(1, std::memory_order_release);
        m_transfer_posts.fetch_add(1, std::memory_order_release);
        for (const auto& job : m_held) {
            dropped.push_back(job);
        }
        m_held.clear();
    }
    m_cv.notify_all();
    m_transfer_cv.notify_all();
    m_watch_cv.notify_all();
    if (m_watch_thread.joinable()) {
        m_watch_thread.join();
    }
    if (m_thread.joinable()) {
        m_thread.join();
    }
    // The job thread has stopped, so nothing is added to the transfer queue any more.
    if (m_transfer_thread.joinable()) {
        m_transfer_thread.join();
    }
    {
        std::lock_guard lock(m_mutex);
        for (const auto& t : m_transfers) {
            dropped.push_back(t.job);
        }
        m_transfers.clear();
    }
    for (const auto& job : dropped) {
        m_on_drop(*this, job);
    }
}

template <typename Queue>
bool Worker::wait_for_work(std::unique_lock<std::mutex>& lock, const Queue& queue,
                           std::condition_variable& cv, const std::atomic<std::uint64_t>& posts) {
    if (!m_stop && queue.empty() && m_spin) {
        // Poll briefly before sleeping: a job that follows within k_spin needs no wake-up.
        const std::uint64_t seen = posts.load(std::memory_order_relaxed);
        lock.unlock();
        const auto until = std::chrono::steady_clock::now() + k_spin;
        while (posts.load(std::memory_order_acquire) == seen &&
               std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
        }
        lock.lock();
    }
    cv.wait(lock, [&] { return m_stop || !queue.empty(); });
    return !m_stop;
}

void Worker::run() {
    for (;;) {
        WorkerJob job;
        set_activity(Thread::Jobs, "idle");
        {
            std::unique_lock lock(m_mutex);
            if (!wait_for_work(lock, m_queue, m_cv, m_job_posts)) {
                return;
            }
            job = m_queue.front();
            m_queue.pop_front();
            if (m_hold.count({job.instance, job.generation}) != 0) {
                m_held.push_back(job);
                continue;
            }
        }
        m_on_job(*this, job);
    }
}

void Worker::run_transfers() {
    for (;;) {
        TransferStep next;
        set_activity(Thread::Transfers, "idle");
        {
            std::unique_lock lock(m_mutex);
            if (!wait_for_work(lock, m_transfers, m_transfer_cv, m_transfer_posts)) {
                return; // stop() drops what is left
            }
            next = std::move(m_transfers.front());
            m_transfers.pop_front();
        }
        next.step();
    }
}

bool Worker::poll_completions() noexcept {
    std::uint64_t value = 0;
    const VkResult r = m_work.value(value);
    if (r != VK_SUCCESS) {
        m_watch_result.store(r, std::memory_order_release);
        return false;
    }
    // A job is noted after its submit: one whose value the last poll saw reached already is
    // reported now, though the value did not move (else only once a later job moved it).
    const std::uint64_t before = m_completed_work.load(std::memory_order_relaxed);
    value = std::max(value, before);
    // Report the jobs first, then publish the value: a thread that sees the value (acquire)
    // also sees what on_complete did for the jobs behind it.
    bool reported = false;
    for (;;) {
        WorkerJob job;
        {
            std::lock_guard lock(m_mutex);
            if (m_submitted.empty() || m_submitted.front().first > value) {
                break;
            }
            job = m_submitted.front().second;
            m_submitted.pop_front();
        }
        m_on_complete(*this, job);
        reported = true;
    }
    if (value == before) {
        return reported;
    }
    m_progress_at.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                        std::memory_order_relaxed);
    m_completed_work.store(value, std::memory_order_release);
    return true;
}

void Worker::run_watch() {
    // Polls the counter rather than blocking in vkWaitSemaphores (a blocked thread can wake
    // milliseconds late, and on the H200s it slowed other work on the device); the sleep grows
    // while nothing completes and drops back when something does. Its cap grows with the time
    // nothing completed (backed_off): a job in flight for long costs a wake-up a millisecond.
    auto sleep = k_first_progress_poll;
    auto progress_at = std::chrono::steady_clock::now();
    for (;;) {
        {
            std::unique_lock lock(m_mutex);
            const auto watching = [&] {
                return m_stop || (!m_submitted.empty() &&
                                  m_watch_result.load(std::memory_order_relaxed) == VK_SUCCESS);
            };
            if (!watching()) {
                m_watch_cv.wait(lock, watching);
                progress_at = std::chrono::steady_clock::now(); // a job to watch from now
            }
            if (m_stop) {
                return;
            }
        }
        if (poll_completions()) {
            sleep = k_first_progress_poll;
            progress_at = std::chrono::steady_clock::now();
            continue;
        }
        std::this_thread::sleep_for(sleep);
        sleep = std::min(sleep * 2, backed_off(k_busy_progress_poll,
                                               std::chrono::steady_clock::now() - progress_at));
    }
}

void Worker::observe_completions() noexcept {
    (void)poll_completions();
}

Worker& WorkerSet::place(const Placement& p, const std::vector<Adapter>& adapters) const {
    switch (p.kind) {
    case PlacementKind::Primary:
        return *m_all[0];
    case PlacementKind::Auto:
        // Reached only for an instance the scheduler did not place: as "worker".
    case PlacementKind::Worker: {
        if (p.worker) {
            if (*p.worker + 1 >= m_all.size()) {
                throw Error(ErrorCategory::InvalidArgument,
                            "Placement '" + p.to_string() + "' names no worker",
                            "This runtime has " + std::to_string(m_all.size() - 1) +
                                " worker(s): use worker:0 to worker:" +
                                std::to_string(m_all.size() > 1 ? m_all.size() - 2 : 0) +
                                ", primary or auto");
            }
            return *m_all[*p.worker + 1];
        }
        // The worker with the fewest tasks, fixed; the primary when there is none.
        Worker* best = m_all[0].get();
        for (std::size_t i = 1; i < m_all.size(); ++i) {
            Worker* w = m_all[i].get();
            if (w->lost()) {
                continue;
            }
            if (best == m_all[0].get() || w->task_count.load() < best->task_count.load()) {
                best = w;
            }
        }
        return *best;
    }
    case PlacementKind::Device:
        break;
    }
    for (std::uint32_t index : match_adapters(adapters, p.device)) {
        if (Worker* w = of(index)) {
            return *w;
        }
    }
    throw Error(ErrorCategory::InvalidArgument,
                "Placement '" + p.to_string() + "' matches no device of this runtime",
                "Use auto, primary, worker, worker:N or a selector of one of its devices");
}

Worker* WorkerSet::of(std::uint32_t adapter) const noexcept {
    for (const auto& w : m_all) {
        if (w->device().info().index == adapter) {
            return w.get();
        }
    }
    return nullptr;
}

std::vector<const Worker*> WorkerSet::workers() const {
    std::vector<const Worker*> out;
    for (std::size_t i = 1; i < m_all.size(); ++i) {
        out.push_back(m_all[i].get());
    }
    return out;
}

} // namespace tandem::detail
