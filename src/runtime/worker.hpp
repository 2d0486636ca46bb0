// Worker: one device that runs tasks, with two submission threads. The application thread only
// queues jobs (submit() never records or submits GPU work itself); the worker's job thread
// records each job's commands and submits them, then hands the job's transfer to the worker's
// transfer thread, which submits it. So recording and submitting job n+1 overlaps submitting
// the transfer of job n, tasks on different workers run concurrently, and the app-thread cost
// stays a lock and a push. Both queues are FIFO, so each task's transfers are submitted in the
// order of its jobs. The job thread may look at the jobs queued behind the one it holds
// (queued_jobs) to send their inputs ahead; it still takes them in order.
//
// A third thread, the completion watcher, is the only one that reads the worker's work timeline:
// while submitted work is outstanding it polls the counter (never a blocking wait), publishes
// the completed value as a plain atomic (completed_work()) and runs `on_complete` for each job
// whose work it saw complete. So the runtime's pump() and everything else on the application
// thread learn of worker progress from host memory alone, and never call into, wait on or lock
// against the worker's device, however slow it is.
//
// A worker is *lost* once its device reported VK_ERROR_DEVICE_LOST, a submit failed, its
// transfer failed, or it made no progress for longer than its allowance (allowance()); lost is
// final. Test hooks hold a job back (to force out-of-order completion) and release it.
//
// Threads: enqueue/hold/release_held/mark_lost from any thread; the job callback runs on the
// job thread, enqueue_transfer and note_submitted from it, transfer steps on the transfer
// thread, `on_complete` on the watcher thread. stop() (and the destructor) drop queued jobs and
// transfer steps, hand each one's job to `on_drop`, and join the three threads;
// observe_completions() then reports what completed after the watcher stopped.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/placement.hpp"

namespace tandem::detail {

struct TaskInstance;

struct WorkerJob {
    TaskInstance* instance = nullptr;
    std::uint32_t slot = 0;
    std::uint64_t generation = 0;
};

class Worker {
public:
    using JobFn = std::function<void(Worker&, const WorkerJob&)>;

    // `index`: 0 for the primary's own context, 1.. for worker devices.
    // `spin`: whether the threads may poll briefly before sleeping (a machine with cores to
    // spare and no CPU Vulkan device to leave them to).
    Worker(const Device& device, std::uint32_t index, JobFn on_job, JobFn on_drop,
           JobFn on_complete, bool spin);
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    [[nodiscard]] const Device& device() const noexcept { return m_device; }
    [[nodiscard]] std::uint32_t index() const noexcept { return m_index; }
    [[nodiscard]] const std::string& label() const noexcept { return m_device.label(); }

    // Timeline signalled by every worker-queue submit of this worker (worker thread only).
    [[nodiscard]] TimelineSemaphore& work_timeline() noexcept { return m_work; }
    [[nodiscard]] std::uint64_t next_work_value() noexcept { return ++m_work_value; }
    // The last work value handed out; read only after stop() joined the thread.
    [[nodiscard]] std::uint64_t last_work_value() const noexcept { return m_work_value; }
    // A worker device's timeline that the application signals once its reads of the leases it
    // took there end (Runtime::acquire_on_worker, DeviceVulkan::reads_timeline); Tandem waits on
    // it and never signals it. Null for the primary's context, whose leases are all read on the
    // primary timeline.
    [[nodiscard]] const TimelineSemaphore* reads_timeline() const noexcept {
        return m_reads ? &*m_reads : nullptr;
    }
    // Whether reads_timeline() has reached `value`: from the value seen last, else read now
    // (any thread, never blocks). A device that answers an error counts as reached: it is lost,
    // and what it held retires without waiting for it.
    [[nodiscard]] bool reads_reached(std::uint64_t value) const noexcept;

    void enqueue(const WorkerJob& job);
    // Queues `job`, waking the job thread unless `woken_later()`, asked under the queue's lock,
    // says another thread will call wake() once the job can start: the input copier's thread,
    // whose batch the job waits for, so that the application's thread makes no wake-up of its
    // own. Asked under the lock, so a wake() that came first is seen (the answer is then false).
    // Once stop() began, the job goes to `on_drop` at once, as the jobs queued then did.
    template <class WokenLater>
    void enqueue(const WorkerJob& job, WokenLater&& woken_later) {
        bool wake_now = false;
        bool dropped = false;
        {
            std::lock_guard lock(m_mutex);
            dropped = m_stop;
            if (!dropped) {
                m_queue.push_back(job);
                m_job_posts.fetch_add(1, std::memory_order_release);
                wake_now = !woken_later();
            }
        }
        if (dropped) {
            m_on_drop(*this, job); // outside the queue's lock: it takes the task's
            return;
        }
        if (wake_now) {
            m_cv.notify_one();
        }
    }
    // Wakes the job thread for a job queued by enqueue() whose `woken_later` said so.
    void wake() noexcept;
    // Copies the jobs queued behind the one the job thread holds into `out`, from the front,
    // at most out.size() of them, leaving out those held (hold()): the job thread sends their
    // inputs ahead (JobPipeline). They stay queued; any thread.
    [[nodiscard]] std::size_t queued_jobs(std::span<WorkerJob> out) const;
    // Grows whenever a job is queued: the job thread asks queued_jobs() again only once it moved.
    [[nodiscard]] std::uint64_t job_posts() const noexcept {
        // Acquire: pairs with enqueue's release, so the job queued is seen by queued_jobs().
        return m_job_posts.load(std::memory_order_acquire);
    }
    // The job thread submitted `job`'s work, signalling work_timeline() at `work_value`: the
    // watcher reports it to `on_complete` once the timeline reaches that value.
    void note_submitted(const WorkerJob& job, std::uint64_t work_value);
    // The highest work_timeline() value the watcher has seen completed. Host memory only: any
    // thread, never touches the device.
    [[nodiscard]] std::uint64_t completed_work() const noexcept {
        // Acquire: pairs with the watcher's release, so what on_complete wrote is visible too.
        return m_completed_work.load(std::memory_order_acquire);
    }
    // VK_SUCCESS, or what the device answered when the watcher read the timeline (the worker
    // is then as good as lost; the runtime reports it).
    // When the watcher last saw the work timeline advance (steady clock; the clock's epoch
    // before the first time, so a job's own request time counts). A worker is overdue only
    // after its timeout without progress.
    [[nodiscard]] std::chrono::steady_clock::time_point last_progress() const noexcept {
        return std::chrono::steady_clock::time_point(
            std::chrono::steady_clock::duration(m_progress_at.load(std::memory_order_relaxed)));
    }
    [[nodiscard]] VkResult watch_result() const noexcept {
        return m_watch_result.load(std::memory_order_acquire);
    }
    // After stop(): reads the timeline once on the calling thread and reports the jobs whose
    // work completed since the watcher stopped (shutdown, once the work drained).
    void observe_completions() noexcept;
    // The second half of a job: runs on the transfer thread, in the order enqueued.
    void enqueue_transfer(const WorkerJob& job, std::function<void()> step);
    // Test hooks: jobs of (instance, generation) wait in a side list until release_held().
    void hold(const TaskInstance* instance, std::uint64_t generation);
    void release_held();

    [[nodiscard]] bool lost() const noexcept { return m_lost.load(std::memory_order_acquire); }
    // stop() has begun: what the job thread waits for (an input that was to arrive) may never
    // come, so its polls end and the job is dropped.
    [[nodiscard]] bool stopping() const noexcept { return m_stop.load(std::memory_order_acquire); }
    [[nodiscard]] std::string lost_reason() const;
    // Marks the worker lost; true for the first caller only.
    bool mark_lost(const std::string& reason);
    // Set by the runtime once every slot of the lost worker's tasks has been retired.
    void mark_retired() noexcept { m_retired.store(true, std::memory_order_release); }
    [[nodiscard]] bool retired() const noexcept {
        return m_retired.load(std::memory_order_acquire);
    }

    std::atomic<std::uint32_t> task_count{0};

    // Slow is not lost. How long the worker may go without progress while work waits on it:
    // the larger of `timeout`, 4 times the longest job it was measured to need, and, while a
    // task's first job on it is unfinished (pipeline compilation, uploads: nothing measured
    // yet), `first_job_timeout`.
    [[nodiscard]] std::chrono::milliseconds
    allowance(std::chrono::milliseconds timeout,
              std::chrono::milliseconds first_job_timeout) const noexcept;
    // A job of `us` microseconds from its submission to its completion being seen.
    void note_job_time(double us) noexcept;
    // Instances whose first job on this worker is accepted and not completed yet.
    std::atomic<std::int32_t> unmeasured{0};

    // What each of the worker's threads is doing (a static string such as "submitting the
    // transfer"), for which generation, since when; set by that thread, read by any thread.
    enum class Thread { Jobs = 0, Transfers = 1 };
    void set_activity(Thread thread, const char* what, std::uint64_t generation = 0) noexcept;
    // "job thread: idle, 0 queued; transfer thread: submitting the transfer of generation 7711
    // for 5003 ms, 2 queued": what the lost message says about the threads.
    [[nodiscard]] std::string activity() const;

    void stop();

private:
    struct TransferStep {
        WorkerJob job;
        std::function<void()> step;
    };
    struct Activity {
        std::atomic<const char*> what{"starting"};
        std::atomic<std::uint64_t> generation{0};
        std::atomic<std::int64_t> since_ns{0}; // steady_clock
    };
    void run();
    void run_transfers();
    void run_watch();
    // Reads the timeline once; publishes a new completed value and reports the jobs it
    // completes, and those noted since with a value reached before. True when it moved or a
    // job was reported. Watcher thread (or after stop()).
    bool poll_completions() noexcept;
    // Waits (holding `lock` on m_mutex) until `queue` has work or stop() was called; false on
    // stop. Before sleeping it polls `posts` for up to k_spin: a job that follows within that
    // time (as it does when jobs are pipelined) is taken without a wake-up, which costs tens of
    // microseconds on a busy or virtualised machine; an idle worker pays one k_spin of yielding
    // per job. It polls only when the worker was made with `spin`.
    static constexpr std::chrono::microseconds k_spin{50};
    template <typename Queue>
    bool wait_for_work(std::unique_lock<std::mutex>& lock, const Queue& queue,
                       std::condition_variable& cv, const std::atomic<std::uint64_t>& posts);

    const Device& m_device;
    std::uint32_t m_index;
    JobFn m_on_job;
    JobFn m_on_drop;
    JobFn m_on_complete;
    bool m_spin;
    TimelineSemaphore m_work;
    std::uint64_t m_work_value = 0; // worker thread only
    std::optional<TimelineSemaphore> m_reads;
    // The largest reads_timeline() value read; a lower bound of the semaphore's (relaxed).
    mutable std::atomic<std::uint64_t> m_reads_seen{0};

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<WorkerJob> m_queue;
    std::set<std::pair<const TaskInstance*, std::uint64_t>> m_hold;
    std::vector<WorkerJob> m_held;
    // Set under m_mutex (the waits' predicates read it there); stopping() reads it without.
    std::atomic<bool> m_stop{false};
    std::string m_lost_reason;
    // Set once, after m_lost_reason is written under m_mutex; readers of the reason lock.
    std::atomic<bool> m_lost{false};
    std::atomic<bool> m_retired{false};
    Activity m_activity[2];
    std::deque<TransferStep> m_transfers; // guarded by m_mutex
    // Bumped (under m_mutex) whenever a queue gains work or stop() is called; polled while
    // spinning.
    std::atomic<std::uint64_t> m_job_posts{0};
    std::atomic<std::uint64_t> m_transfer_posts{0};
    std::condition_variable m_transfer_cv;
    // Jobs submitted and not yet seen complete, in work-value order (guarded by m_mutex).
    std::deque<std::pair<std::uint64_t, WorkerJob>> m_submitted;
    std::condition_variable m_watch_cv;
    std::atomic<std::uint64_t> m_completed_work{0};
    std::atomic<std::chrono::steady_clock::rep> m_progress_at{0};
    std::atomic<VkResult> m_watch_result{VK_SUCCESS};
    std::atomic<double> m_longest_job_us{0.0};
    std::thread m_thread;
    std::thread m_transfer_thread;
    std::thread m_watch_thread;
};

// The runtime's Workers: the primary's own context first (the tasks placed on the primary), then
// one per worker device, in the order the runtime opened them. Filled at start-up and emptied at
// shutdown; read from any thread in between.
class WorkerSet {
public:
    void add(std::unique_ptr<Worker> worker) { m_all.push_back(std::move(worker)); }
    void clear() noexcept { m_all.clear(); }
    [[nodiscard]] std::size_t size() const noexcept { return m_all.size(); }
    [[nodiscard]] Worker& primary() const noexcept { return *m_all.front(); }
    // Every Worker, the primary's first.
    [[nodiscard]] auto begin() const noexcept { return m_all.begin(); }
    [[nodiscard]] auto end() const noexcept { return m_all.end(); }
    // The worker devices' Workers, in order (the primary's left out).
    [[nodiscard]] std::vector<const Worker*> workers() const;
    // The Worker on adapter `adapter`; null when none.
    [[nodiscard]] Worker* of(std::uint32_t adapter) const noexcept;
    // The Worker a manual placement names, its device selectors matched against `adapters` (auto,
    // for an instance the scheduler did not place: the worker with the fewest tasks, the
    // primary's when there is none). Throws Error when it names none.
    [[nodiscard]] Worker& place(const Placement& placement,
                                const std::vector<Adapter>& adapters) const;

private:
    std::vector<std::unique_ptr<Worker>> m_all;
};

} // namespace tandem::detail
