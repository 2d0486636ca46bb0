#include "runtime/task_preparer.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <list>
#include <optional>
#include <string_view>

#include "core/log.hpp"

#include "runtime/event_queue.hpp"
#include "runtime/task.hpp"
#include "runtime/task_inputs.hpp"
#include "tandem/error.hpp"
#include "workloads/application_workload.hpp"

namespace tandem::detail {
namespace {

// How link_failures.cpp begins the reason of a path it drops while a job carried it.
constexpr std::string_view k_in_use_drop = "it failed in use: ";

// Reports, when it goes, each path the pair dropped from adapter `from` while it lived: a
// self-test or slot images that failed while a task was prepared. No job carried those, so
// link_failures.cpp's in-use report never sees them; its own drops are skipped here.
class DropReport {
public:
    DropReport(const TaskInstance& task, const DevicePair& pair, std::uint32_t from)
        : m_task(task), m_pair(pair), m_from(from), m_before(pair.dropped(from).size()) {}
    DropReport(const DropReport&) = delete;
    DropReport& operator=(const DropReport&) = delete;
    ~DropReport() {
        EventQueue* events = m_task.owner->events;
        if (events == nullptr) {
            return;
        }
        try {
            const std::vector<DroppedTransferPath> dropped = m_pair.dropped(m_from);
            for (std::size_t i = m_before; i < dropped.size(); ++i) {
                if (dropped[i].reason.starts_with(k_in_use_drop)) {
                    continue; // a job's link failed meanwhile: reported where it was retired
                }
                events->post(RuntimeEventKind::TransferPathDropped, m_task.owner->id,
                             m_task.device(), 0, TaskError::TransferFailed,
                             "the " + dropped[i].path + " path from adapter " +
                                 std::to_string(m_from) + " is dropped for the pair: ",
                             dropped[i].reason);
            }
        } catch (...) {
            // Out of memory: the drop stays in the task's stats, unreported as an event.
        }
    }

private:
    const TaskInstance& m_task;
    const DevicePair& m_pair;
    std::uint32_t m_from;
    std::size_t m_before;
};

} // namespace

TaskPreparer::TaskPreparer(const Instance& instance, const Device& primary,
                           const RuntimeOptions& options, bool poll, DevicePairs& pairs,
                           RetireList& retire, TraceLog& trace)
    : m_instance(instance), m_primary(primary), m_options(options), m_poll(poll), m_pairs(pairs),
      m_retire(retire), m_trace(trace) {}

TaskPreparer::~TaskPreparer() {
    stop();
}

void TaskPreparer::start() {
    m_thread = start_logged_thread([this] { run(); });
}

void TaskPreparer::enqueue(TaskInstance& instance) {
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(&instance);
    }
    m_cv.notify_one();
}

bool TaskPreparer::cancel(TaskInstance& instance) noexcept {
    {
        std::lock_guard lock(m_mutex);
        const auto it = std::find(m_queue.begin(), m_queue.end(), &instance);
        if (it == m_queue.end()) {
            return false;
        }
        m_queue.erase(it);
        try {
            instance.preparation_error = "task '" + instance.desc.name +
                                         "' was no longer needed on " + instance.worker->label() +
                                         " before it was prepared there";
            instance.preparation_exception = std::make_exception_ptr(
                Error(instance.preparation_error, "Keep the task until it is prepared"));
        } catch (...) {
            // Out of memory for the words: it fails without them.
        }
        finish(instance, InstancePhase::Failed);
    }
    m_prepared_cv.notify_all();
    return true;
}

void TaskPreparer::finish(TaskInstance& instance, InstancePhase phase) noexcept {
    // Release: whoever sees the phase sees everything prepare() built.
    instance.phase.store(phase, std::memory_order_release);
}

void TaskPreparer::wait_prepared(const TaskInstance& instance) {
    std::unique_lock lock(m_mutex);
    m_prepared_cv.wait(lock, [&] { return !instance.preparing(); });
    if (instance.phase.load(std::memory_order_acquire) == InstancePhase::Failed) {
        // The caller gets an Error of its own: the stored one belongs to the instance, which the
        // completion thread frees once the failed task is unregistered, maybe while the caller
        // still reads what it caught (the exception's reference count, in the uninstrumented
        // C++ runtime, is no ordering ThreadSanitizer can see). Other exceptions (an
        // application's factory's own) are rethrown as they are.
        try {
            std::rethrow_exception(instance.preparation_exception);
        } catch (const Error& e) {
            throw Error(e.category(), e.result(), e.context(), e.hint());
        }
    }
}

void TaskPreparer::run() noexcept {
    for (;;) {
        TaskInstance* instance = nullptr;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_stop) {
                return; // stop() fails what is left
            }
            instance = m_queue.front();
            m_queue.pop_front();
        }
        InstancePhase phase = InstancePhase::Ready;
        try {
            prepare(*instance);
        } catch (const std::exception& e) {
            instance->preparation_error = e.what();
            instance->preparation_exception = std::current_exception();
            phase = InstancePhase::Failed;
        } catch (...) {
            instance->preparation_error = "preparing task '" + instance->desc.name + "' failed";
            instance->preparation_exception = std::current_exception();
            phase = InstancePhase::Failed;
        }
        if (phase == InstancePhase::Failed) {
            log_debug("runtime", "task '{}' could not be prepared on {}: {}", instance->desc.name,
                      instance->worker->label(), instance->preparation_error);
            if (EventQueue* events = instance->owner->events) {
                events->post(RuntimeEventKind::PreparationFailed, instance->owner->id,
                             instance->device(), 0, TaskError::PreparationFailed,
                             instance->worker->label(),
                             " could not prepare the task: ", instance->preparation_error);
            }
        }
        {
            std::lock_guard lock(m_mutex);
            finish(*instance, phase);
        }
        m_prepared_cv.notify_all();
    }
}

void TaskPreparer::stop() noexcept {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    std::lock_guard lock(m_mutex);
    for (TaskInstance* instance : m_queue) {
        instance->preparation_error =
            "the runtime stopped before task '" + instance->desc.name + "' was prepared";
        instance->preparation_exception = std::make_exception_ptr(
            Error(instance->preparation_error, "Keep the runtime until its tasks are prepared"));
        finish(*instance, InstancePhase::Failed);
    }
    m_queue.clear();
    m_prepared_cv.notify_all();
}

std::vector<SlotImages> TaskPreparer::make_transport_and_images(TaskInstance& task,
                                                                TransferDesc& td) {
    const Device& device = task.worker->device();
    // Sampled too: a chain's consumer on the device reads the image in place (task_chains.hpp).
    // Copied from at the end of each job when it feeds other workers (chain_feeds.hpp).
    const SlotImageUsage usage{task.workload->target_usage() | VK_IMAGE_USAGE_SAMPLED_BIT |
                                   (task.feeds.workers().empty()
                                        ? VkImageUsageFlags{0}
                                        : VkImageUsageFlags{VK_IMAGE_USAGE_TRANSFER_SRC_BIT}),
                               VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT};
    if (task.same_device) {
        task.transport = make_local_transport(device, td);
        return make_slot_images(*task.transport, td.name, td.slots, usage);
    }
    DevicePair& pair = m_pairs.pair(device, m_primary);
    const DropReport report(task, pair, device.info().index);
    // A CPU worker may render into the host staging itself (the job leaves the image in the
    // layout the transport asks for); not the inputs' or feeds' links, which copy td.
    TransferDesc outputs = td;
    outputs.write_in_place = m_options.cpu_writes_outputs_in_place;
    outputs.worker_usage = usage.sender;
    OpenedStream opened =
        pair.open_with_images(device, outputs, usage, "making a task's slot images failed: ");
    task.transport = std::move(opened.link);
    return std::move(opened.images);
}

std::unique_ptr<SlotTransport> TaskPreparer::make_input_link(const Device& device,
                                                             const TaskInputDesc& input,
                                                             const TransferDesc& output) {
    // The roles swapped: the primary sends, the task's device receives.
    TransferDesc td = output;
    td.name = output.name + " input " + input.name;
    td.width = input.width;
    td.height = input.height;
    td.format = input.format;
    td.worker_progress = nullptr; // the sender is the primary; the watchdog minds the worker
    // A job reads its inputs in the layout RecordContext gives (GENERAL, read in place).
    td.read_in_place = m_options.cpu_reads_inputs_in_place;
    return m_pairs.pair(m_primary, device).open_stream(m_primary, td);
}

void TaskPreparer::prepare_feeds(TaskInstance& task, const TransferDesc& output) {
    const Device& from = task.worker->device();
    std::list<DropReport> reports;
    for (const Worker* to : task.feeds.workers()) {
        reports.emplace_back(task, m_pairs.pair(from, to->device()), from.info().index);
    }
    TransferDesc td = output;
    // Its consumers read it as their inputs, in the layout given (GENERAL, read in place).
    td.read_in_place = m_options.cpu_reads_inputs_in_place;
    std::vector<std::unique_ptr<ChainFeed>> made = task.feeds.make(from, m_pairs, td);
    // Published under the task's mutex: consumers' registrations walk every instance's feeds
    // under it, this one's too while it is prepared.
    std::lock_guard lock(task.owner->mutex);
    task.feeds.adopt(std::move(made), task.owner->links.feed_counts);
}

void TaskPreparer::prepare(TaskInstance& instance) {
    TaskInstance* task = &instance;
    const TaskDesc& desc = task->desc;
    const Device& device = task->worker->device();
    task->same_device = &device == &m_primary;

    WorkloadParams params;
    params.task_name = desc.name;
    params.width = desc.width;
    params.height = desc.height;
    params.format = desc.format;
    params.slots = desc.slots;
    params.inputs = resolved_inputs(desc);
    if (desc.factory) {
        task->workload = std::make_unique<ApplicationWorkload>(desc.factory, m_instance.handle(),
                                                               device, params);
    } else {
        task->workload = task->named_workload(device, params);
    }

    TransferDesc td;
    td.name = device.label() + " " + desc.name;
    td.width = desc.width;
    td.height = desc.height;
    td.format = desc.format;
    td.slots = desc.slots;
    // The bridge never gives up on its own: the runtime's watchdog decides when a worker is lost
    // (Worker::allowance), so a slow worker's long job does not fail its link.
    td.timeout = std::chrono::milliseconds(0);
    // Without polling the bridge sleeps at once, leaving the CPU to a CPU device or a small
    // machine.
    if (!m_poll) {
        td.bridge_spin = std::chrono::microseconds(0);
    }
    // Links retire through the runtime's list (so nothing settles a device), and so does what
    // the paths' self-tests made.
    td.retire = &m_retire;
    td.settle_on_destroy = false;
    Worker* worker = task->worker;
    td.worker_progress = [worker] { return worker->completed_work(); };
    if (!m_options.transfer_path.empty()) {
        td.forced = parse_transfer_path(m_options.transfer_path);
    }
    std::vector<SlotImages> images = make_transport_and_images(*task, td);
    {
        // Inputs travel primary -> device: their pair's drops are keyed from the primary.
        std::optional<DropReport> report;
        if (!task->same_device && !params.inputs.empty()) {
            report.emplace(*task, m_pairs.pair(m_primary, device), m_primary.info().index);
        }
        // The copy command where it is a memcpy (a CPU device), else shader cores.
        const bool compute_copies =
            m_options.input_copies == RuntimeOptions::InputCopies::Compute ||
            (m_options.input_copies == RuntimeOptions::InputCopies::Auto &&
             m_primary.info().type != "cpu");
        prepare_inputs(
            *task, m_primary, params.inputs, compute_copies,
            [&](const TaskInputDesc& input) { return make_input_link(device, input, td); });
    }
    make_sources(*task, params.inputs);
    prepare_feeds(*task, td);

    task->pool =
        CommandPool(device, device.queue(QueueRole::Main).family(), td.name + " worker pool");
    task->timing.timer = JobTimer::create(device, desc.slots, td.name);
    if (device.info().type == "cpu") {
        task->timing.period = m_options.cpu_device_timing_period;
    }
    for (std::uint32_t i = 0; i < desc.slots; ++i) {
        SlotResources r;
        r.worker_image = std::move(images[i].sender);
        r.primary_image = std::move(images[i].receiver);
        r.cmd = task->pool.allocate(td.name + " slot " + std::to_string(i) + " commands");
        task->slots.push_back(std::move(r));
    }
    task->trace_worker_queue = m_trace.track(device.label() + " main queue");
    task->trace_transfer_queue =
        m_trace.track(m_primary.label() + (task->same_device ? " main queue" : " transfer queue"));
    log_debug("runtime", "task '{}' ({}x{}, {} slots, workload {}) on {} via {}{}", desc.name,
              desc.width, desc.height, desc.slots, desc.workload, device.label(),
              task->transport->path_name(), task->timing.timer ? "" : ", no GPU timestamps");
}

} // namespace tandem::detail
