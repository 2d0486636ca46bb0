#include "runtime/runtime_impl.hpp"

#include <spdlog/spdlog.h>

#include "core/capabilities.hpp"
#include "core/cpu.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "workloads/workload.hpp"

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

} // namespace

Placement task_placement(const TaskDesc& desc) {
    if (desc.placement.empty()) {
        return Placement{};
    }
    if (auto p = parse_placement(desc.placement)) {
        return *p;
    }
    // Any other text selects a device (a UUID prefix or part of a name), as "device:" does.
    return Placement{PlacementKind::Device, {}, desc.placement, {}};
}

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
    adopted.enabled_features = embed.enabled_features;
    DeviceOptions primary_options;
    primary_options.label = "primary";
    m_primary =
        std::make_unique<Device>(*m_instance, m_adapters[*primary_index], adopted, primary_options);
    open_workers(selection.workers);
}

void RuntimeImpl::open_workers(const std::vector<std::uint32_t>& worker_adapters) {
    for (std::uint32_t index : worker_adapters) {
        DeviceOptions o;
        o.label = "worker" + std::to_string(m_worker_devices.size() + 1);
        m_worker_devices.push_back(std::make_unique<Device>(*m_instance, m_adapters[index], o));
    }
    m_reads = std::make_unique<TimelineSemaphore>(*m_primary, "tandem primary timeline");
    bool cpu_device = m_primary->info().type == "cpu";
    for (const auto& device : m_worker_devices) {
        cpu_device = cpu_device || device->info().type == "cpu";
    }
    m_poll = may_poll(cpu_device);

    m_leases = std::make_unique<LeaseTable>(m_tasks, m_primary->queue(QueueRole::Main).family());
    m_links = std::make_unique<LinkFailures>(m_tasks, *m_primary, m_timeout_ms);
    m_completion = std::make_unique<CompletionTracker>(m_tasks, *m_leases, *m_links, *m_primary,
                                                       *m_reads, m_trace, m_timeout_ms);
    m_jobs = std::make_unique<JobPipeline>(m_tasks, *m_completion, *m_links, *m_reads, m_trace,
                                           m_timeout_ms);
    m_preparer = std::make_unique<TaskPreparer>(*m_instance, *m_primary, m_options, m_poll,
                                                m_links->health(), m_trace);

    JobPipeline* jobs = m_jobs.get();
    CompletionTracker* completion = m_completion.get();
    auto on_job = [jobs](Worker& w, const WorkerJob& job) { jobs->process_job(w, job); };
    auto on_drop = [jobs](Worker&, const WorkerJob& job) { jobs->drop_job(job); };
    auto on_complete = [completion](Worker&, const WorkerJob& job) {
        completion->job_completed(job);
    };
    m_workers.push_back(
        std::make_unique<Worker>(*m_primary, 0, on_job, on_drop, on_complete, m_poll));
    for (std::size_t i = 0; i < m_worker_devices.size(); ++i) {
        m_workers.push_back(std::make_unique<Worker>(*m_worker_devices[i],
                                                     static_cast<std::uint32_t>(i + 1), on_job,
                                                     on_drop, on_complete, m_poll));
    }
    m_completion->start();
    m_preparer->start();
}

RuntimeImpl::~RuntimeImpl() {
    // Stop the threads first (queued jobs are dropped: their slots retire, no GPU work), then
    // wait, bounded, for GPU work in flight, then destroy tasks before the devices they use.
    // A preparation in progress finishes first; queued ones fail.
    m_preparer->stop();
    m_completion->stop();
    for (auto& w : m_workers) {
        w->stop();
    }
    const bool drained = m_completion->drain();
    for (auto& w : m_workers) {
        w->observe_completions(); // what completed after the watchers stopped
    }
    if (drained) {
        // The last values reached; the batches behind them may still be finishing in the driver
        // (lavapipe releases a batch's wait semaphores after signalling). Destroy nothing before.
        const auto timeout = worker_timeout();
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
    m_preparer.reset();
    m_jobs.reset();
    m_completion.reset();
    m_links.reset();
    m_leases.reset();
    m_reads.reset();
    m_worker_devices.clear();
    m_primary.reset();
    m_instance.reset();
}

Worker& RuntimeImpl::place(const TaskDesc& desc) {
    const Placement p = task_placement(desc);
    switch (p.kind) {
    case PlacementKind::Primary:
        return *m_workers[0];
    case PlacementKind::Auto:
        // Reached only through RuntimeImpl's own callers (the TaskRouter places auto tasks
        // itself): as "worker".
    case PlacementKind::Worker: {
        if (p.worker) {
            if (*p.worker + 1 >= m_workers.size()) {
                throw Error("Placement '" + desc.placement + "' names no worker",
                            "This runtime has " + std::to_string(m_workers.size() - 1) +
                                " worker(s): use worker:0 to worker:" +
                                std::to_string(m_workers.size() > 1 ? m_workers.size() - 2 : 0) +
                                ", primary or auto");
            }
            return *m_workers[*p.worker + 1];
        }
        // The worker with the fewest tasks, fixed; the primary when there is none.
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
    case PlacementKind::Device:
        break;
    }
    for (std::uint32_t index : match_adapters(m_adapters, p.device)) {
        if (Worker* w = worker_of(index)) {
            return *w;
        }
    }
    throw Error("Placement '" + desc.placement + "' matches no device of this runtime",
                "Use auto, primary, worker, worker:N or a selector of one of its devices");
}

Worker* RuntimeImpl::worker_of(std::uint32_t adapter) const noexcept {
    for (const auto& w : m_workers) {
        if (w->device().info().index == adapter) {
            return w.get();
        }
    }
    return nullptr;
}

WorkloadFactory RuntimeImpl::check_description(const TaskDesc& desc) const {
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
                    "Use " + transfer_path_names());
    }
    // An unknown name is refused now, not when the task is prepared.
    return desc.factory ? WorkloadFactory{} : m_workloads.find(desc.workload);
}

TaskId RuntimeImpl::register_instance(const TaskDesc& desc, std::optional<std::uint32_t> adapter,
                                      std::shared_ptr<GenerationCounter> generations) {
    WorkloadFactory named = check_description(desc);
    // Placed under the registration lock, so concurrent registrations see each other's counts.
    Task& task = m_tasks.add(
        desc,
        [&]() -> Worker& {
            Worker* worker = adapter ? worker_of(*adapter) : &place(desc);
            if (worker == nullptr) {
                throw Error("Adapter " + std::to_string(*adapter) +
                                " is not a device of this runtime",
                            "Place the task on the primary or one of the runtime's workers");
            }
            return *worker;
        },
        std::move(generations));
    task.named_workload = std::move(named);
    m_preparer->enqueue(task);
    return task.id;
}

Task& RuntimeImpl::get(TaskId id) const {
    Task* task = m_tasks.find(id);
    if (task == nullptr) {
        throw Error("Task " + std::to_string(id) + " is not registered", "Register it first");
    }
    return *task;
}

void RuntimeImpl::wait_prepared(TaskId id) {
    m_preparer->wait_prepared(*m_tasks.find(id));
}

TaskStats RuntimeImpl::stats(TaskId id) const {
    return task_stats(get(id));
}

TaskPulse RuntimeImpl::pulse(TaskId id, std::size_t recent) const {
    return task_pulse(get(id), recent);
}

TaskGpuTime RuntimeImpl::gpu_time(TaskId id) const {
    return task_gpu_time(get(id));
}

std::vector<const Worker*> RuntimeImpl::workers() const {
    std::vector<const Worker*> out;
    for (std::size_t i = 1; i < m_workers.size(); ++i) {
        out.push_back(m_workers[i].get());
    }
    return out;
}

const Worker& RuntimeImpl::task_worker(TaskId id) const {
    return *get(id).worker;
}

std::string RuntimeImpl::task_transfer_path(TaskId id) const {
    const Task& task = get(id);
    switch (task.phase.load(std::memory_order_acquire)) {
    case TaskPhase::Preparing:
        return "(preparing)";
    case TaskPhase::Failed:
        return "(not prepared)";
    case TaskPhase::Ready:
        break;
    }
    return task.transport->path_name();
}

void RuntimeImpl::hold_generation(TaskId id, std::uint64_t generation) {
    Task* task = m_tasks.find(id);
    if (task != nullptr) {
        task->worker->hold(task, generation);
    }
}

void RuntimeImpl::release_held(TaskId id) {
    Task* task = m_tasks.find(id);
    if (task != nullptr) {
        task->worker->release_held();
    }
}

void RuntimeImpl::force_device_lost(TaskId id) {
    Task* task = m_tasks.find(id);
    if (task != nullptr) {
        inject_vk_fault(worker_submit_context(*task->worker), VK_ERROR_DEVICE_LOST);
    }
}

std::vector<SlotState> RuntimeImpl::slot_states(TaskId id) const {
    std::vector<SlotState> out;
    Task* task = m_tasks.find(id);
    if (task != nullptr) {
        std::lock_guard lock(task->mutex);
        for (std::uint32_t i = 0; i < task->ring.size(); ++i) {
            out.push_back(task->ring[i].state);
        }
    }
    return out;
}

} // namespace tandem::detail
