// Runtime: Tandem's entry point. It owns (or adopts) the primary device, opens worker devices,
// and runs tasks on them: submit a snapshot, pump completions, acquire the newest output as a
// texture on the primary, release it when the primary's reads are done.
//
// Standalone (Tandem opens every device itself):
//
//     tandem::Runtime runtime;                       // primary "auto", every other adapter a
//     worker auto task = runtime.register_task(desc);       // see task.hpp for (;;) { // the
//     application's frame loop
//         (void)runtime.submit(task, snapshot_bytes); // Accepted, Busy or Failed; never blocks
//         runtime.pump();                            // publishes completed outputs
//         if (auto lease = runtime.acquire(task)) { /* read it, then */ runtime.release(*lease, v);
//         }
//     }
//
// Embedded (an engine hands over its own instance, physical device, device and a queue):
//
//     tandem::EmbedInfo embed{instance, physical, device, family, queue_index};
//     embed.queue_mutex = shared_lock;               // when the engine submits to that queue too
//     tandem::Runtime runtime(embed);                // workers: every other adapter of `instance`
//
// Threads: every method is thread-safe (a stream's timer thread may submit while the frame
// loop pumps and acquires). submit/pump/acquire/release never block on a GPU and never throw.
//
// A slow worker never slows the application: submit, pump, acquire, release, stats and the
// per-frame reads touch host memory and the primary device only. No call on the application's
// thread reads, waits on or locks against a worker device (worker progress and its GPU timings
// are read on Tandem's own threads and handed over as plain numbers), and a task's preparation
// on its device (pipelines, shader compilation, uploads) runs on a Tandem thread:
// register_task_async returns at once and the task answers Preparing until it is ready.
// Lifetime: destroy the runtime before the application's device and instance; destruction
// waits (bounded by the worker timeout) for work in flight and stops Tandem's threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/device_info.hpp"
#include "tandem/export.hpp"
#include "tandem/lease.hpp"
#include "tandem/scheduler.hpp"
#include "tandem/task.hpp"

namespace tandem {

namespace detail {
class RuntimeImpl;
class TaskRouter;
} // namespace detail

struct RuntimeOptions {
    // Adapter selection (standalone): "auto", an index, a UUID prefix or part of a name.
    std::string primary = "auto";
    // "auto" (every other adapter), "none", or comma-separated selectors.
    std::string workers = "auto";
    // Open each physical device this many times (0: $TANDEM_VIRTUAL_DEVICES, else 1).
    std::uint32_t virtual_devices = 0;
    // "off", "core" or "sync" (standalone only); empty: $TANDEM_VALIDATION, else off.
    std::string validation;
    // A worker whose accepted work is not ready within this time is marked lost.
    std::chrono::milliseconds worker_timeout{5000};
    // Force a transfer path for cross-device tasks ("host-copy", ...); empty: the best one. Every
    // path is self-tested on its first use for a pair; one that fails then or later is dropped
    // for the pair and the next one taken (TaskStats::transfer_path, dropped_paths). A forced
    // path that was dropped is refused with its reason.
    std::string transfer_path;
    // Record trace events (tandem::write_trace in tandem/trace.hpp exports them).
    bool trace = false;
    // Where "auto" tasks run (tandem/scheduler.hpp): profile, margins, calibration.
    SchedulerOptions scheduler;
};

// An application's Vulkan objects handed to Tandem. The device must have Vulkan 1.3
// timelineSemaphore, synchronization2, dynamicRendering and maintenance4 enabled, and should enable
// VK_EXT_external_memory_host and VK_KHR_external_memory_fd where the driver has them (list them
// in enabled_extensions). Tandem submits only to queue (queue_family, queue_index) of a
// graphics+compute family; leases are readable by that family.
struct EmbedInfo {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    std::uint32_t queue_family = 0;
    std::uint32_t queue_index = 0;
    // When the application also submits to that queue, both sides lock this mutex around
    // vkQueueSubmit*; null when the queue is Tandem's alone.
    std::shared_ptr<std::mutex> queue_mutex;
    std::vector<std::string> enabled_extensions;
    bool debug_utils = false; // the instance has VK_EXT_debug_utils enabled
};

// The primary's Vulkan objects, for an application that let the Runtime open its devices and
// wants to use the leases there: lease images belong to `device`, and its own submissions to
// `queue` must hold `queue_mutex` (Tandem submits there too).
struct PrimaryVulkan {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    std::uint32_t queue_family = 0;
    std::uint32_t queue_index = 0;
    VkQueue queue = VK_NULL_HANDLE;
    std::shared_ptr<std::mutex> queue_mutex;
    bool debug_utils = false; // the instance has VK_EXT_debug_utils enabled
};

class TANDEM_API Runtime {
public:
    // Opens the primary and worker devices itself. Throws tandem::Error.
    explicit Runtime(const RuntimeOptions& options = {});
    // Adopts the application's device as the primary; opens workers from its instance.
    explicit Runtime(const EmbedInfo& embed, const RuntimeOptions& options = {});
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    // Places the task (placement "auto": where the scheduler puts it now, the primary until a
    // cost is known) and prepares it on its device (workload, slot images, transfer) on a
    // Tandem thread, and waits for that: for set-up code. Throws tandem::Error. The id names
    // the task for its whole life, wherever the scheduler moves it.
    [[nodiscard]] TaskId register_task(const TaskDesc& desc);
    // The same without waiting, for registering while frames run: the id is valid at once,
    // submit() answers Preparing until the task is ready, and stats() says when it is
    // (preparing) or why it could not be (preparation_error). Throws tandem::Error only for
    // what is wrong with `desc` itself (size, slots, an unknown workload or placement).
    [[nodiscard]] TaskId register_task_async(const TaskDesc& desc);

    // Starts a new generation of `task` from `snapshot` (plain data the workload understands;
    // the pattern workload ignores it). The bytes are copied. Never blocks, never throws.
    [[nodiscard]] SubmitResult submit(TaskId task,
                                      std::span<const std::byte> snapshot = {}) noexcept;

    // Observes completions without blocking: publishes outputs newer than the published one,
    // recycles slots whose reads passed, detects timeouts and lost devices; and takes the
    // scheduler's decisions (tandem/scheduler.hpp): a lost worker's auto tasks start moving in
    // the pump that sees the loss.
    void pump() noexcept;

    // A lease on the newest ready output of `task`, or nothing before the first one. While a
    // task moves, the output shown before until the new device has a newer one: generations
    // handed out never go back.
    [[nodiscard]] std::optional<Lease> acquire(TaskId task) noexcept;

    // Hands `lease` back: the application's reads finish when primary_timeline() reaches
    // `primary_value` (0: no GPU reads pending).
    void release(const Lease& lease, std::uint64_t primary_value) noexcept;

    // A timeline semaphore on the primary device that the application signals when its reads
    // of leased images finish (values must grow). Owned by the runtime.
    [[nodiscard]] VkSemaphore primary_timeline() const noexcept;

    // Counters, latencies and the GPU time of each job's workload commands (TaskStats::gpu_us,
    // timed by the runtime for every workload where the device has timestamps). Host memory
    // only: it never waits for a worker.
    [[nodiscard]] TaskStats stats(TaskId task) const;

    // The scheduler's last decision with its reasons (text and JSON).
    [[nodiscard]] PlacementReport placement() const;
    // How many decisions the scheduler took: cheap, for polling before asking placement().
    [[nodiscard]] std::uint64_t placement_decisions() const noexcept;
    // Measures `task` on every device it could run on: registers it there (waiting for each),
    // runs `jobs` jobs of `snapshot` one after another and feeds the timings to the scheduler,
    // whose next decision uses them (their outputs are never handed out). For set-up code:
    // blocks for as long as the jobs take.
    // Throws tandem::Error (an unknown task, jobs < 3, a job that fails everywhere).
    std::vector<DeviceCost> calibrate(TaskId task, std::span<const std::byte> snapshot = {},
                                      std::uint32_t jobs = 8);
    // A time of one job of `task` on adapter `device` that the application measured itself:
    // the scheduler then prices the task's execution by these instead of the runtime's own
    // timings (the GPU time of the job's commands where the device has timestamps, else its
    // submit-to-done time). Non-finite or negative values are ignored.
    void observe_execute(TaskId task, std::uint32_t device, double ms) noexcept;
    [[nodiscard]] const DeviceInfo& primary_device() const noexcept;
    // The primary's instance, physical device, device and main queue with its lock (embedded:
    // the application's own).
    [[nodiscard]] PrimaryVulkan primary_vulkan() const;
    [[nodiscard]] std::vector<DeviceInfo> worker_devices() const;
    // Messages of the Khronos validation layer (warning or worse) since the runtime opened its
    // instance, and the last one (standalone runtimes with validation on; an embedding
    // application's own messenger sees them otherwise).
    [[nodiscard]] std::uint64_t validation_messages() const noexcept;
    [[nodiscard]] std::string last_validation_message() const;
    // The adapter a task's submits go to now, and its transfer path name ("same-device", ...).
    [[nodiscard]] DeviceInfo task_device(TaskId task) const;
    [[nodiscard]] std::string task_transfer_path(TaskId task) const;

    // Internal access for Tandem's own tests (no tool or example uses it; the types behind it are
    // not installed).
    [[nodiscard]] detail::RuntimeImpl& impl() noexcept { return *m_impl; }
    [[nodiscard]] const detail::RuntimeImpl& impl() const noexcept { return *m_impl; }
    [[nodiscard]] detail::TaskRouter& tasks() noexcept { return *m_tasks; }

private:
    std::unique_ptr<detail::RuntimeImpl> m_impl;
    std::unique_ptr<detail::TaskRouter> m_tasks; // logical tasks over m_impl's registrations
};

} // namespace tandem
