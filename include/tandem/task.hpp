// Tasks: a bounded piece of work a worker GPU produces for the primary, one output image per
// generation. Register a task once (Runtime::register_task), submit snapshots to it, change it
// while it runs (Runtime::reconfigure) and end it (Runtime::unregister_task).
//
// clang-format off
//     tandem::TaskDesc desc;
//     desc.name = "minimap";
//     desc.workload = "pattern";                         // built-in compute workload
//     desc.width = 256;
//     desc.height = 256;
//     desc.slots = 3;                                    // one written, one ready, one read
//     desc.placement = tandem::Placement::automatic();   // the scheduler decides
//     tandem::TaskId id = runtime.register_task(desc);
//     ...
//     runtime.unregister_task(id);                       // never blocks
// clang-format on
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/device_info.hpp"
#include "tandem/export.hpp"
#include "tandem/input.hpp"
#include "tandem/placement.hpp"
#include "tandem/task_id.hpp"
#include "tandem/workload.hpp"

namespace tandem {

// Why a call about a task did not do what it was asked, or why one of its jobs failed. Every
// per-frame call answers with one of these, never by throwing: submit, lend_inputs, acquire and
// calibrate in their result's `error` beside a sentence (`reason`), release, unregister_task,
// reconfigure, return_inputs and observe_execute as their result, and stats in TaskStats::error.
// Checked in one order: the id first, then the other arguments, then the task's state. An id
// that names no live task of the runtime (a default TaskId, one never registered, one
// unregistered, another runtime's) answers UnknownTask, from every call that takes the id as an
// argument; an id inside a TaskDesc (a chain's producer) is part of the description, which
// register_task and reconfigure refuse by throwing tandem::Error (ErrorCategory::
// InvalidArgument). A job that was accepted and then failed is named by a RuntimeEvent
// (tandem/runtime.hpp, Runtime::take_events) with its generation and one of these codes.
enum class TaskError {
    None,
    UnknownTask,         // the id names no live task
    BadBytes,            // the task's workload refused the job's bytes (Workload::check said why,
                         // or threw: its what() is the reason)
    Stopped,             // the task stopped: RuntimeOptions::max_consecutive_failures jobs failed
    PreparationFailed,   // it could not be prepared on its device (TaskStats::preparation_error)
    DeviceLost,          // its device was lost and it cannot move (a manual placement); a job:
                         // its device was lost, or its submission there failed, while it ran
    NoTransferPath,      // every transfer path between its device and the primary was dropped
    OutOfMemory,         // host memory ran out (copying the job's bytes, composing an answer)
    LeaseNotHeld,        // release: the lease was released already, or never handed out
    NotMeasured,         // calibrate: no device could run the task's jobs
    BadInputs,           // submit: the inputs do not match the task's (TaskDesc::inputs)
    ChainBroken,         // submit: a chained input cannot be read (tandem/input.hpp, Chains)
    LoanNotHeld,         // return_inputs: the loan was submitted or returned already, or is of
                         // another task (tandem/input.hpp, Lent input images)
    BadArgument,         // an argument other than the id is out of range: observe_execute's
                         // device (no adapter of the runtime) or time (not finite, or negative)
    PrimarySubmitFailed, // submit, lend_inputs: a submission to the primary's main queue failed
                         // with a result other than VK_ERROR_DEVICE_LOST (in the reason)
    WorkloadFailed,      // a job: the task's workload failed recording it (its record() threw)
    TransferFailed,      // a job: its transfer path failed while carrying it; the path is
                         // dropped and the task prepared again with the next one
};
[[nodiscard]] TANDEM_API const char* to_string(TaskError error) noexcept;

// Which entries of a calibration profile predict a task's cost before the runtime has measured
// it: the reference workloads of `kind` ("pattern"; "capture" with `work` triangles) at the
// task's size, or the profile's sample of this very task (`content`, the key `tandem calibrate`
// gave it). Empty kind: nothing predicts it, the runtime measures it (SchedulerOptions).
struct CostHint {
    std::string kind;
    std::uint64_t work = 0;
    std::string content;
};

struct TaskDesc {
    std::string name = "task";
    // A workload built into Tandem, by name: "pattern" (a compute shader whose output is a pure
    // function of (generation, width, height): tandem/pattern.hpp checks it). Ignored when
    // `factory` is set; any other name is refused at registration.
    std::string workload = "pattern";
    // The application's own workload (tandem/workload.hpp), made on each device the task is
    // prepared on; when set, it runs instead of the named one.
    WorkloadFactory factory;
    std::uint32_t width = 256;
    std::uint32_t height = 256;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    // Slots in the task's ring, 2 to 16. Each holds a worker image, a staging region and a
    // primary image; with 3, one can be written while one is ready and one is read.
    std::uint32_t slots = 3;
    // Where the task runs (tandem/placement.hpp): auto (the scheduler decides, and may move it
    // while it runs: tandem/scheduler.hpp), the primary, a worker, or one adapter. A manual
    // placement is never changed by the scheduler. A task with a chained input placed auto goes
    // to its producer's device, and the scheduler places and moves the chain as a unit
    // (tandem/input.hpp).
    Placement placement;
    // Updates per second the application will ask for: the scheduler's load on each device.
    double rate_hz = 30.0;
    // What predicts its cost from a profile (the pattern workload: kind "pattern" by default).
    CostHint cost;
    // Images the task reads (tandem/input.hpp): the application's, of which each submit names
    // one per entry in this order, or another task's output (TaskInputDesc::producer: a chain,
    // never named at submit). At most 8.
    std::vector<TaskInputDesc> inputs;
    // Set: where the task runs on a worker, its outputs stay there. Nothing copies them to the
    // primary; each is published once the worker's work completes, in GENERAL, and is leased
    // there alone (Runtime::acquire_on_worker: its wait is on the worker's work), for an
    // application that
    // uses it on the worker (a display the worker drives, its own pass there). acquire() then
    // answers BadArgument. A task on the same worker may chain from it (TaskInputDesc::
    // producer), reading it in place; one on another device is refused at its submit
    // (ChainBroken, with a sentence). On the primary it changes nothing.
    bool keep_output_on_worker = false;
};

// The per-frame calls' results (SubmitResult, LendResult, AcquireResult, CalibrationResult)
// are each a CallResult with what the call gives besides: `error`, a TaskError (None when the
// call did what it was asked), and `reason`, a sentence saying why when it is not None (and, for
// submit's Busy and Preparing, what it waits for). Code that only reports a failure can take
// any of them as a `const CallResult&`. The calls whose answer is a code alone return the
// TaskError itself.
struct CallResult {
    TaskError error = TaskError::None;
    std::string reason;
    [[nodiscard]] bool failed() const noexcept { return error != TaskError::None; }
};

// What submit() answered.
enum class SubmitStatus {
    Accepted,  // a slot was taken and a new generation will be produced
    Busy,      // every slot is in use, or a chained input's producer has not made the
               // generation asked for yet (see reason): nothing changed (no GPU work, no
               // generation)
    Preparing, // the task is still being prepared on its device: nothing changed, as for Busy
    Failed,    // nothing changed and the job will not run: see error and reason
};
[[nodiscard]] TANDEM_API const char* to_string(SubmitStatus status) noexcept;

// error and reason: Failed, why (Preparing: where; Busy: a chain's wait, or empty).
struct SubmitResult : CallResult {
    SubmitStatus status = SubmitStatus::Failed;
    std::uint64_t generation = 0; // Accepted: the generation this submit produces
    // Accepted with inputs: the application may write its input images again once
    // Runtime::input_timeline() reaches this value (Tandem's copy of them ran); 0 otherwise,
    // and 0 for a submit that submitted nothing (every input lent and signalled by its loan).
    std::uint64_t inputs_released = 0;
    [[nodiscard]] bool accepted() const noexcept { return status == SubmitStatus::Accepted; }
};

// What lend_inputs() answered: Accepted with a loan (its images reserved for the application),
// or Busy, Preparing or Failed as a submit would, with nothing lent (error and reason: Failed,
// why; Busy and Preparing, what).
struct LendResult : CallResult {
    SubmitStatus status = SubmitStatus::Failed;
    InputLoan loan;
    [[nodiscard]] bool lent() const noexcept { return status == SubmitStatus::Accepted; }
};

// Latency of one pipeline stage, measured from the request (submit) in microseconds. The
// percentiles cover the newest 4,096 jobs of the task's active device; count covers every job.
struct LatencyStats {
    std::uint64_t count = 0;
    double p50_us = 0;
    double p90_us = 0;
    double p99_us = 0;
    double max_us = 0;
};

// GPU time of a task's jobs on one device, in microseconds (TaskStats::gpu_us). The
// percentiles cover the newest 4,096 timed jobs; count, total and first cover every timed job.
// On a CPU device only some jobs are timed (RuntimeOptions::cpu_device_timing_period):
// `untimed` counts the others, so total_us / count * (count + untimed) is how long the device
// spent on the task's commands there.
struct GpuTimeStats {
    std::uint64_t count = 0;   // jobs timed
    std::uint64_t untimed = 0; // jobs recorded without timestamps (a CPU device's, only)
    double p50_us = 0;
    double p90_us = 0;
    double p99_us = 0;
    double max_us = 0;
    double total_us = 0; // the sum: how long the device spent on the timed jobs' commands
    // The first timed job's: where pipeline creation and first-use shader compilation fall
    // (lavapipe compiles its shaders then), which later jobs do not pay.
    double first_us = 0;
};

// One device's part of a task's counters: the task ran there (or had trial jobs there).
struct TaskDeviceStats {
    std::uint32_t device = 0; // adapter index
    bool active = false;      // submits go here now
    bool trial = false;       // only trial jobs ran here (the scheduler measuring it)
    std::uint64_t accepted = 0;
    std::uint64_t ready = 0;
    std::uint64_t trial_jobs = 0; // jobs Tandem ran here to measure the task
    std::uint64_t newest_generation = 0;
    std::uint32_t in_flight = 0;
    bool preparing = false;
    std::string preparation_error;
    bool worker_lost = false;
    // As TaskStats::gpu_timed and gpu_us, for the jobs that ran on this device.
    bool gpu_timed = false;
    GpuTimeStats gpu_us;
};

// A transfer path Tandem stopped using between a task's device and the primary: it failed its
// self-test on first use, its link could not be set up, or it failed while carrying the task.
// It is not negotiated for that pair again while the runtime lives.
struct DroppedTransferPath {
    std::string path;    // "zero-copy", "shared-memory", ... (as RuntimeOptions::transfer_path)
    std::string reason;  // a sentence: the step that failed and its VkResult, or the wrong byte
    bool inputs = false; // dropped in the primary -> device direction (task inputs)
};

// Where a chain's producer sends its output for consumers on another worker (a chain across
// two workers, tandem/input.hpp): one per such worker, on the pair's own path (never through
// the primary unless that is the path).
struct TaskFeedStats {
    std::uint32_t device = 0; // the consumers' adapter
    std::string path;         // "zero-copy", "host-copy", ...; empty when it could not be made
    // True when the consumers' device reads what the path carries where it crosses (a CPU
    // device on the host-imported path, as its inputs: RuntimeOptions::cpu_reads_inputs_in_place).
    bool read_in_place = false;
    std::uint64_t sent = 0; // outputs handed to that path (by the instance running now)
    bool wanted = false;    // a live consumer there reads it (else no longer filled)
    std::string error;      // why it could not be made, or why a send failed
    // The paths dropped for the pair (its device, that worker), oldest first: one that fails in
    // use is dropped and the task prepared again with the next.
    std::vector<DroppedTransferPath> dropped_paths;
};

// Counters of one task since registration, summed over the devices it ran on: the
// application's own submits only (the jobs Tandem runs to measure a task are trial_jobs). Stages:
// request
// (submit accepted), worker submit (worker GPU work queued), transfer queued (copy to the primary
// queued), worker done (worker GPU work observed complete), ready observed (primary copy observed
// complete by pump()).
struct TaskStats {
    TaskError error = TaskError::None; // UnknownTask: the id names no live task (all else empty)
    std::uint64_t accepted = 0;
    std::uint64_t busy = 0; // Busy and Preparing answers
    std::uint64_t failed = 0;
    std::uint64_t ready = 0;      // generations published (became the newest output)
    std::uint64_t superseded = 0; // completed after a newer generation was published
    std::uint32_t in_flight = 0;  // slots between accepted and ready
    std::uint64_t newest_generation = 0;
    LatencyStats worker_submit;
    LatencyStats transfer_queued;
    LatencyStats worker_done;
    LatencyStats ready_observed;
    bool worker_lost = false;
    std::string worker_lost_reason;
    // Registered with register_task_async and still being prepared (pipelines, uploads,
    // transfer resources) on a Tandem thread; submits answer Preparing meanwhile.
    bool preparing = false;
    // Set when the preparation failed: why, as a sentence (submits answer Failed with it).
    std::string preparation_error;
    // Jobs that were accepted and then failed in the task's workload (its record() threw): each
    // fails alone, its slot is reused, and the next job runs as usual. workload_error is the
    // newest failure's sentence. After RuntimeOptions::max_consecutive_failures in a row the
    // task stops: `stopped`, and submits answer Failed (TaskError::Stopped) with that sentence.
    std::uint64_t failed_jobs = 0;
    std::string workload_error;
    bool stopped = false;
    // Jobs Tandem ran to measure the task on other devices (the scheduler's trial jobs,
    // Runtime::calibrate): never handed out, and never counted in accepted/ready or in the
    // generations submit returns.
    std::uint64_t trial_jobs = 0;
    // Runtime::reconfigure calls that took effect (the task's shape now is the newest one).
    std::uint64_t reconfigurations = 0;
    // GPU time of each job's own commands: from a timestamp the runtime writes on the worker's
    // main queue just before the commands the task's workload records for the job (built-in or
    // TaskDesc::factory's) to one just after them. It leaves out Tandem's transfer to the
    // primary and its layout transitions, and the time the job waited before its commands
    // started. One sample per timed job whose commands ran to the end, taken once the worker's
    // completion watcher saw the job complete (so the count may trail `ready` for a moment).
    // Every job is timed, except on a CPU device, where the first few and then about one each
    // RuntimeOptions::cpu_device_timing_period are (gpu_us.untimed counts the others).
    // gpu_timed is false where the device's queue family writes no timestamps
    // (timestampValidBits 0), or while the task is being prepared; gpu_us stays empty then.
    // Both are the active device's, as the latencies are; `devices` has every device's.
    bool gpu_timed = false;
    GpuTimeStats gpu_us;
    // The adapter its submits go to now, how often the scheduler moved it, and each device's
    // part (the active one first). The counters above cover every device; the latencies, the
    // GPU time, preparation and loss are the active device's.
    std::uint32_t device = 0;
    std::string device_name;
    std::uint64_t moves = 0;
    std::vector<TaskDeviceStats> devices;
    // The path its outputs take to the primary now (SameDevice on the primary; none while a
    // registration is prepared, `preparing`, or when it could not be; transfer_path_name()
    // prints it), and the paths dropped for its device's pair with the primary, oldest first
    // (then those dropped for its inputs, in the other direction). A path that fails after
    // outputs were published is dropped and the task is prepared again on the same device with
    // the next path: its last output stays acquirable and its generations go on from where
    // they were.
    std::optional<TransferPath> transfer_path;
    std::vector<DroppedTransferPath> dropped_paths;
    // The path its inputs take from the primary to its device now ("same-device" on the
    // primary; empty for a task without inputs; "chained" when all its inputs are chained).
    std::string input_path;
    // True when its device reads its inputs where they cross (a CPU device on the host-imported
    // path, RuntimeOptions::cpu_reads_inputs_in_place): nothing copies them on that device.
    bool inputs_read_in_place = false;
    // True when its device writes its outputs where they cross (a CPU device on the
    // host-imported path, RuntimeOptions::cpu_writes_outputs_in_place): nothing copies them on
    // that device.
    bool outputs_written_in_place = false;
    // True when its outputs stay on its worker (TaskDesc::keep_output_on_worker, the task on a
    // worker): nothing hands them to the primary.
    bool outputs_kept_on_worker = false;
    // How many of its application inputs the primary copies with a compute dispatch rather than
    // vkCmdCopyImage (TaskInputDesc::application_usage): RGBA8 and BGRA8 inputs whose images
    // the application declared sampleable, where the primary allows it.
    std::uint32_t inputs_copied_by_compute = 0;
    // What carried its inputs: submits whose application inputs Tandem copied on the primary,
    // inputs sent over a link to its device, and chained inputs read in place on the producer's
    // device (none of them copied); submits that named lent images (Runtime::lend_inputs),
    // whose lent inputs nothing copied on the primary; and of those, the ones whose lent images
    // named their loan's own semaphore (InputLoan::written), which made no Vulkan call.
    std::uint64_t input_copies = 0;
    std::uint64_t input_sends = 0;
    // Of those sends, the ones a worker's job thread made for a queued job while an earlier
    // job waited for its own inputs, so that the next download is in flight meanwhile.
    std::uint64_t input_sends_early = 0;
    std::uint64_t chained_reads = 0;
    std::uint64_t lent_submits = 0;
    std::uint64_t lent_signalled_submits = 0;
    // The primary's GPU time for those copies (each submit's batch on the primary's main
    // queue, every input of it; for a lent input only its layout change): what a task's inputs
    // cost the primary's frame. A copy's time is
    // taken when its slot's next copy is recorded, so the newest few are not counted yet; empty
    // where the primary's main queue family writes no timestamps.
    GpuTimeStats input_copy_gpu_us;
    // As a chain's producer: its feeds to the workers where consumers of it run on another
    // device (empty when none does).
    std::vector<TaskFeedStats> feeds;
    // Its leases held now (acquired and not yet released, on any of its devices), how many of
    // them were held longer than max(10 of its periods between outputs, 1 s) (each is logged
    // once, at warn: a lease is meant for a frame or two), and the age of the oldest. The
    // period is measured from the outputs acquired; until two were, the 1 s floor alone counts.
    std::uint32_t leases_held = 0;
    std::uint32_t leases_held_long = 0;
    double oldest_lease_us = 0;
};

// Where a task's outputs stand, cheap enough to poll as often as a frame loop or a presenter
// likes (Runtime::progress): counters only, read under the task's lock, no latency percentiles
// and no allocation. Each field is the one of TaskStats with the same name, as stats() would
// answer at that moment.
struct TaskProgress {
    TaskError error = TaskError::None; // UnknownTask: the id names no live task (all else empty)
    std::uint64_t newest_generation = 0;
    std::uint32_t in_flight = 0;
    std::uint64_t reconfigurations = 0;
    bool preparing = false;
    bool stopped = false;
    bool worker_lost = false;
};

// TaskStats::transfer_path as text: the path's name (to_string), "(preparing)" while the task's
// registration is prepared, "(not prepared)" when it could not be, and "" for UnknownTask.
[[nodiscard]] TANDEM_API std::string transfer_path_name(const TaskStats& stats);

} // namespace tandem
