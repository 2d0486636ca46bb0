// TaskInstance: one task's objects on one device: the description it was prepared with, the
// worker it runs on, its workload and transport, the GPU resources of each slot, the slot ring,
// the output registry and its statistics. A task (runtime/task.hpp) owns one instance per device
// it runs or ran on; a lease names the instance it came from.
//
// Preparation: the workload, transport, command pool, job timer and slot resources are made on
// the runtime's preparation thread (TaskPreparer) after the instance was created; `phase` says
// when they exist. Only after an acquire load of Ready may another thread touch them; until then
// the instance answers submits with Preparing and the pump passes it over.
//
// Threads and lifetime: `mutex` guards ring, registry, counters and samples; a slot's GPU
// resources are touched only by whoever owns the slot's state (the worker's threads while a job
// is in flight, nobody after). The worker's threads touch an instance only while one of its
// jobs is held by them (host_jobs), and their last touch is under `mutex`: so once they hold no
// job, no slot is in flight, no lease is held, the worker's watcher has reported its last job
// and the preparation is over, nothing on the host refers to it any more (quiescent()), and the
// runtime hands it to the RetireList, which destroys it once the GPU passed its retire points.
//
// Lock order: the owning task's mutex, then an instance's mutex, then a worker's queue lock;
// never the other way round.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/job_timer.hpp"
#include "core/resources.hpp"
#include "runtime/chain_feeds.hpp"
#include "runtime/compute_copy.hpp"
#include "runtime/gpu_times.hpp"
#include "runtime/input_sources.hpp"
#include "runtime/latency.hpp"
#include "runtime/output_registry.hpp"
#include "runtime/slot_ring.hpp"
#include "runtime/slot_transport.hpp"
#include "runtime/worker.hpp"
#include "sync/retire_list.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/task.hpp"
#include "workloads/workload.hpp"

namespace tandem::detail {

struct Task;
struct TaskInstance;

struct SlotResources {
    Image worker_image;  // empty when the transport shares images
    Image primary_image; // what leases point at
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkImageLayout primary_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    std::vector<std::byte> snapshot;
    // The layout its hand-off leaves the written image in, where the readers on the device read
    // it: a chain's consumer there, a lease on the worker (under the mutex).
    VkImageLayout handed_off_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    [[nodiscard]] const Image& written() const noexcept {
        return worker_image.image ? worker_image : primary_image;
    }
};

// One input (TaskDesc::inputs) of one slot: Tandem's copy of the application's image on the
// primary and, on another device, where it arrives. The application's thread writes `source`
// (the submit's copy, under the task's mutex) while the slot is Recording; the worker's job
// thread hands it to the input's link; nobody else touches them.
struct InputSlot {
    Image source; // on the primary: the submit copies the application's image here
    Image target; // on the task's device (empty on the primary, where the job reads `source`)
    // A buffer input: what the job reads, on the task's device. On the primary the submit
    // copies the application's bytes here (no images); elsewhere they travel in `source` and
    // `target` (RGBA8) and the job's commands first copy `target` into it (record_input_prelude).
    Buffer buffer;
    VkImageLayout target_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    std::uint64_t source_free = 0; // the link's source timeline: its last read of `source` done
    std::uint64_t arrived = 0;     // the link's destination timeline: this job's input arrived
    bool to_send = false;          // copied for the slot's job, not yet handed to the link
    // Lent and signalled by the application (LoanSignal::job_waits): the layout its submit named,
    // which the job's side changes (the link's first band, or the job on the primary).
    VkImageLayout lent_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    // A compute copy's view of the application's image (InstanceInputs::compute): made by the
    // slot's last copy, destroyed by its next (which runs once the last one ran) or with the
    // instance.
    Handle<VkImageView> application_view;
    [[nodiscard]] const Image& read() const noexcept { return target.image ? target : source; }
};

// What a slot's input batch was last recorded for, when every input was lent
// (InputCopier::copy): the layouts the application left the images in. Submitted again while
// they are alike.
struct RecordedBatch {
    bool all_lent = false;
    std::vector<VkImageLayout> layouts;
};

// A slot's loan semaphore (InputLoan::written): the application signals it once its writes of
// the slot's lent images finish. `lent` is the value the slot's current or last loan names;
// `named` the newest a submit named (the instance is freed only once it was reached: the job
// or link that waits for it may have failed before submitting); `job_waits` says the slot's
// job waits for `named` itself, its submit having submitted nothing (InputCopier::copy).
struct LoanSignal {
    TimelineSemaphore semaphore;
    std::uint64_t lent = 0;
    std::uint64_t named = 0;
    bool job_waits = false;
};

// A task instance's inputs. `links` carry them from the primary to the instance's device, one
// per input (none on the primary): SlotTransports whose "worker" is the primary and whose
// "primary" is the task's device. The copies at submit are recorded into `cmds` (one per slot,
// from `pool` on the primary's main family) on the application's thread, under the task's
// mutex, and signal the runtime's input timeline to `copied[slot]`.
struct InstanceInputs {
    std::vector<std::vector<InputSlot>> slots; // [slot][application input]
    // Each application input's index in TaskDesc::inputs (chained ones have no copies here).
    std::vector<std::size_t> declared;
    // Each application input's bytes when it is a buffer (TaskInputDesc::buffer_size), else 0.
    std::vector<VkDeviceSize> buffer_sizes;
    // Per application input: its copy at submit as a compute dispatch (runtime/compute_copy.hpp;
    // one descriptor set per slot), or null where it is the copy command.
    std::vector<std::unique_ptr<ComputeCopy>> compute;
    // Declared after the images they move: destroyed before them.
    std::vector<std::unique_ptr<SlotTransport>> links;
    CommandPool pool;
    std::vector<VkCommandBuffer> cmds;
    std::vector<RecordedBatch> recorded; // per slot: what cmds[slot] holds
    std::unique_ptr<JobTimer> timer;     // the copies' GPU time on the primary (null: untimed)
    std::vector<std::uint64_t> copied;
    // Per slot, a deferred copy's outcome (InputCopier on its own thread): written before the
    // copier publishes the value as submitted, read by the job thread after.
    std::unique_ptr<std::atomic<VkResult>[]> copy_results;
    std::uint64_t last_copy = 0; // newest input timeline value of this instance's copies
    // Slots lent to the application (Runtime::lend_inputs): each Lent until a submit names
    // its images or the loan is returned. Under the task's mutex.
    struct Loan {
        std::uint64_t ticket = 0;
        std::uint32_t slot = 0;
    };
    std::vector<Loan> loans;
    // Per slot; none for a task without an image input of the application's (nothing to lend).
    std::vector<LoanSignal> signals;
    [[nodiscard]] bool empty() const noexcept { return slots.empty() || slots.front().empty(); }
    // True while `slot`'s job waits for its loan semaphore itself (its submit submitted nothing).
    [[nodiscard]] bool signalled(std::uint32_t slot) const noexcept {
        return slot < signals.size() && signals[slot].job_waits;
    }
    [[nodiscard]] std::string path_name() const {
        return links.empty() ? std::string("same-device") : links.front()->path_name();
    }
    // True when the instance's device reads every image input's link in place (its staging,
    // TransferDesc::read_in_place).
    [[nodiscard]] bool read_in_place() const noexcept {
        return !links.empty() && std::all_of(links.begin(), links.end(), [](const auto& link) {
            return link->reads_in_place();
        });
    }
};

// How its jobs are timed on the GPU (JobTimer); `timer` is null where the worker's main queue has
// no timestamps. On a CPU device it times the first k_first_timed_jobs, then the first job
// recorded once `period` passed since the last timed one (RuntimeOptions::
// cpu_device_timing_period; zero elsewhere: every job), and every trial job: set by the
// preparation. The job thread counts the application's jobs it recorded and when it last timed
// one.
struct JobTiming {
    static constexpr std::uint64_t k_first_timed_jobs = 4;
    std::unique_ptr<JobTimer> timer;
    std::chrono::milliseconds period{0};
    std::uint64_t recorded_jobs = 0;
    std::chrono::steady_clock::time_point last_timed{};
    // Whether the job thread times the job it records at `now` (counted in recorded_jobs).
    [[nodiscard]] bool time_next(bool trial_job,
                                 std::chrono::steady_clock::time_point now) noexcept;
};

// What an instance's jobs came to, for TaskStats and the scheduler. Under its mutex.
struct InstanceCounters {
    std::uint64_t accepted = 0;    // the application's jobs taken here
    std::uint64_t ready = 0;       // generations published (became the newest output)
    std::uint64_t superseded = 0;  // completed after a newer generation was published
    std::uint64_t failed_jobs = 0; // jobs whose workload failed
    std::uint64_t trial_jobs = 0;  // trial jobs taken here
    std::uint64_t trials_done = 0; // trial jobs completed
    // From each job's request: its work submitted, its output queued for the transport, the
    // worker's work done, the output ready on the primary.
    LatencySamples worker_submit_us;
    LatencySamples transfer_queued_us;
    LatencySamples worker_done_us;
    LatencySamples ready_us;
    GpuTimes gpu; // the workload's GPU time (JobTiming::timer)
    // Jobs that completed here: published, superseded or trials.
    [[nodiscard]] std::uint64_t completed() const noexcept {
        return ready + superseded + trials_done;
    }
};

enum class InstancePhase { Preparing, Ready, Failed };

struct TaskInstance {
    TaskInstance(std::uint64_t instance_serial, Task& task, const TaskDesc& instance_desc,
                 Worker& instance_worker)
        : serial(instance_serial), owner(&task), desc(instance_desc), worker(&instance_worker),
          ring(instance_desc.slots) {}
    ~TaskInstance();
    TaskInstance(const TaskInstance&) = delete;
    TaskInstance& operator=(const TaskInstance&) = delete;

    const std::uint64_t serial; // Lease::instance: unique within the runtime
    Task* const owner;          // outlives every use of it by the runtime's threads
    const TaskDesc desc;        // the shape it was prepared with
    Worker* const worker;
    [[nodiscard]] std::uint32_t device() const noexcept { return worker->device().info().index; }

    // Set once by the preparation thread (release), after everything below it wrote.
    std::atomic<InstancePhase> phase{InstancePhase::Preparing};
    // Failed: why, as a sentence, and the exception a blocking register_task rethrows. Written
    // before phase becomes Failed.
    std::string preparation_error;
    std::exception_ptr preparation_exception;
    [[nodiscard]] bool prepared() const noexcept {
        // Acquire: pairs with the preparation thread's release of Ready.
        return phase.load(std::memory_order_acquire) == InstancePhase::Ready;
    }
    [[nodiscard]] bool preparing() const noexcept {
        return phase.load(std::memory_order_acquire) == InstancePhase::Preparing;
    }

    // The transport failed for its path, not for the worker's device (LinkFailures): its slots
    // retired but for its published output, which stays readable. Guarded by mutex, written
    // before the flag's release. Its task is prepared again on the same device with the next
    // path (LinkFallback).
    std::atomic<bool> link_failed{false};
    std::string link_error;

    bool same_device = false;
    // TaskDesc::keep_output_on_worker on a worker: no hand-off to the primary; an output is
    // published once its work completed, and leased on the worker alone.
    [[nodiscard]] bool keeps_output_on_worker() const noexcept {
        return desc.keep_output_on_worker && !same_device;
    }
    // TaskDesc::workload's factory, found in the runtime's WorkloadTable when the instance was
    // made (empty with a TaskDesc::factory); the preparation makes `workload` from one or the
    // other.
    WorkloadFactory named_workload;
    std::unique_ptr<Workload> workload;
    std::unique_ptr<SlotTransport> transport;
    JobTiming timing; // set by the preparation; then the job thread's
    CommandPool pool; // on the worker's main family; worker thread only
    std::vector<SlotResources> slots;
    InstanceInputs inputs; // the application's inputs of TaskDesc::inputs (empty without)
    // One per declared input, as the job thread reads it (runtime/input_sources.hpp). After
    // `inputs`, whose links and images its sources use: destroyed first.
    InputSources sources;
    // Its output sent to the workers where chains' consumers of it run (runtime/chain_feeds.hpp).
    OutputFeeds feeds;
    std::uint32_t trace_worker_queue = 0;
    std::uint32_t trace_transfer_queue = 0;
    // The newest value of the worker's work timeline its jobs signal (the job thread writes it
    // before the job's slot leaves Recording; read once quiescent).
    std::uint64_t last_work_value = 0;

    mutable std::mutex mutex;
    SlotRing ring;
    OutputRegistry registry;
    InstanceCounters counts;
    // Jobs taken and not yet let go by the worker's job and transfer threads (each job's last
    // step on them ends it under `mutex`): an instance is not quiescent while one is held.
    std::uint32_t host_jobs = 0;
    // The first job: 0 none accepted, 1 accepted and not completed (counted in the worker's
    // Worker::unmeasured), 2 one completed (the worker's allowance knows its length).
    int first_job = 0;

    // The scheduler's view (its schedule lock only).
    bool trial = true;                 // never was active: only trial jobs ran here
    std::uint64_t activated_after = 0; // newest generation when it became active: older ones
                                       // (none: trial jobs publish nothing) are not shown
    std::uint64_t completed_seen = 0;  // ready + superseded + trials_done at the last observation
    std::uint32_t trials_submitted = 0;

    // Nothing on the host refers to it: preparation over, no slot in flight, no lease held, no
    // chain's consumer holding one of its slots nor a hold of its own on a producer's, and the
    // worker's watcher reported its last job (or the worker is lost: then it waits for the
    // runtime's destruction). Caller holds mutex.
    [[nodiscard]] bool quiescent() const noexcept;
    // Leaving use: quiesces the transport (SlotTransport::quiesce) and returns the timeline
    // values after which the GPU no longer uses it (its work, its transport, the application's
    // reads of its leases: `reads` is the primary timeline they signal; its input links and the
    // copies of its inputs, which signal `input_copies`). Once quiescent() (or at
    // shutdown, which lets the hand-offs under way go on for up to `hand_off_wait`); caller
    // holds mutex.
    [[nodiscard]] std::vector<RetirePoint>
    retire_points(const TimelineSemaphore& reads, const TimelineSemaphore& input_copies,
                  std::chrono::milliseconds hand_off_wait = std::chrono::milliseconds(0));
    // The devices whose queues its batches ran on.
    [[nodiscard]] std::vector<const Device*> retire_devices(const Device& primary) const;
};

// Microseconds from `from` to `to`.
[[nodiscard]] inline double micros(Clock::time_point from, Clock::time_point to) noexcept {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

// The fault-injection context of a worker's job submissions (force_device_lost).
[[nodiscard]] inline std::string worker_submit_context(const Worker& worker) {
    return "worker submit " + worker.label();
}

// Ready or Kept -> Free, or Retired when the worker is lost or the instance's link failed. A
// slot a chain's consumer still reads, or whose generation a matching consumer has not read
// yet, is Kept until the completion pass finds it free of them. Caller holds
// the instance's task's mutex and instance.mutex.
void recycle(TaskInstance& instance, std::uint32_t slot) noexcept;

} // namespace tandem::detail
