// Runtime: Tandem's entry point. It owns (or adopts) the primary device, opens worker devices,
// and runs tasks on them: submit a snapshot, pump completions, acquire the newest output as a
// texture on the primary, release it when the primary's reads are done; add, change and remove
// tasks for as long as the application runs.
//
// Standalone (Tandem opens every device itself):
//
// clang-format off
//     tandem::Runtime runtime;                         // primary "auto", every other adapter a worker
//     tandem::TaskId task = runtime.register_task(desc); // see task.hpp
//     for (;;) {                                       // the application's frame loop
//         (void)runtime.submit(task, snapshot_bytes);  // Accepted, Busy, Preparing or Failed
//         runtime.pump();                              // publishes completed outputs
//         if (auto lease = runtime.acquire(task)) {
//             /* read it in this frame, then */
//             runtime.release(*lease, frame_value);
//         }
//     }
//     runtime.unregister_task(task);                   // never blocks
// clang-format on
//
// Embedded (an engine hands over its own instance, physical device, device and a queue):
//
// clang-format off
//     // The device created with what tandem::embedding_requirements() asks (embedding.hpp).
//     tandem::EmbedInfo embed{instance, physical, device, family, queue_index};
//     embed.set_enabled(device_create_info);           // the extensions and features it has
//     embed.queue_mutex = shared_lock;                 // when the engine submits to that queue too
//     tandem::Runtime runtime(embed);                  // workers: the instance's other GPUs
// clang-format on
//
// Embedded, Tandem opens only what the options name: by default its workers are the instance's
// other physical GPUs, one opening each; a CPU device (lavapipe) is a worker only with
// RuntimeOptions::embedded_cpu_workers (or named in `workers`), and the application's own GPU is
// opened again only with RuntimeOptions::virtual_devices. Trial jobs run only for tasks placed
// auto (SchedulerOptions::background_calibration), on the devices those may move to.
// Standalone, "auto" takes every other adapter, CPU devices included, and where there is one
// adapter alone (one GPU, or lavapipe on a machine without one) a second opening of it, so that
// the demo still spans two devices.
//
// The environment: Tandem never changes it (it sets no variable, LP_NUM_THREADS included: the
// `tandem` tool sets that one for itself), and reads only these debug variables:
//   TANDEM_VALIDATION=off|core|sync  standalone: validation when RuntimeOptions::validation is
//                                    empty (an embedded runtime uses the application's instance)
//   TANDEM_VIRTUAL_DEVICES=N         standalone: openings of each device when
//                                    RuntimeOptions::virtual_devices is 0 (never embedded)
//   TANDEM_NO_CUDA=1                 libcuda.so.1 is not loaded (no CUDA paths nor matrices)
//   TANDEM_COPY_QUEUE=main|transfer  the queue family transfers use
//   TANDEM_SPARE_CORES=1|0           whether Tandem's threads poll before sleeping
//   TANDEM_FAULT_WORKER_LOST=N       fault injection, for tests of programs embedding Tandem:
//                                    every worker job submission after the first N reports
//                                    VK_ERROR_DEVICE_LOST, so the workers are lost for real
//
// Threads: every method is thread-safe (a stream's timer thread may submit while the frame
// loop pumps and acquires). submit/pump/acquire/release/unregister_task never block on a GPU and
// never throw.
//
// A slow worker never slows the application: submit, pump, acquire, release, stats and the
// per-frame reads touch host memory and the primary device only. No call on the application's
// thread reads, waits on or locks against a worker device (worker progress and its GPU timings
// are read on Tandem's own threads and handed over as plain numbers), and a task's preparation
// on its device (pipelines, shader compilation, uploads) runs on a Tandem thread:
// register_task_async and reconfigure return at once and the task answers Preparing until it is
// ready.
//
// Lifetime: a task lives from register_task to unregister_task. Everything Tandem made for it
// on every device (slot images, staging, pipelines, transfer objects) is freed on a Tandem thread
// once the GPU has passed the last timeline value that used it and every lease on it was
// released; nothing ever waits on the application's queue for that, and nothing a runtime holds
// has a fixed capacity but its event log (RuntimeOptions::max_events). Destroy the runtime
// before the application's device and instance; its destructor is the one place that waits for
// devices (bounded by the worker timeout).
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
#include "tandem/embedding.hpp"
#include "tandem/export.hpp"
#include "tandem/lease.hpp"
#include "tandem/log.hpp"
#include "tandem/scheduler.hpp"
#include "tandem/task.hpp"

namespace tandem {

namespace detail {
class RuntimeImpl;
struct RuntimeAccess;
} // namespace detail

struct RuntimeOptions {
    // Adapter selection (standalone): "auto" or a selector: an index, a UUID prefix, a PCI
    // address ("pci:0000:3b:00.0"), vendor:device in hex ("10de:2330") or part of a name.
    std::string primary = "auto";
    // "auto", "none", or comma-separated selectors. "auto" standalone: every other adapter (a
    // second opening of the only one where there is one); embedded: every other GPU of the
    // application's instance (above).
    std::string workers = "auto";
    // Open each physical device this many times (0: standalone $TANDEM_VIRTUAL_DEVICES, else 1;
    // embedded 1). Embedded, the further openings of every device are workers with "auto", the
    // application's own GPU's included.
    std::uint32_t virtual_devices = 0;
    // Embedded with workers "auto": CPU Vulkan devices (lavapipe) are workers too. Standalone
    // "auto" takes them anyway.
    bool embedded_cpu_workers = false;
    // "off", "core" or "sync" (standalone only); empty: $TANDEM_VALIDATION, else off.
    std::string validation;
    // When a worker is lost: Vulkan reports its device lost or a submission to it fails, or it
    // makes no progress (none of its work completes) for longer than its allowance while work
    // waits on it. The allowance is the larger of worker_timeout and 4 times the longest job it
    // was measured to need for the task waiting; before any job of that task completed there,
    // the larger of worker_timeout and first_job_timeout (pipeline compilation, uploads, a CPU
    // device given a heavy scene). A worker that is slow but working is never lost: a task whose
    // device cannot keep up with its rate is the scheduler's business.
    std::chrono::milliseconds worker_timeout{5000};
    std::chrono::milliseconds first_job_timeout{120000};
    // A task stops after this many of its jobs failed in a row in its workload (record() threw);
    // each failure before that fails its job alone. At least 1.
    std::uint32_t max_consecutive_failures = 8;
    // How often a task's jobs on a CPU device (lavapipe) are timed (TaskStats::gpu_us): its
    // first four jobs on the device, then the first job recorded once this long has passed
    // since the last timed one; 0 times every job, as on every other device. On a CPU device a
    // job's timestamps make the queue wait until the device's threads finished the job's
    // rendering, so the next commands cannot overlap it: on lavapipe a stream of 1920x1080
    // frames timed each ran at 0.66-0.70 of the copies' ceiling, 0.85-0.95 untimed. A period,
    // not a share of the jobs, so that the cost stays small at any frame rate. Trial jobs (the
    // scheduler's, Runtime::calibrate) are timed each. Not negative.
    std::chrono::milliseconds cpu_device_timing_period{100};
    // Whether a task on a CPU device (lavapipe) reads its image inputs where they cross from the
    // primary, when they take the host-imported path: its slot's input is a linear image over
    // the host memory the primary's copy writes, so no copy on the CPU device follows it
    // (TaskStats::inputs_read_in_place; RecordContext gives such an input in GENERAL). Where the
    // driver cannot make such images for an input's format, or their rows do not fit the
    // staging's, the input is copied as with false.
    bool cpu_reads_inputs_in_place = true;
    // How the primary copies an input whose application images are sampleable
    // (TaskInputDesc::application_usage; RGBA8 and BGRA8): Auto copies with a compute dispatch
    // on a GPU, whose shader cores may outrun its copy command many times over (12x on an
    // H100), and with the copy command on a CPU device (lavapipe), where that command is a
    // memcpy and a shader is slower (4x). Compute and CopyCommand choose one everywhere.
    enum class InputCopies { Auto, Compute, CopyCommand };
    InputCopies input_copies = InputCopies::Auto;
    // Whether a task on a CPU device (lavapipe) writes its outputs where they cross to the
    // primary, when they take the host-imported path: its slot's output image is a linear image
    // over the host memory the primary's copy reads, so no copy on the CPU device precedes it
    // (TaskStats::outputs_written_in_place; a workload leaves its image in the layout its
    // output() names, as ever, and Tandem changes it to GENERAL, which keeps its bytes). Where
    // the driver cannot make such images for the task's format and usage, or their rows do not
    // fit the staging's, the output is copied as with false.
    bool cpu_writes_outputs_in_place = true;
    // Force a transfer path for cross-device tasks ("host-copy", ...); empty: the best one. Every
    // path is self-tested on its first use for a pair; one that fails then or later is dropped
    // for the pair and the next one taken (TaskStats::transfer_path, dropped_paths). A forced
    // path that was dropped is refused with its reason.
    std::string transfer_path;
    // Record trace events (tandem::write_trace in tandem/trace.hpp exports them).
    bool trace = false;
    // Name Tandem's Vulkan objects (VK_EXT_debug_utils, where the instance has it) for
    // RenderDoc, Nsight and validation messages. The validation layer keeps what it learns of
    // every name set for as long as the device lives, images reused included (docs/embedding.md,
    // "Logging, the environment and validation"): an engine under validation for hours can
    // turn this off.
    bool name_objects = true;
    // Where "auto" tasks run (tandem/scheduler.hpp): profile, margins, calibration.
    SchedulerOptions scheduler;
    // What the runtime logs (on its calls and its threads, validation messages included) at
    // `log_level` or above goes to `log` (tandem/log.hpp); null: to stderr. Never to stdout.
    LogLevel log_level = LogLevel::Warn;
    LogCallback log;
    // What happened on Tandem's threads is kept for Runtime::take_events(): at most this many
    // events wait to be taken; when one more comes the oldest waiting goes (counted in
    // Runtime::events_dropped()), so a runtime whose application never takes them holds a
    // bounded log. 0: no event is kept (each counts as dropped).
    std::size_t max_events = 1024;
};

// What happened to a task or a device on Tandem's own threads, which no call's answer says: a
// job accepted earlier failed, a task stopped or moved, a preparation failed, a device was lost,
// a transfer path was dropped. Polled from the application's thread (Runtime::take_events), as
// Dawn's device-lost and uncaptured-error callbacks report, but never called on Tandem's
// threads. Also logged, as before.
enum class RuntimeEventKind {
    // A job the application's submit accepted will never be published: `generation` names it,
    // `error` says why (WorkloadFailed, DeviceLost, TransferFailed; OutOfMemory or ChainBroken
    // for its inputs). Trial jobs are not reported, nor the jobs the runtime's destructor drops.
    JobFailed,
    // The task stopped after RuntimeOptions::max_consecutive_failures failed jobs in a row
    // (error Stopped): its submits answer Failed from now on.
    TaskStopped,
    // The task could not be prepared on `device` (error PreparationFailed): its registration,
    // a move, a reconfigure (it keeps its old shape), or a new transfer path after one failed.
    PreparationFailed,
    // Device `device` was lost (error DeviceLost; task: default): its manual tasks fail, its
    // auto tasks move.
    DeviceLost,
    // A transfer path between the task's device and the primary failed, while carrying the
    // task or at its self-test while the task was prepared, and is dropped for the pair (error
    // TransferFailed): the task is prepared again with the next.
    TransferPathDropped,
    // The scheduler moved the task to `device` (error None).
    TaskMoved,
};
[[nodiscard]] TANDEM_API const char* to_string(RuntimeEventKind kind) noexcept;

struct RuntimeEvent {
    RuntimeEventKind kind = RuntimeEventKind::JobFailed;
    TaskId task;                       // default for DeviceLost
    std::uint32_t device = 0;          // the adapter it happened on
    std::uint64_t generation = 0;      // JobFailed: the job's generation (SubmitResult's)
    TaskError error = TaskError::None; // the code, as the calls' answers use them
    std::string message;               // a sentence saying what happened and why
    std::uint64_t sequence = 0;        // 1, 2, ... in the order they happened, dropped included
};

// Where one device's memory stands: the memory Tandem's objects on it hold now (slot images,
// staging, the built-in workloads' buffers; not the application's own), counted per object.
// Most are ranges of a few large blocks Tandem keeps per memory type, so that tasks added and
// removed for hours do not allocate and free device memory each time; a block that empties is
// kept while it is its kind's only empty one. Images of a task that went are kept for the next
// one of the same size and format: each device keeps at most 64 (k_cached_bound), and 256 MiB,
// of its images and of the zero-copy path's slot pairs it exported (a worker, with the
// primary). A pair's other half lies in its partner's memory, so the primary's memory also holds
// up to 64 halves per worker (partner_halves). The pipelines of built-in and compute
// workloads are shared by every task that runs the same code on the device, and up to 16 nobody
// uses are kept for the next task.
struct DeviceResources {
    std::uint32_t device = 0; // adapter index
    std::uint64_t allocations =
        0; // memory of Tandem's objects in use: ranges of blocks, whole ones
    std::uint64_t bytes = 0;
    std::uint64_t pool_blocks = 0; // the blocks held (in use or kept empty) and their bytes
    std::uint64_t pool_bytes = 0;
    // Images kept for reuse in this device's memory: cached_images + cached_pairs +
    // partner_halves, and their bytes.
    std::uint32_t idle_images = 0;
    std::uint64_t idle_image_bytes = 0;
    // This device's own cache: its images, and pairs it exported (counted once, by their half
    // here); together at most k_cached_bound.
    std::uint32_t cached_images = 0;
    std::uint32_t cached_pairs = 0;
    // Halves of pairs other devices' caches keep with this device as partner (the primary's).
    std::uint32_t partner_halves = 0;
    static constexpr std::uint32_t k_cached_bound = 64;
    static constexpr std::uint64_t k_cached_bytes_bound = std::uint64_t{256} << 20;
    std::uint32_t pipelines = 0; // shared pipelines held (in use or kept)
};

// What a runtime holds now (Runtime::resources): for an application's monitoring and for tests
// that a long run frees what it no longer uses.
struct RuntimeResources {
    std::vector<DeviceResources> devices; // the primary first, then each worker
    std::uint32_t threads = 0;            // Tandem's threads running for this runtime
    std::uint32_t tasks = 0;              // live tasks (registered, not unregistered)
    // Task instances (a task's objects on one device) that are live: each task's active one,
    // one being prepared for a move or a reconfiguration, and idle ones on devices the task ran
    // or was measured on (at most one per device and task).
    std::uint32_t instances = 0;
    // Instances and transfer objects that left use and wait for the GPU (and for their leases)
    // before they are freed.
    std::uint32_t retiring = 0;
};

// What calibrate() answered (error: UnknownTask, or NotMeasured with `reason`).
struct CalibrationResult : CallResult {
    std::vector<DeviceCost> costs; // what the scheduler knows of the task on each device now
};

// One device's Vulkan objects, for an application that reads leases there: the primary's
// (primary_vulkan(): for an application that let the Runtime open its devices, whose lease
// images belong to `device`) or a worker's (device_vulkan(): for the leases acquire_on_worker
// answers). Its own submissions to `queue` must hold `queue_mutex` (Tandem submits there too).
struct DeviceVulkan {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    std::uint32_t adapter = 0; // DeviceInfo::index: Lease::device of the leases read here
    std::uint32_t queue_family = 0;
    std::uint32_t queue_index = 0;
    VkQueue queue = VK_NULL_HANDLE;
    std::shared_ptr<std::mutex> queue_mutex;
    bool debug_utils = false; // the instance has VK_EXT_debug_utils enabled
    // The vkQueueSubmit2 Tandem calls on `queue`: looked up through
    // EmbedInfo::get_device_proc_addr when the application gave it, else the loader's. A client
    // of the runtime that submits to `queue` on Tandem's behalf (LeaseReadback) calls this one.
    PFN_vkQueueSubmit2 queue_submit2 = nullptr;
    // The timeline semaphore on this device that the application signals when its reads of the
    // leases it took here finish, the values release() is given (they must grow): the primary
    // timeline (Runtime::primary_timeline()) on the primary, one of its own on each worker.
    // Owned by the runtime; Tandem only waits on it.
    VkSemaphore reads_timeline = VK_NULL_HANDLE;
};
using PrimaryVulkan = DeviceVulkan;

class TANDEM_API Runtime {
public:
    // Opens the primary and worker devices itself. Throws tandem::Error.
    explicit Runtime(const RuntimeOptions& options = {});
    // Adopts the application's device as the primary; opens workers from its instance.
    explicit Runtime(const EmbedInfo& embed, const RuntimeOptions& options = {});
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;
    // Embedded: the destructor leaves the worker devices Tandem opened on the application's
    // instance open, to the process's end, instead of destroying them; everything else on every
    // device (the application's included) it frees as ever. For a destruction during which the
    // Vulkan loader holds the lock its vkDestroyDevice takes: a layer that must end the runtime
    // inside the application's own vkDestroyDevice. Standalone, it does nothing: a standalone
    // runtime's devices are its own. Call it just before destroying the runtime.
    void leave_devices_open() noexcept;
    // For a process that exits with the runtime still alive: stops every thread Tandem runs for
    // it, then waits up to `gpu_wait` for the work it submitted to finish (a CPU driver runs it
    // on threads of its own, which the driver's exit code must not race), and destroys nothing.
    // Call it from an exit handler that runs before the driver's and the layers' own (handlers
    // run in the reverse order of their registration: register it after the device was created
    // and the first jobs ran). A preparation under way finishes first; jobs queued are dropped;
    // jobs submitted to a GPU finish within the wait, their transfers to the primary included,
    // and pump() then publishes them (progress() counts none in flight). Afterwards the runtime
    // runs nothing more (jobs submitted are dropped), and the application leaves it to the
    // process's end or destroys it as usual. Any thread; more than once is harmless.
    void stop_for_exit(std::chrono::milliseconds gpu_wait) noexcept;

    // Places the task (placement auto: where the scheduler puts it now, the primary until a cost
    // is known) and prepares it on its device (workload, slot images, transfer) on a Tandem
    // thread, and waits for that: for set-up code. Throws tandem::Error. The id names the task
    // for its whole life, wherever the scheduler moves it, and is never reused.
    [[nodiscard]] TaskId register_task(const TaskDesc& desc);
    // The same without waiting, for registering while frames run: the id is valid at once,
    // submit() answers Preparing until the task is ready, and stats() says when it is
    // (preparing) or why it could not be (preparation_error). Throws tandem::Error only for
    // what is wrong with `desc` itself (size, slots, rate, an unknown workload or placement).
    // Both refuse, with a sentence, a chained input (tandem/input.hpp) whose producer is not a
    // live task of this runtime, whose format or size differs from the producer's output, or
    // that a consumer placed on a worker other than its producer's device has (on the primary it
    // reads the delivered output: tandem/input.hpp); reconfigure also refuses
    // one that would make a cycle.
    [[nodiscard]] TaskId register_task_async(const TaskDesc& desc);
    // Ends the task at once: it refuses submits from now on and its id names no task any more
    // (every call answers TaskError::UnknownTask); leases the application holds stay valid until
    // released; everything it owns on every device is freed once the GPU has passed it. Never
    // blocks, never throws. UnknownTask for an id that names no live task (twice, say).
    // A producer of a chain may be unregistered while its consumers live: their submits answer
    // Failed (TaskError::ChainBroken) from then on, and their jobs already accepted still read
    // the producer's outputs they hold, which are freed after them. A consumer placed auto that
    // followed it stays where it runs (the scheduler's reason says why).
    TaskError unregister_task(TaskId task) noexcept;
    // Changes a live task's size, format, slots, rate or placement (and its workload) to `desc`'s:
    // the new shape is prepared off the frame, as a move is, and acquire() hands out the old
    // output until the new shape has one, so the task never goes blank or back in time; its
    // generations go on. Submits go to the new shape once it is prepared (Preparing never
    // answers meanwhile: the old shape takes them). The id is checked first: UnknownTask for an
    // id that names no live task, whatever `desc` holds; then throws tandem::Error
    // (ErrorCategory::InvalidArgument) for what is wrong with `desc` itself (a chain's producer
    // that is no live task included), changing nothing. A new shape that cannot be prepared is
    // reported by a PreparationFailed event (take_events) and TaskStats::preparation_error.
    TaskError reconfigure(TaskId task, const TaskDesc& desc);

    // Starts a new generation of `task` from `snapshot` (plain data the workload understands;
    // the pattern workload ignores it). The bytes are copied. A job whose bytes the workload
    // refuses (Workload::check) answers Failed with TaskError::BadBytes and changes nothing.
    // Never blocks, never throws.
    [[nodiscard]] SubmitResult submit(TaskId task,
                                      std::span<const std::byte> snapshot = {}) noexcept;
    // The same for a task with inputs (TaskDesc::inputs, tandem/input.hpp): one InputImage per
    // declared input, in order. Tandem copies each on the primary's main queue once its writes
    // finished; SubmitResult::inputs_released says when the application may write them again
    // (input_timeline()). Inputs that do not match the task's (their number, an image missing)
    // answer Failed with TaskError::BadInputs and change nothing. The copies are submitted on
    // the calling thread (to the primary's main queue, under its lock): never a wait on a GPU;
    // a submit whose inputs are all lent and signalled by their loan's semaphore submits
    // nothing (tandem/input.hpp, "Signalled by the application").
    // Chained inputs (TaskInputDesc::producer) are not named here: `inputs` lists the
    // application's own, in their declared order; a task whose inputs are all chained takes the
    // two-argument submit. A producer without the generation asked for answers Busy (with a
    // reason), a chain that cannot be read Failed with TaskError::ChainBroken (tandem/input.hpp).
    [[nodiscard]] SubmitResult submit(TaskId task, std::span<const std::byte> snapshot,
                                      std::span<const InputImage> inputs) noexcept;
    // Lends the application the input images of one of `task`'s slots, to render into instead
    // of its own (tandem/input.hpp, Lent input images): a submit naming them copies nothing of
    // them. Busy when no slot is free, Preparing and Failed as submit answers them (BadInputs for
    // a task with no image input of the application's); nothing is lent then. Submits on the
    // calling thread one empty batch to the primary's main queue (the slot's last reads before
    // InputLoan::writable); never a wait on a GPU.
    [[nodiscard]] LendResult lend_inputs(TaskId task) noexcept;
    // Hands back a loan not submitted: its slot is free again once the primary's main queue
    // passed everything submitted to it before (the application's writes of the images among
    // them). LoanNotHeld for a loan submitted or returned already, or one of another task;
    // UnknownTask for an id that names no live task.
    TaskError return_inputs(TaskId task, const InputLoan& loan) noexcept;
    // A timeline semaphore of the primary device that Tandem signals once its copy of a submit's
    // inputs ran (SubmitResult::inputs_released): the application's writes of those images wait
    // on it. Values only grow; owned by the runtime.
    [[nodiscard]] VkSemaphore input_timeline() const noexcept;

    // Observes completions without blocking: publishes outputs newer than the published one,
    // recycles slots whose reads passed, detects lost devices; and takes the scheduler's
    // decisions (tandem/scheduler.hpp): a lost worker's auto tasks start moving in the pump that
    // sees the loss.
    void pump() noexcept;

    // A lease on the newest ready output of `task`; none before the first one. UnknownTask
    // for an id that names no live task, OutOfMemory when host memory ran out (AcquireResult).
    // While a task moves or is reconfigured, the output shown before until the new instance has a
    // newer one (where none was acquired yet, the newest the old instance made): generations handed
    // out never go back. Each call that answers a lease issues a new ticket (Lease::ticket):
    // two acquires of the same output are two leases, each to be released once.
    [[nodiscard]] AcquireResult acquire(TaskId task) noexcept;
    // The same output (the one acquire() would answer now, with the same rules), leased where
    // the work made it: on a worker device, the image the task's job wrote there
    // (Lease::on_worker), for an application that reads it on that worker (its own pass there,
    // or a display the worker drives) instead of carrying it back from the primary. The output is
    // the published one, so it is leased once its copy to the primary completed too. Read it
    // on the device's queue (device_vulkan(lease.device)), waiting on wait_semaphore for
    // wait_value, in `layout` (and back in it when the reads end); release it with a value of
    // that device's reads_timeline. Its slot is written again only once every ticket on it was
    // released and both timelines passed their values. An output made on the primary answers
    // a primary lease (on_worker false), as acquire() does.
    [[nodiscard]] AcquireResult acquire_on_worker(TaskId task) noexcept;

    // Hands `lease` back: the application's reads finish when primary_timeline() reaches
    // `value` (0: no GPU reads pending); for a lease on_worker, when its device's reads
    // timeline (DeviceVulkan::reads_timeline) does. Works after the task was unregistered too.
    // LeaseNotHeld, and nothing changes, when its ticket is not held: released already, never
    // issued (a default Lease), or a copy naming another task, slot or generation. UnknownTask
    // when its task and every object behind it are gone (a lease of another runtime, too). The
    // slot is reused only once every ticket on it was released and its values reached.
    TaskError release(const Lease& lease, std::uint64_t value) noexcept;

    // A timeline semaphore on the primary device that the application signals when its reads
    // of leased images finish (values must grow). Owned by the runtime.
    [[nodiscard]] VkSemaphore primary_timeline() const noexcept;

    // Counters, latencies and the GPU time of each job's workload commands (TaskStats::gpu_us,
    // timed by the runtime for every workload where the device has timestamps; on a CPU device
    // one job each cpu_device_timing_period). Host memory
    // only: it never waits for a worker. TaskStats::error is UnknownTask (and all else empty)
    // for an id that names no live task. Throws only std::bad_alloc.
    [[nodiscard]] TaskStats stats(TaskId task) const;
    // The counters of stats() a caller polls to learn that an output is ready or a job still
    // runs (newest generation, jobs in flight, preparing, stopped, lost, reconfigured): without
    // its latencies and GPU times, whose percentiles sort thousands of samples a call. Never
    // allocates or waits for a device. TaskProgress::error is UnknownTask (and all else empty)
    // for an id that names no live task.
    [[nodiscard]] TaskProgress progress(TaskId task) const noexcept;

    // The scheduler's last decision with its reasons (text and JSON).
    [[nodiscard]] PlacementReport placement() const;
    // How many decisions the scheduler took: cheap, for polling before asking placement().
    [[nodiscard]] std::uint64_t placement_decisions() const noexcept;
    // Measures `task` on every device it could run on: prepares it there (waiting for each),
    // runs `jobs` jobs of `snapshot` one after another and feeds the timings to the scheduler,
    // whose next decision uses them. They are trial jobs: never handed out, never counted as the
    // application's, no generation of the task's. For set-up code: blocks for as long as the
    // jobs take. Throws tandem::Error for jobs < 3; NotMeasured with the reason when no device
    // could run them. The id is checked first (UnknownTask), then `jobs` (the throw,
    // ErrorCategory::InvalidArgument).
    [[nodiscard]] CalibrationResult calibrate(TaskId task, std::span<const std::byte> snapshot = {},
                                              std::uint32_t jobs = 8);
    // A time of one job of `task` on adapter `device` that the application measured itself:
    // the scheduler then prices the task's execution by these instead of the runtime's own
    // timings (the GPU time of the job's commands where the device has timestamps, else its
    // submit-to-done time). UnknownTask for an id that names no live task; BadArgument, and
    // nothing changes, for a device that is no adapter of this runtime or a time that is not
    // finite or is negative; OutOfMemory, and nothing changes, when host memory ran out
    // recording it.
    TaskError observe_execute(TaskId task, std::uint32_t device, double ms) noexcept;

    // The events that happened since the last call (RuntimeEvent), oldest first, and no longer
    // kept. Call it from the frame loop (after pump(), say); it never waits on a GPU. Throws
    // only std::bad_alloc (the events stay kept then).
    [[nodiscard]] std::vector<RuntimeEvent> take_events();
    // Events that went before they were taken (RuntimeOptions::max_events), since the start.
    [[nodiscard]] std::uint64_t events_dropped() const noexcept;

    [[nodiscard]] const DeviceInfo& primary_device() const noexcept;
    // The primary's instance, physical device, device and main queue with its lock (embedded:
    // the application's own).
    [[nodiscard]] PrimaryVulkan primary_vulkan() const;
    // Adapter `adapter`'s (DeviceInfo::index): the primary's as primary_vulkan(), or a worker's,
    // for the leases acquire_on_worker answers there; none for an index that names no device of
    // this runtime.
    [[nodiscard]] std::optional<DeviceVulkan> device_vulkan(std::uint32_t adapter) const;
    [[nodiscard]] std::vector<DeviceInfo> worker_devices() const;
    // The pair matrix's cell from each worker to the primary, in worker_devices() order: the
    // paths the pair allows and why (before any was dropped: TaskStats::dropped_paths says
    // which were), and whether they share a semaphore. What `tandem devices` prints.
    [[nodiscard]] std::vector<PairInfo> worker_pairs() const;
    // What the runtime holds now: memory per device, threads, tasks, instances, retiring objects.
    [[nodiscard]] RuntimeResources resources() const;
    // Messages of the Khronos validation layer (warning or worse) since the runtime opened its
    // instance, and the last one (standalone runtimes with validation on; an embedding
    // application's own messenger sees them otherwise).
    [[nodiscard]] std::uint64_t validation_messages() const noexcept;
    [[nodiscard]] std::string last_validation_message() const;

private:
    friend struct detail::RuntimeAccess; // Tandem's own tests; not installed
    std::unique_ptr<detail::RuntimeImpl> m_impl;
};

} // namespace tandem
