#include "runtime/runtime_impl.hpp"

#include <algorithm>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/cpu.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

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

std::optional<Lease> RuntimeImpl::acquire(TaskId id, std::uint64_t at_least) noexcept {
    Task* task = find(id);
    if (task == nullptr) {
        return std::nullopt;
    }
    std::lock_guard lock(task->mutex);
    const auto current = task->registry.current();
    if (!current || current->generation < at_least) {
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
    lease.device = task->worker->device().info().index;
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

bool RuntimeImpl::release(const Lease& lease, std::uint64_t primary_value) noexcept {
    Task* task = find(lease.task);
    if (task == nullptr || lease.slot >= task->ring.size()) {
        return false;
    }
    std::lock_guard lock(task->mutex);
    SlotRecord& s = task->ring[lease.slot];
    if (s.generation != lease.generation || s.leases == 0) {
        return false;
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
    return true;
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
