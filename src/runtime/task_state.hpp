// Task: everything the runtime holds for one registration of a task on one device (a logical
// task that moves has one per device it ran on: runtime/task_router.hpp): its description, the
// worker it runs on, its workload and transport, the GPU resources of each slot, the slot ring, the
// output registry and its statistics. `mutex` guards ring, registry, counters and samples; the
// GPU resources of a slot are touched only by whoever owns the slot's current state (the
// worker thread while Recording, nobody after). Created at registration, destroyed with the
// runtime after its work drained.
//
// Preparation: the workload, transport, command pool, job timer and slot resources are made on
// the runtime's preparation thread (TaskPreparer), after register_task returned the id; `phase`
// says when they exist. Only after an acquire load of Ready may another thread touch them;
// until then the task answers submits with Preparing and the pump and completion thread pass it
// over.
//
// Lock order: a task's mutex may be taken before a worker's queue lock, never after; the
// worker's threads take a task's mutex only while holding nothing else.
#pragma once

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
#include "runtime/gpu_times.hpp"
#include "runtime/latency.hpp"
#include "runtime/output_registry.hpp"
#include "runtime/slot_ring.hpp"
#include "runtime/slot_transport.hpp"
#include "runtime/worker.hpp"
#include "tandem/task.hpp"
#include "workloads/workload.hpp"

namespace tandem::detail {

struct SlotResources {
    Image worker_image;  // empty when the transport shares images
    Image primary_image; // what leases point at
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkImageLayout primary_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    std::vector<std::byte> snapshot;
    [[nodiscard]] const Image& written() const noexcept {
        return worker_image.image ? worker_image : primary_image;
    }
};

enum class TaskPhase { Preparing, Ready, Failed };

// Generation numbers of one logical task, shared by its registrations on every device it ran
// on, so that outputs from different devices compare (runtime/task_router.hpp).
using GenerationCounter = std::atomic<std::uint64_t>;

struct Task {
    Task(TaskId task_id, const TaskDesc& task_desc, Worker& task_worker,
         std::shared_ptr<GenerationCounter> task_generations)
        : id(task_id), desc(task_desc), worker(&task_worker),
          generations(std::move(task_generations)), ring(task_desc.slots) {}

    const TaskId id;
    const TaskDesc desc;
    Worker* const worker;
    const std::shared_ptr<GenerationCounter> generations;
    // Set once by the preparation thread (release), after everything below it wrote; see above.
    std::atomic<TaskPhase> phase{TaskPhase::Preparing};
    // Failed: why, as a sentence, and the exception a blocking register_task rethrows. Written
    // before phase becomes Failed.
    std::string preparation_error;
    std::exception_ptr preparation_exception;
    [[nodiscard]] bool prepared() const noexcept {
        // Acquire: pairs with the preparation thread's release of Ready.
        return phase.load(std::memory_order_acquire) == TaskPhase::Ready;
    }

    // The application's workload threw in record(): the task answers Failed with
    // workload_error from then on (both guarded by mutex). Its worker carries on.
    bool stopped = false;
    std::string workload_error;

    // The transport failed for its path, not for the worker's device (LinkFailures):
    // the task's slots retired but for its published output, which stays readable, and it
    // answers Failed with link_error (guarded by mutex, written before the flag's release).
    // Its logical task is registered again on the same device with the next path.
    std::atomic<bool> link_failed{false};
    std::string link_error;

    bool same_device = false;
    // TaskDesc::workload's factory, found in the runtime's WorkloadTable at registration (empty
    // with a TaskDesc::factory); the preparation makes `workload` from one or the other.
    WorkloadFactory named_workload;
    std::unique_ptr<Workload> workload;
    std::unique_ptr<SlotTransport> transport;
    // Times each job's workload commands; null where the worker's main queue has no timestamps.
    std::unique_ptr<JobTimer> timer;
    CommandPool pool; // on the worker's main family; worker thread only
    std::vector<SlotResources> slots;
    std::uint32_t trace_worker_queue = 0;
    std::uint32_t trace_transfer_queue = 0;

    mutable std::mutex mutex;
    SlotRing ring;
    OutputRegistry registry;
    std::uint64_t accepted = 0;
    std::uint64_t busy = 0;
    std::uint64_t failed = 0;
    std::uint64_t ready = 0;
    std::uint64_t superseded = 0;
    LatencySamples worker_submit_us;
    LatencySamples transfer_queued_us;
    LatencySamples worker_done_us;
    LatencySamples ready_us;
    GpuTimes gpu; // from `timer`
};

// Microseconds from `from` to `to`.
[[nodiscard]] inline double micros(Clock::time_point from, Clock::time_point to) noexcept {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

// The fault-injection context of a worker's job submissions (force_device_lost).
[[nodiscard]] inline std::string worker_submit_context(const Worker& worker) {
    return "worker submit " + worker.label();
}

// Ready -> Free, or Retired when the worker is lost or the task's link failed. Caller holds
// task.mutex.
inline void recycle(Task& task, std::uint32_t slot) noexcept {
    const bool retired = task.worker->lost() || task.link_failed.load(std::memory_order_relaxed);
    (void)task.ring.apply(slot, retired ? SlotEvent::Fail : SlotEvent::Recycle);
}

} // namespace tandem::detail
