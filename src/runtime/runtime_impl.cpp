#include "runtime/runtime_impl.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/capabilities.hpp"
#include "core/cpu.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "workloads/application_workload.hpp"

namespace tandem::detail {
namespace {

double micros(Clock::time_point from, Clock::time_point to) noexcept {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

Validation pick_validation(const RuntimeOptions& options) {
    if (options.validation.empty()) {
        return validation_from_env(Validation::Off);
    }
    auto parsed = parse_validation(options.validation);
    if (!parsed) {
        throw Error("Validation '" + options.validation + "' is not understood",
                    "Use off, core or sync");
    }
    return *parsed;
}

std::uint32_t pick_virtual_devices(const RuntimeOptions& options) {
    return options.virtual_devices != 0 ? options.virtual_devices : virtual_devices_from_env(1);
}

// The task's counters into `out`; the caller holds task.mutex.
void copy_counters(const Task& task, TaskStats& out) {
    out.accepted = task.accepted;
    out.busy = task.busy;
    out.failed = task.failed;
    out.ready = task.ready;
    out.superseded = task.superseded;
    out.in_flight = task.ring.in_flight_count();
    if (auto c = task.registry.current()) {
        out.newest_generation = c->generation;
    }
    // Acquire: the error is written before the phase.
    const TaskPhase phase = task.phase.load(std::memory_order_acquire);
    out.preparing = phase == TaskPhase::Preparing;
    if (phase == TaskPhase::Failed) {
        out.preparation_error = task.preparation_error;
    }
    out.workload_error = task.workload_error;
}

// Whether the task's worker is lost, and why. Reported once the slots are retired, so a caller
// that sees it also sees them retired. Without task.mutex (the worker locks its own).
void copy_loss(const Task& task, TaskStats& out) {
    out.worker_lost = task.worker->retired();
    if (out.worker_lost) {
        out.worker_lost_reason = task.worker->lost_reason();
    }
}

std::string worker_submit_context(const Worker& worker) {
    return "worker submit " + worker.label();
}

} // namespace

RuntimeImpl::RuntimeImpl(const RuntimeOptions& options)
    : m_options(options), m_timeout_ms(options.worker_timeout.count()), m_trace(options.trace) {
    InstanceOptions instance_options;
    instance_options.validation = pick_validation(options);
    m_instance = std::make_unique<Instance>(instance_options);
    m_adapters = discover_adapters(*m_instance, pick_virtual_devices(options));
    const Selection selection = select_adapters(m_adapters, options.primary, options.workers);
    DeviceOptions primary_options;
    primary_options.label = "primary";
    m_primary =
        std::make_unique<Device>(*m_instance, m_adapters[selection.primary], primary_options);
    open_workers(selection.workers);
}

RuntimeImpl::RuntimeImpl(const EmbedInfo& embed, const RuntimeOptions& options)
    : m_options(options), m_timeout_ms(options.worker_timeout.count()), m_trace(options.trace) {
    m_instance = std::make_unique<Instance>(embed.instance, embed.debug_utils);
    m_adapters = discover_adapters(*m_instance, pick_virtual_devices(options));
    std::optional<std::uint32_t> primary_index;
    for (const auto& a : m_adapters) {
        if (a.physical == embed.physical_device && !primary_index) {
            primary_index = a.info.index;
        }
    }
    if (!primary_index) {
        throw Error("The application's physical device is not one of its instance's devices",
                    "Pass the VkPhysicalDevice the VkDevice was created from");
    }
    const Selection selection =
        select_adapters(m_adapters, std::to_string(*primary_index), options.workers);
    AdoptedDevice adopted;
    adopted.device = embed.device;
    adopted.queue_family = embed.queue_family;
    adopted.queue_index = embed.queue_index;
    adopted.queue_lock = embed.queue_mutex;
    adopted.enabled_extensions = embed.enabled_extensions;
    DeviceOptions primary_options;
    primary_options.label = "primary";
    m_primary =
        std::make_unique<Device>(*m_instance, m_adapters[*primary_index], adopted, primary_options);
    open_workers(selection.workers);
}

void RuntimeImpl::open_workers(const std::vector<std::uint32_t>& worker_adapters) {
    m_tasks.reserve(k_max_tasks);
    for (std::uint32_t index : worker_adapters) {
        DeviceOptions o;
        o.label = "worker" + std::to_string(m_worker_devices.size() + 1);
        m_worker_devices.push_back(std::make_unique<Device>(*m_instance, m_adapters[index], o));
    }
    m_reads = std::make_unique<TimelineSemaphore>(*m_primary, "tandem primary timeline");
    m_trace_app = m_trace.track("app thread");
    bool cpu_device = m_primary->info().type == "cpu";
    for (const auto& device : m_worker_devices) {
        cpu_device = cpu_device || device->info().type == "cpu";
    }
    m_poll = may_poll(cpu_device);
    start_worker_threads();
    m_completion = std::thread([this] { completion_loop(); });
    m_preparer = std::thread([this] { preparation_loop(); });
}

void RuntimeImpl::start_worker_threads() {
    auto on_job = [this](Worker& w, const WorkerJob& job) { process_job(w, job); };
    auto on_drop = [this](Worker&, const WorkerJob& job) { drop_job(job); };
    auto on_complete = [this](Worker&, const WorkerJob& job) { job_completed(job); };
    m_workers.push_back(
        std::make_unique<Worker>(*m_primary, 0, on_job, on_drop, on_complete, m_poll));
    for (std::size_t i = 0; i < m_worker_devices.size(); ++i) {
        m_workers.push_back(std::make_unique<Worker>(*m_worker_devices[i],
                                                     static_cast<std::uint32_t>(i + 1), on_job,
                                                     on_drop, on_complete, m_poll));
    }
}

void RuntimeImpl::job_completed(const WorkerJob& job) noexcept {
    job.task->workload->completed(job.slot, job.generation);
}

RuntimeImpl::~RuntimeImpl() {
    // Stop the threads first (queued jobs are dropped: their slots retire, no GPU work), then
    // wait, bounded, for GPU work in flight, then destroy tasks before the devices they use.
    // A preparation in progress finishes first; queued ones fail.
    stop_preparation();
    m_stop_completion.store(true, std::memory_order_relaxed);
    if (m_completion.joinable()) {
        m_completion.join();
    }
    for (auto& w : m_workers) {
        w->stop();
    }
    const bool drained = drain();
    for (auto& w : m_workers) {
        w->observe_completions(); // what completed after the watchers stopped
    }
    if (drained) {
        // The last values reached; the batches behind them may still be finishing in the driver
        // (lavapipe releases a batch's wait semaphores after signalling). Destroy nothing before.
        const auto timeout =
            std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
        auto settle = [&](const Device& device) {
            if (device.settle(timeout) == VK_TIMEOUT) {
                spdlog::warn("{}: work still in flight at shutdown", device.label());
            }
        };
        settle(*m_primary);
        for (const auto& device : m_worker_devices) {
            settle(*device);
        }
    }
    m_tasks.clear();
    m_workers.clear();
    m_reads.reset();
    m_worker_devices.clear();
    m_primary.reset();
    m_instance.reset();
}

bool RuntimeImpl::drain() noexcept {
    bool reached = true;
    const auto timeout = std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
    const std::size_t count = m_task_count.load(std::memory_order_acquire);
    for (std::size_t t = 0; t < count; ++t) {
        Task& task = *m_tasks[t];
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
            wait(m_primary->handle(), task.transport->primary_semaphore(), primary_value);
        }
        wait(m_primary->handle(), m_reads->handle(), release_value);
    }
    return reached;
}

Task* RuntimeImpl::find(TaskId id) const noexcept {
    // Acquire: pairs with the release in register_task, so the task is fully built.
    const std::size_t count = m_task_count.load(std::memory_order_acquire);
    return id < count ? m_tasks[id].get() : nullptr;
}

Worker& RuntimeImpl::place(const TaskDesc& desc) {
    const std::string& p = desc.placement;
    if (p == "primary") {
        return *m_workers[0];
    }
    if (p == "auto" || p.empty()) {
        Worker* best = m_workers[0].get();
        for (std::size_t i = 1; i < m_workers.size(); ++i) {
            Worker* w = m_workers[i].get();
            if (w->lost()) {
                continue;
            }
            if (best == m_workers[0].get() || w->task_count.load() < best->task_count.load()) {
                best = w;
            }
        }
        return *best;
    }
    if (p.rfind("worker:", 0) == 0) {
        const std::string n = p.substr(7);
        char* end = nullptr;
        const unsigned long k = std::strtoul(n.c_str(), &end, 10);
        if (n.empty() || end != n.c_str() + n.size() || k + 1 >= m_workers.size()) {
            throw Error("Placement '" + p + "' names no worker",
                        "This runtime has " + std::to_string(m_workers.size() - 1) +
                            " worker(s): use worker:0 to worker:" +
                            std::to_string(m_workers.size() > 1 ? m_workers.size() - 2 : 0) +
                            ", primary or auto");
        }
        return *m_workers[k + 1];
    }
    for (std::uint32_t index : match_adapters(m_adapters, p)) {
        for (std::size_t i = 1; i < m_workers.size(); ++i) {
            if (m_workers[i]->device().info().index == index) {
                return *m_workers[i];
            }
        }
        if (m_primary->info().index == index) {
            return *m_workers[0];
        }
    }
    throw Error("Placement '" + p + "' matches no device of this runtime",
                "Use auto, primary, worker:N or a selector of one of its workers");
}

TaskId RuntimeImpl::register_task(const TaskDesc& desc) {
    const TaskId id = register_task_async(desc);
    Task& task = *find(id);
    std::unique_lock lock(m_prepare_mutex);
    m_prepared_cv.wait(
        lock, [&] { return task.phase.load(std::memory_order_acquire) != TaskPhase::Preparing; });
    if (task.phase.load(std::memory_order_acquire) == TaskPhase::Failed) {
        std::rethrow_exception(task.preparation_exception);
    }
    return id;
}

TaskId RuntimeImpl::register_task_async(const TaskDesc& desc) {
    if (desc.slots < 2 || desc.slots > 16) {
        throw Error("Task '" + desc.name + "' asks for " + std::to_string(desc.slots) + " slots",
                    "Use 2 to 16 slots (3 is the default)");
    }
    if (desc.width == 0 || desc.height == 0 || desc.width > 16384 || desc.height > 16384) {
        throw Error("Task '" + desc.name + "' has size " + std::to_string(desc.width) + "x" +
                        std::to_string(desc.height),
                    "Use a width and height from 1 to 16384");
    }
    if (!m_options.transfer_path.empty() && !parse_transfer_path(m_options.transfer_path)) {
        throw Error("Transfer path '" + m_options.transfer_path + "' is not known",
                    "Use same-device, shared-memory, host-imported or host-copy");
    }
    if (!desc.factory) {
        (void)find_workload(desc.workload); // an unknown name is refused now, not later
    }
    Task* task = nullptr;
    {
        std::lock_guard lock(m_register_mutex);
        if (m_tasks.size() >= k_max_tasks) {
            throw Error("Too many tasks", "A runtime holds at most 256 tasks");
        }
        Worker& worker = place(desc);
        const auto id = static_cast<TaskId>(m_tasks.size());
        m_tasks.push_back(std::make_unique<Task>(id, desc, worker));
        task = m_tasks.back().get();
        worker.task_count.fetch_add(1, std::memory_order_relaxed);
        // Release: find() on another thread sees the whole task once it sees the count.
        m_task_count.store(m_tasks.size(), std::memory_order_release);
    }
    {
        std::lock_guard lock(m_prepare_mutex);
        m_to_prepare.push_back(task);
    }
    m_prepare_cv.notify_one();
    return task->id;
}

void RuntimeImpl::preparation_loop() noexcept {
    for (;;) {
        Task* task = nullptr;
        {
            std::unique_lock lock(m_prepare_mutex);
            m_prepare_cv.wait(lock, [&] { return m_stop_prepare || !m_to_prepare.empty(); });
            if (m_stop_prepare) {
                return; // stop_preparation() fails what is left
            }
            task = m_to_prepare.front();
            m_to_prepare.pop_front();
        }
        TaskPhase phase = TaskPhase::Ready;
        try {
            prepare(*task);
        } catch (const std::exception& e) {
            task->preparation_error = e.what();
            task->preparation_exception = std::current_exception();
            phase = TaskPhase::Failed;
        } catch (...) {
            task->preparation_error = "preparing task '" + task->desc.name + "' failed";
            task->preparation_exception = std::current_exception();
            phase = TaskPhase::Failed;
        }
        if (phase == TaskPhase::Failed) {
            task->worker->task_count.fetch_sub(1, std::memory_order_relaxed);
            spdlog::debug("task {} '{}' could not be prepared: {}", task->id, task->desc.name,
                          task->preparation_error);
        }
        {
            std::lock_guard lock(m_prepare_mutex);
            // Release: whoever sees the phase sees everything prepare() built.
            task->phase.store(phase, std::memory_order_release);
        }
        m_prepared_cv.notify_all();
    }
}

void RuntimeImpl::stop_preparation() noexcept {
    {
        std::lock_guard lock(m_prepare_mutex);
        m_stop_prepare = true;
    }
    m_prepare_cv.notify_all();
    if (m_preparer.joinable()) {
        m_preparer.join();
    }
    std::lock_guard lock(m_prepare_mutex);
    for (Task* task : m_to_prepare) {
        task->preparation_error =
            "the runtime stopped before task '" + task->desc.name + "' was prepared";
        task->preparation_exception = std::make_exception_ptr(
            Error(task->preparation_error, "Keep the runtime until its tasks are prepared"));
        task->phase.store(TaskPhase::Failed, std::memory_order_release);
    }
    m_to_prepare.clear();
    m_prepared_cv.notify_all();
}

void RuntimeImpl::prepare(Task& task_ref) {
    Task* task = &task_ref;
    const TaskDesc& desc = task->desc;
    const TaskId id = task->id;
    const Device& device = task->worker->device();
    task->same_device = &device == m_primary.get();

    WorkloadParams params;
    params.task_name = desc.name;
    params.width = desc.width;
    params.height = desc.height;
    params.format = desc.format;
    params.slots = desc.slots;
    if (desc.factory) {
        task->workload = std::make_unique<ApplicationWorkload>(desc.factory, m_instance->handle(),
                                                               device, params);
    } else {
        task->workload = create_workload(desc.workload, device, params);
    }

    TransportDesc td;
    td.name = device.label() + " " + desc.name;
    td.width = desc.width;
    td.height = desc.height;
    td.format = desc.format;
    td.slots = desc.slots;
    td.timeout = m_options.worker_timeout;
    td.spin = m_poll;
    Worker* worker = task->worker;
    td.worker_progress = [worker] { return worker->completed_work(); };
    if (!m_options.transfer_path.empty()) {
        td.forced = parse_transfer_path(m_options.transfer_path);
    }
    if (task->same_device) {
        task->transport = make_local_transport(device, td);
    } else {
        const PairInfo pair = query_pair_info(device.info(), m_primary->info());
        task->transport = make_link_transport(device, *m_primary, pair, td);
    }

    task->pool =
        CommandPool(device, device.queue(QueueRole::Main).family(), td.name + " worker pool");
    const VkImageUsageFlags usage = task->workload->target_usage();
    for (std::uint32_t i = 0; i < desc.slots; ++i) {
        SlotResources r;
        const std::string base = td.name + " slot " + std::to_string(i);
        ImageDesc primary_desc = task->transport->primary_image_desc(base + " primary");
        primary_desc.usage |= VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
        if (task->transport->shares_images()) {
            primary_desc.usage |= usage;
            r.primary_image = create_image(*m_primary, primary_desc);
        } else {
            ImageDesc worker_desc = task->transport->worker_image_desc(base + " worker");
            worker_desc.usage |= usage;
            r.worker_image = create_image(device, worker_desc);
            r.primary_image = create_image(*m_primary, primary_desc);
        }
        r.cmd = task->pool.allocate(base + " commands");
        task->slots.push_back(std::move(r));
    }
    task->trace_worker_queue = m_trace.track(device.label() + " main queue");
    task->trace_transfer_queue =
        m_trace.track(m_primary->label() + (task->same_device ? " main queue" : " transfer queue"));
    spdlog::debug("task {} '{}' ({}x{}, {} slots, workload {}) on {} via {}", id, desc.name,
                  desc.width, desc.height, desc.slots, desc.workload, device.label(),
                  task->transport->path_name());
}

SubmitResult RuntimeImpl::submit(TaskId id, std::span<const std::byte> snapshot) noexcept {
    SubmitResult out;
    Task* task = find(id);
    if (task == nullptr) {
        out.reason = "Task " + std::to_string(id) + " is not registered";
        return out;
    }
    const auto now = Clock::now();
    WorkerJob job;
    {
        std::lock_guard lock(task->mutex);
        switch (task->phase.load(std::memory_order_acquire)) {
        case TaskPhase::Preparing:
            ++task->busy;
            out.status = SubmitStatus::Preparing;
            out.reason = "task '" + task->desc.name + "' is still being prepared on " +
                         task->worker->label();
            return out;
        case TaskPhase::Failed:
            ++task->failed;
            out.reason = task->preparation_error;
            return out;
        case TaskPhase::Ready:
            break;
        }
        if (task->stopped) {
            ++task->failed;
            out.reason = "task '" + task->desc.name + "' stopped: " + task->workload_error;
            return out;
        }
        if (task->worker->lost()) {
            ++task->failed;
            out.reason = task->worker->label() + " is lost: " + task->worker->lost_reason();
            return out;
        }
        auto slot = task->ring.try_take_free();
        if (!slot) {
            ++task->busy;
            out.status = SubmitStatus::Busy;
            return out;
        }
        SlotRecord& s = task->ring[*slot];
        s.generation = ++task->next_generation;
        s.worker_done_seen = false;
        s.published = false;
        s.times = SlotTimes{};
        s.times.request = now;
        try {
            task->slots[*slot].snapshot.assign(snapshot.begin(), snapshot.end());
        } catch (...) {
            (void)task->ring.apply(*slot, SlotEvent::Fail);
            ++task->failed;
            out.reason = "Out of memory copying the snapshot";
            return out;
        }
        ++task->accepted;
        out.status = SubmitStatus::Accepted;
        out.generation = s.generation;
        job = WorkerJob{task, *slot, s.generation};
    }
    task->worker->enqueue(job);
    return out;
}

void RuntimeImpl::drop_job(const WorkerJob& job) noexcept {
    std::lock_guard lock(job.task->mutex);
    SlotRecord& s = job.task->ring[job.slot];
    if (s.state == SlotState::Recording && s.generation == job.generation) {
        (void)job.task->ring.apply(job.slot, SlotEvent::Fail);
    }
}

void RuntimeImpl::fail_job(Worker& worker, const WorkerJob& job,
                           const std::string& reason) noexcept {
    lose_worker(worker, reason);
    std::lock_guard lock(job.task->mutex);
    (void)job.task->ring.apply(job.slot, SlotEvent::Fail);
}

void RuntimeImpl::process_job(Worker& worker, const WorkerJob& job) noexcept {
    Task& task = *job.task;
    const auto t0 = Clock::now();
    worker.set_activity(Worker::Thread::Jobs, "recording", job.generation);
    std::uint64_t wait_worker = 0;
    std::uint64_t wait_reads = 0;
    {
        std::lock_guard lock(task.mutex);
        const SlotRecord& s = task.ring[job.slot];
        if (s.state != SlotState::Recording || s.generation != job.generation) {
            return; // retired meanwhile
        }
        wait_worker = s.worker_value;
        wait_reads = s.release_value;
    }
    SlotResources& res = task.slots[job.slot];
    auto fail = [&](const std::string& reason) { fail_job(worker, job, reason); };
    if (worker.lost()) {
        fail(worker.lost_reason());
        return;
    }

    const Image& target_image = res.written();
    VkCommandBuffer cmd = res.cmd;
    VkResult r = vk_status(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer worker");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (r == VK_SUCCESS) {
        r = vk_status(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer worker");
    }
    if (r == VK_SUCCESS) {
        WorkloadTarget target;
        target.image = target_image.get();
        target.view = target_image.view.get();
        target.format = target_image.format;
        target.width = target_image.extent.width;
        target.height = target_image.extent.height;
        target.layout = VK_IMAGE_LAYOUT_UNDEFINED;
        worker.device().begin_label(cmd, task.desc.name.c_str());
        r = task.workload->record(cmd, job.slot, target, job.generation, res.snapshot);
        if (r == VK_SUCCESS && !task.transport->shares_images()) {
            // The transfer copies from it next: TRANSFER_SRC_OPTIMAL is the layout copies want.
            // The signal below makes the writes available to the transfer's wait.
            const WorkloadOutput out = task.workload->output();
            image_barrier(cmd, target.image, out.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          out.stage, out.access, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                          VK_ACCESS_2_NONE);
        }
        worker.device().end_label(cmd);
    }
    if (r == VK_SUCCESS) {
        r = vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer worker");
    }
    if (r != VK_SUCCESS) {
        if (std::string why = task.workload->failure(); !why.empty()) {
            // The application's code failed, not the device: the task stops, the worker goes on.
            spdlog::error("task '{}' stopped: {}", task.desc.name, why);
            std::lock_guard lock(task.mutex);
            if (!task.stopped) {
                task.stopped = true;
                task.workload_error = std::move(why);
            }
            (void)task.ring.apply(job.slot, SlotEvent::Fail);
            return;
        }
        fail("recording " + task.desc.name + " failed (" + tandem::to_string(r) + ")");
        return;
    }

    // Waits: the transport finished reading the worker image of this slot's previous round;
    // on one device the image is also the primary image, so the application's reads of it
    // (primary timeline) must have finished too.
    VkSemaphoreSubmitInfo waits[2];
    std::uint32_t wait_count = 0;
    if (wait_worker > 0) {
        waits[wait_count] = VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        waits[wait_count].semaphore = task.transport->worker_semaphore();
        waits[wait_count].value = wait_worker;
        waits[wait_count].stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        ++wait_count;
    }
    if (task.same_device && wait_reads > 0) {
        waits[wait_count] = m_reads->submit_info(wait_reads, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        ++wait_count;
    }
    worker.set_activity(Worker::Thread::Jobs, "submitting the work", job.generation);
    const std::uint64_t work_value = worker.next_work_value();
    VkSemaphoreSubmitInfo signal =
        worker.work_timeline().submit_info(work_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    r = vk_status(
        worker.device().queue(QueueRole::Main).submit_one(cmd, {waits, wait_count}, {&signal, 1}),
        worker_submit_context(worker));
    if (r != VK_SUCCESS) {
        fail("its submit failed (" + std::string(tandem::to_string(r)) + ")");
        return;
    }
    const auto t_submit = Clock::now();
    worker.note_submitted(job, work_value);

    // The transfer is submitted by the worker's transfer thread, so this thread can record and
    // submit the next job meanwhile. The slot stays Recording (owned by this job) until then.
    const VkImage worker_image = target_image.get();
    worker.enqueue_transfer(
        job, [this, &worker, job, t0, t_submit, work_value, signal, worker_image] {
            submit_transfer(worker, job, t0, t_submit, work_value, signal, worker_image);
        });
}

void RuntimeImpl::submit_transfer(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                                  Clock::time_point t_submit, std::uint64_t work_value,
                                  VkSemaphoreSubmitInfo signal, VkImage worker_image) noexcept {
    Task& task = *job.task;
    SlotResources& res = task.slots[job.slot];
    auto fail = [&](const std::string& reason) { fail_job(worker, job, reason); };
    if (worker.lost()) {
        fail(worker.lost_reason());
        return;
    }
    using Thread = Worker::Thread;
    worker.set_activity(Thread::Transfers, "submitting the transfer", job.generation);
    SlotTicket ticket;
    const VkImageLayout written_layout = task.transport->shares_images()
                                             ? task.workload->output().layout
                                             : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkResult r = task.transport->submit(job.slot, worker_image, written_layout, signal,
                                        res.primary_image.get(), res.primary_layout, ticket);
    // VK_NOT_READY: the transfer's queue to the primary is full for now; the worker work is
    // already submitted, so retry until it takes it (bounded by the worker timeout).
    const auto give_up = t_submit + std::chrono::milliseconds(m_timeout_ms.load());
    if (r == VK_NOT_READY) {
        worker.set_activity(Thread::Transfers, "retrying the transfer (not ready)", job.generation);
    }
    while (r == VK_NOT_READY && Clock::now() < give_up && !worker.lost()) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        r = task.transport->submit(job.slot, worker_image, written_layout, signal,
                                   res.primary_image.get(), res.primary_layout, ticket);
    }
    const auto t_queued = Clock::now();
    if (r != VK_SUCCESS) {
        const std::string why =
            task.transport->failed() ? task.transport->error() : std::string(tandem::to_string(r));
        fail("the transfer of " + task.desc.name + " failed (" + why + ")");
        return;
    }
    res.primary_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    worker.set_activity(Thread::Transfers, "publishing the submit", job.generation);
    {
        std::lock_guard lock(task.mutex);
        SlotRecord& s = task.ring[job.slot];
        s.work_value = work_value;
        s.worker_value = ticket.worker_value;
        s.primary_value = ticket.primary_value;
        s.times.worker_submit = t_submit;
        s.times.transfer_queued = t_queued;
        task.worker_submit_us.add(micros(s.times.request, t_submit));
        task.transfer_queued_us.add(micros(s.times.request, t_queued));
        (void)task.ring.apply(job.slot, SlotEvent::Submitted); // stays Retired if lost meanwhile
    }
    if (m_trace.enabled()) {
        m_trace.span(m_trace.track(worker.label() + " submit thread"),
                     "record+submit " + task.desc.name, t0, t_queued, job.generation,
                     task.desc.name);
    }
}

void RuntimeImpl::pump() noexcept {
    const auto t0 = Clock::now();
    pump_all();
    if (m_trace.enabled()) {
        m_trace.span(m_trace_app, "pump", t0, Clock::now());
    }
}

void RuntimeImpl::completion_loop() noexcept {
    // Polls the counters rather than blocking in vkWaitSemaphores: on the H200s a thread blocked
    // there (even with a 2 ms timeout) made the application's frame loop on the same device about
    // 2 ms slower per frame, and blocking waits can wake late. The sleep grows while nothing
    // completes and drops back at once when something does, so an idle runtime costs a wake-up
    // every k_max_sleep and a busy one sees completions within microseconds.
    constexpr auto k_min_sleep = std::chrono::microseconds(5);
    constexpr auto k_max_sleep = std::chrono::microseconds(200);
    auto sleep = k_min_sleep;
    std::vector<std::pair<VkSemaphore, std::uint64_t>> expected;
    while (!m_stop_completion.load(std::memory_order_relaxed)) {
        pump_all();
        // What completes next: every transport's primary timeline (each task's earliest value
        // in flight) and the application's primary timeline (the earliest release value).
        expected.clear();
        std::uint64_t reads_needed = UINT64_MAX;
        const std::size_t count = m_task_count.load(std::memory_order_acquire);
        for (std::size_t t = 0; t < count; ++t) {
            Task& task = *m_tasks[t];
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
                    if (slot.state == SlotState::Leased && slot.leases == 0) {
                        reads_needed = std::min(reads_needed, slot.release_value);
                    }
                }
            }
            if (next != UINT64_MAX) {
                expected.emplace_back(task.transport->primary_semaphore(), next);
            }
        }
        if (reads_needed != UINT64_MAX) {
            expected.emplace_back(m_reads->handle(), reads_needed);
        }
        // Poll until one of them is reached (or new work may have arrived: at most k_max_sleep).
        bool reached = false;
        const auto give_up = Clock::now() + k_max_sleep;
        while (!reached && !expected.empty() && Clock::now() < give_up &&
               !m_stop_completion.load(std::memory_order_relaxed)) {
            for (const auto& [semaphore, value] : expected) {
                std::uint64_t current = 0;
                VkResult r = VK_SUCCESS;
                {
                    // Serialised with the device's other host semaphore access, as
                    // TimelineSemaphore does.
                    const auto lock = m_primary->host_semaphore_guard();
                    r = vkGetSemaphoreCounterValue(m_primary->handle(), semaphore, &current);
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

void RuntimeImpl::pump_all() noexcept {
    std::uint64_t reads = 0;
    if (m_reads->value(reads) == VK_SUCCESS) {
        // Keep the maximum: pump() and the completion thread may store out of order. Relaxed:
        // it is a lower bound of the semaphore's value, which orders nothing by itself.
        std::uint64_t seen = m_reads_seen.load(std::memory_order_relaxed);
        while (seen < reads &&
               !m_reads_seen.compare_exchange_weak(seen, reads, std::memory_order_relaxed)) {
        }
    }
    const std::size_t count = m_task_count.load(std::memory_order_acquire);
    for (std::size_t t = 0; t < count; ++t) {
        pump_task(*m_tasks[t], reads);
    }
}

void RuntimeImpl::pump_task(Task& task, std::uint64_t reads_value) noexcept {
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
            lost_reason = "its transfer failed: " + task.transport->error();
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
    const auto timeout = std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed));
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
                    s.times.worker_done = now;
                    task.worker_done_us.add(micros(s.times.request, now));
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
            if (s.state == SlotState::Leased && s.leases == 0 && reads_value >= s.release_value) {
                (void)task.ring.apply(i, SlotEvent::ReadsDone);
                if (!s.published) {
                    recycle(task, i);
                }
            }
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

void RuntimeImpl::recycle(Task& task, std::uint32_t slot) noexcept {
    (void)task.ring.apply(slot, task.worker->lost() ? SlotEvent::Fail : SlotEvent::Recycle);
}

void RuntimeImpl::lose_worker(Worker& worker, const std::string& reason) noexcept {
    if (!worker.mark_lost(reason)) {
        return;
    }
    const std::size_t count = m_task_count.load(std::memory_order_acquire);
    for (std::size_t t = 0; t < count; ++t) {
        Task& task = *m_tasks[t];
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

std::optional<Lease> RuntimeImpl::acquire(TaskId id) noexcept {
    Task* task = find(id);
    if (task == nullptr) {
        return std::nullopt;
    }
    std::lock_guard lock(task->mutex);
    const auto current = task->registry.current();
    if (!current) {
        return std::nullopt;
    }
    SlotRecord& s = task->ring[current->slot];
    if (!task->ring.apply(current->slot, SlotEvent::Lease)) {
        return std::nullopt;
    }
    ++s.leases;
    const Image& image = task->slots[current->slot].primary_image;
    Lease lease;
    lease.task = id;
    lease.slot = current->slot;
    lease.generation = s.generation;
    lease.image = image.get();
    lease.view = image.view.get();
    lease.layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    lease.format = image.format;
    lease.extent = image.extent;
    lease.wait_semaphore = task->transport->primary_semaphore();
    lease.wait_value = s.primary_value;
    lease.queue_family = m_primary->queue(QueueRole::Main).family();
    return lease;
}

void RuntimeImpl::release(const Lease& lease, std::uint64_t primary_value) noexcept {
    Task* task = find(lease.task);
    if (task == nullptr || lease.slot >= task->ring.size()) {
        return;
    }
    std::lock_guard lock(task->mutex);
    SlotRecord& s = task->ring[lease.slot];
    if (s.generation != lease.generation || s.leases == 0) {
        spdlog::error("task {}: release of a lease that is not held (slot {}, generation {})",
                      task->desc.name, lease.slot, lease.generation);
        return;
    }
    --s.leases;
    s.release_value = std::max(s.release_value, primary_value);
    if (s.leases == 0 && s.state == SlotState::Leased &&
        s.release_value <= m_reads_seen.load(std::memory_order_relaxed)) {
        (void)task->ring.apply(lease.slot, SlotEvent::ReadsDone);
        if (!s.published) {
            recycle(*task, lease.slot);
        }
    }
}

TaskStats RuntimeImpl::stats(TaskId id) const {
    Task* task = find(id);
    if (task == nullptr) {
        throw Error("Task " + std::to_string(id) + " is not registered", "Register it first");
    }
    TaskStats out;
    LatencySamples::Snapshot samples[4];
    {
        std::lock_guard lock(task->mutex);
        copy_counters(*task, out);
        samples[0] = task->worker_submit_us.snapshot();
        samples[1] = task->transfer_queued_us.snapshot();
        samples[2] = task->worker_done_us.snapshot();
        samples[3] = task->ready_us.snapshot();
    }
    // Sorted outside the lock: the worker thread and pump() need it meanwhile.
    out.worker_submit = LatencySamples::summarise(std::move(samples[0]));
    out.transfer_queued = LatencySamples::summarise(std::move(samples[1]));
    out.worker_done = LatencySamples::summarise(std::move(samples[2]));
    out.ready_observed = LatencySamples::summarise(std::move(samples[3]));
    copy_loss(*task, out);
    return out;
}

TaskPulse RuntimeImpl::pulse(TaskId id, std::size_t recent) const {
    Task* task = find(id);
    if (task == nullptr) {
        throw Error("Task " + std::to_string(id) + " is not registered", "Register it first");
    }
    TaskPulse out;
    TaskStats& c = out.counters;
    {
        std::lock_guard lock(task->mutex);
        copy_counters(*task, c);
        c.worker_submit.count = task->worker_submit_us.count();
        c.worker_done.count = task->worker_done_us.count();
        c.ready_observed.count = task->ready_us.count();
        out.worker_submit_us = task->worker_submit_us.recent_median_us(recent);
        out.worker_done_us = task->worker_done_us.recent_median_us(recent);
        out.ready_us = task->ready_us.recent_median_us(recent);
    }
    copy_loss(*task, c);
    return out;
}

std::vector<const Worker*> RuntimeImpl::workers() const {
    std::vector<const Worker*> out;
    for (std::size_t i = 1; i < m_workers.size(); ++i) {
        out.push_back(m_workers[i].get());
    }
    return out;
}

const Worker& RuntimeImpl::task_worker(TaskId id) const {
    Task* task = find(id);
    if (task == nullptr) {
        throw Error("Task " + std::to_string(id) + " is not registered", "Register it first");
    }
    return *task->worker;
}

std::string RuntimeImpl::task_transfer_path(TaskId id) const {
    Task* task = find(id);
    if (task == nullptr) {
        throw Error("Task " + std::to_string(id) + " is not registered", "Register it first");
    }
    switch (task->phase.load(std::memory_order_acquire)) {
    case TaskPhase::Preparing:
        return "(preparing)";
    case TaskPhase::Failed:
        return "(not prepared)";
    case TaskPhase::Ready:
        break;
    }
    return task->transport->path_name();
}

void RuntimeImpl::hold_generation(TaskId id, std::uint64_t generation) {
    Task* task = find(id);
    if (task != nullptr) {
        task->worker->hold(task, generation);
    }
}

void RuntimeImpl::release_held(TaskId id) {
    Task* task = find(id);
    if (task != nullptr) {
        task->worker->release_held();
    }
}

void RuntimeImpl::force_device_lost(TaskId id) {
    Task* task = find(id);
    if (task != nullptr) {
        inject_vk_fault(worker_submit_context(*task->worker), VK_ERROR_DEVICE_LOST);
    }
}

std::vector<SlotState> RuntimeImpl::slot_states(TaskId id) const {
    std::vector<SlotState> out;
    Task* task = find(id);
    if (task != nullptr) {
        std::lock_guard lock(task->mutex);
        for (std::uint32_t i = 0; i < task->ring.size(); ++i) {
            out.push_back(task->ring[i].state);
        }
    }
    return out;
}

} // namespace tandem::detail
