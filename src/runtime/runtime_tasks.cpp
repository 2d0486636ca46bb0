// RuntimeImpl's task registry: placing a task, registering it and preparing it on the
// preparation thread (workload, transport, slot resources).
#include "runtime/runtime_impl.hpp"

#include <cstdlib>
#include <exception>

#include <spdlog/spdlog.h>

#include "core/capabilities.hpp"
#include "core/placement.hpp"
#include "tandem/error.hpp"
#include "workloads/application_workload.hpp"

namespace tandem::detail {

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

void RuntimeImpl::check_description(const TaskDesc& desc) const {
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
}

TaskId RuntimeImpl::register_instance(const TaskDesc& desc, std::optional<std::uint32_t> adapter,
                                      std::shared_ptr<GenerationCounter> generations) {
    check_description(desc);
    Task* task = nullptr;
    {
        std::lock_guard lock(m_register_mutex);
        if (m_tasks.size() >= k_max_tasks) {
            throw Error("Too many task registrations",
                        "A runtime holds at most " + std::to_string(k_max_tasks) +
                            " (a task the scheduler moved or measured counts once per device)");
        }
        Worker* worker = adapter ? worker_of(*adapter) : &place(desc);
        if (worker == nullptr) {
            throw Error("Adapter " + std::to_string(*adapter) + " is not a device of this runtime",
                        "Place the task on the primary or one of the runtime's workers");
        }
        const auto id = static_cast<TaskId>(m_tasks.size());
        m_tasks.push_back(std::make_unique<Task>(id, desc, *worker, std::move(generations)));
        task = m_tasks.back().get();
        worker->task_count.fetch_add(1, std::memory_order_relaxed);
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

void RuntimeImpl::wait_prepared(TaskId id) {
    Task& task = *find(id);
    std::unique_lock lock(m_prepare_mutex);
    m_prepared_cv.wait(
        lock, [&] { return task.phase.load(std::memory_order_acquire) != TaskPhase::Preparing; });
    if (task.phase.load(std::memory_order_acquire) == TaskPhase::Failed) {
        std::rethrow_exception(task.preparation_exception);
    }
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
        td.bridge = m_bridges.bridge_for(device, *m_primary);
        task->transport = make_link_transport(device, *m_primary, pair, td, m_path_health.get());
    }

    task->pool =
        CommandPool(device, device.queue(QueueRole::Main).family(), td.name + " worker pool");
    const VkImageUsageFlags usage = task->workload->target_usage();
    for (std::uint32_t i = 0; i < desc.slots; ++i) {
        SlotResources r;
        const std::string base = td.name + " slot " + std::to_string(i);
        SlotImages images = task->transport->create_images(
            base, usage, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
        r.worker_image = std::move(images.worker);
        r.primary_image = std::move(images.primary);
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

} // namespace tandem::detail
