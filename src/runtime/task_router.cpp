#include "runtime/task_router.hpp"

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "runtime/runtime_impl.hpp"
#include "tandem/error.hpp"
#if TANDEM_HAVE_TRANSFER
#include "transfer/transfer_path.hpp"
#endif

namespace tandem::detail {

namespace {

std::optional<TransferPath> forced_path(const RuntimeOptions& options) {
#if TANDEM_HAVE_TRANSFER
    if (!options.transfer_path.empty()) {
        return parse_transfer_path(options.transfer_path);
    }
#else
    (void)options;
#endif
    return std::nullopt;
}

// What predicts the task's cost from a profile: its hint, else the built-in pattern's kind,
// else a kind no reference workload has (measured only).
WorkloadShape shape_of(const TaskDesc& desc) {
    WorkloadShape shape;
    shape.kind = desc.cost.kind;
    if (shape.kind.empty()) {
        shape.kind = !desc.factory && desc.workload == "pattern" ? "pattern" : "application";
    }
    shape.width = desc.width;
    shape.height = desc.height;
    shape.work = desc.cost.work;
    shape.content = desc.cost.content;
    return shape;
}

} // namespace

static_assert(TaskRouter::k_max_ids == RuntimeImpl::k_max_tasks);

TaskRouter::TaskRouter(RuntimeImpl& runtime, const RuntimeOptions& options)
    : m_runtime(&runtime), m_scheduler(runtime, options.scheduler, forced_path(options)),
      m_fallback(runtime) {
    // At most one logical task per registration: the pushes in register_task never reallocate.
    m_owned.reserve(k_max_ids);
    m_all.reserve(k_max_ids);
}

LogicalTask* TaskRouter::find(TaskId id) const noexcept {
    // Acquire: pairs with the release in register_task, so the task is fully built.
    return id < m_by_id.size() ? m_by_id[id].load(std::memory_order_acquire) : nullptr;
}

LogicalTask& TaskRouter::get(TaskId id) const {
    LogicalTask* task = find(id);
    if (task == nullptr) {
        throw Error("Task " + std::to_string(id) + " is not registered",
                    "Use an id that register_task returned");
    }
    return *task;
}

TaskId TaskRouter::register_task(const TaskDesc& desc, bool wait) {
    (void)m_runtime->check_description(desc);
    const bool automatic = task_placement(desc).kind == PlacementKind::Auto;
    if (!std::isfinite(desc.rate_hz) || desc.rate_hz <= 0.0) {
        throw Error("Task '" + desc.name + "' has an update rate of " +
                        std::to_string(desc.rate_hz) + " Hz",
                    "Give rate_hz as a positive number of updates per second (30 by default)");
    }
    TaskId id = 0;
    {
        std::lock_guard lock(m_schedule);
        std::string key = desc.name;
        for (const auto& other : m_owned) {
            if (other->key == key) {
                key = desc.name + " (" + std::to_string(m_owned.size()) + ")";
                break;
            }
        }
        auto task = std::make_unique<LogicalTask>(desc, key, shape_of(desc), automatic);
        std::optional<std::uint32_t> device;
        if (automatic) {
            device = m_scheduler.place_new(all(), *task);
        }
        // Throws Error (placement, capacity); nothing is published then.
        id = m_runtime->register_instance(desc, device, task->generations);
        Registration first;
        first.device = m_runtime->task_worker(id).device().info().index;
        first.id = id;
        first.trial = false;
        task->id = id;
        task->regs.push_back(first);
        task->keep_snapshot.store(automatic && m_scheduler.measures(), std::memory_order_relaxed);
        m_by_id.at(id).store(task.get(), std::memory_order_release);
        m_owned.push_back(std::move(task));
        m_all.push_back(m_owned.back().get());
        if (!automatic) {
            m_scheduler.refresh(all()); // its load counts in the next decisions' explanation
        }
    }
    if (wait) {
        m_runtime->wait_prepared(id);
    }
    return id;
}

SubmitResult TaskRouter::submit(TaskId id, std::span<const std::byte> snapshot) noexcept {
    LogicalTask* task = find(id);
    if (task == nullptr) {
        SubmitResult out;
        out.reason = "Task " + std::to_string(id) + " is not registered";
        return out;
    }
    TaskId target = 0;
    {
        std::lock_guard lock(task->mutex);
        target = task->regs[task->active].id;
        // An auto task whose worker was lost moves (in the pump that sees the loss, or the one
        // after): it is being prepared elsewhere, not failed.
        if ((task->pending || task->automatic) && m_runtime->task_worker(target).lost()) {
            SubmitResult out;
            out.status = SubmitStatus::Preparing;
            out.reason = "task '" + task->desc.name + "' is moving off " +
                         m_runtime->task_worker(target).label() + ", which was lost";
            return out;
        }
        // A task whose path failed is being prepared again with the next one (LinkFallback, in
        // the pump that sees the failure or a later one), unless that failed too.
        if (m_runtime->link_failed(target)) {
            SubmitResult out;
            out.status =
                task->fallback_error.empty() ? SubmitStatus::Preparing : SubmitStatus::Failed;
            out.reason = task->fallback_error.empty()
                             ? "task '" + task->desc.name +
                                   "' is being prepared again with another transfer path: " +
                                   m_runtime->link_failure(target)
                             : task->fallback_error;
            return out;
        }
        if (task->keep_snapshot.load(std::memory_order_relaxed)) {
            try {
                task->snapshot.assign(snapshot.begin(), snapshot.end());
                task->has_snapshot = true;
            } catch (...) {
                // Out of memory: trial jobs wait for a later snapshot.
            }
        }
    }
    return m_runtime->submit(target, snapshot);
}

void TaskRouter::pump() noexcept {
    m_runtime->pump();
    std::unique_lock lock(m_schedule, std::try_to_lock);
    if (!lock.owns_lock()) {
        return; // a registration or calibration is running: decide in a later pump
    }
    try {
        m_fallback.step(all());
        m_scheduler.step(all(), std::chrono::steady_clock::now());
    } catch (const std::exception& e) {
        spdlog::error("the scheduler's decision failed: {}", e.what());
    }
}

std::optional<Lease> TaskRouter::acquire(TaskId id) noexcept {
    LogicalTask* task = find(id);
    if (task == nullptr) {
        return std::nullopt;
    }
    std::lock_guard lock(task->mutex);
    auto hand_out = [&](std::size_t reg, std::uint64_t at_least) -> std::optional<Lease> {
        auto lease = m_runtime->acquire(task->regs[reg].id, at_least);
        if (lease) {
            task->shown = reg;
            task->shown_generation = lease->generation;
            lease->task = id;
        }
        return lease;
    };
    // The active registration once it has an output newer than what was shown (and than what
    // it had when it became active: its trial jobs' outputs), else the shown one's.
    const Registration& active = task->regs[task->active];
    if (auto lease =
            hand_out(task->active, std::max(active.activated_after + 1, task->shown_generation))) {
        return lease;
    }
    if (task->shown != task->active && task->shown_generation > 0) {
        return hand_out(task->shown, task->shown_generation);
    }
    return std::nullopt;
}

void TaskRouter::release(const Lease& lease, std::uint64_t primary_value) noexcept {
    LogicalTask* task = find(lease.task);
    if (task == nullptr) {
        return;
    }
    std::lock_guard lock(task->mutex);
    // Generations are unique across a task's registrations: the one whose slot holds this
    // generation leased is the lease's.
    for (const Registration& reg : task->regs) {
        Lease inner = lease;
        inner.task = reg.id;
        if (m_runtime->release(inner, primary_value)) {
            return;
        }
    }
    spdlog::error("task {}: release of a lease that is not held (slot {}, generation {})",
                  task->desc.name, lease.slot, lease.generation);
}

TaskStats TaskRouter::stats(TaskId id) const {
    LogicalTask& task = get(id);
    // Only the fields the application's threads share (the scheduler writes the others of
    // its own registrations without this lock).
    struct Part {
        std::uint32_t device;
        TaskId id;
        bool trial;
    };
    std::vector<Part> regs;
    std::size_t active = 0;
    std::uint64_t moves = 0;
    {
        std::lock_guard lock(task.mutex);
        for (const Registration& r : task.regs) {
            regs.push_back({r.device, r.id, r.trial});
        }
        active = task.active;
        moves = task.moves;
    }
    // Latencies, GPU time, preparation and loss: the active registration's.
    TaskStats out = m_runtime->stats(regs[active].id);
    out.device = regs[active].device;
    out.moves = moves;
    out.transfer_path = m_runtime->task_transfer_path(regs[active].id);
    out.dropped_paths = m_runtime->dropped_paths(regs[active].id);
    out.accepted = out.busy = out.failed = out.ready = out.superseded = 0;
    out.in_flight = 0;
    out.newest_generation = 0;
    std::vector<std::size_t> order{active};
    for (std::size_t i = 0; i < regs.size(); ++i) {
        if (i != active) {
            order.push_back(i);
        }
    }
    for (const std::size_t i : order) {
        const TaskStats s = m_runtime->pulse(regs[i].id, 0).counters;
        out.accepted += s.accepted;
        out.busy += s.busy;
        out.failed += s.failed;
        out.ready += s.ready;
        out.superseded += s.superseded;
        out.in_flight += s.in_flight;
        out.newest_generation = std::max(out.newest_generation, s.newest_generation);
        TaskDeviceStats d;
        d.device = regs[i].device;
        d.active = i == active;
        d.trial = regs[i].trial;
        d.accepted = s.accepted;
        d.ready = s.ready;
        d.newest_generation = s.newest_generation;
        d.in_flight = s.in_flight;
        d.preparing = s.preparing;
        d.preparation_error = s.preparation_error;
        d.worker_lost = s.worker_lost;
        if (i == active) {
            d.gpu_timed = out.gpu_timed; // stats() above summarised them already
            d.gpu_us = out.gpu_us;
        } else {
            const TaskGpuTime gpu = m_runtime->gpu_time(regs[i].id);
            d.gpu_timed = gpu.timed;
            d.gpu_us = gpu.us;
        }
        out.devices.push_back(std::move(d));
    }
    return out;
}

TaskId TaskRouter::active_registration(TaskId id) const {
    LogicalTask& task = get(id);
    std::lock_guard lock(task.mutex);
    return task.regs[task.active].id;
}

PlacementReport TaskRouter::placement() const {
    std::lock_guard lock(m_schedule);
    return m_scheduler.report(all());
}

std::vector<DeviceCost> TaskRouter::calibrate(TaskId id, std::span<const std::byte> snapshot,
                                              std::uint32_t jobs) {
    std::lock_guard lock(m_schedule);
    return m_scheduler.calibrate(all(), get(id), snapshot, jobs);
}

void TaskRouter::observe_execute(TaskId id, std::uint32_t device, double ms) noexcept {
    LogicalTask* task = find(id);
    if (task == nullptr || !std::isfinite(ms) || ms < 0.0) {
        return;
    }
    std::lock_guard lock(m_schedule);
    m_scheduler.observe_execute(*task, device, ms);
}

} // namespace tandem::detail
