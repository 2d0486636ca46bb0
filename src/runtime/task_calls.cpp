// RuntimeImpl's calls about one task (runtime_impl.hpp): each finds the task by id and checks
// its state once, under its mutex.
#include <algorithm>
#include <cmath>
#include <exception>

#include "core/log.hpp"

#include "runtime/link_fallback.hpp"
#include "runtime/runtime_impl.hpp"
#include "runtime/scheduler.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

SubmitResult failed(TaskError error, std::string reason) {
    SubmitResult out;
    out.status = SubmitStatus::Failed;
    out.error = error;
    out.reason = std::move(reason);
    return out;
}

std::string unknown_task(TaskId id) {
    return "Task " + to_string(id) +
           " names no task of this runtime (never registered, or "
           "unregistered)";
}

} // namespace

std::shared_ptr<Task> RuntimeImpl::live(TaskId id) const {
    std::shared_ptr<Task> task = m_tasks.find(id);
    if (task) {
        std::lock_guard lock(task->mutex);
        if (!task->live) {
            return nullptr;
        }
    }
    return task;
}

TaskId RuntimeImpl::register_task(const TaskDesc& desc, bool wait) {
    (void)check_description(desc);
    const bool automatic = desc.placement.kind == PlacementKind::Auto;
    std::shared_ptr<Task> task;
    TaskInstance* first = nullptr;
    {
        std::lock_guard schedule(m_schedule);
        // The scheduler's key: the name, unless a live task has it.
        bool taken = false;
        for (const auto& other : m_all) {
            std::lock_guard lock(other->mutex);
            taken = taken || (other->live && other->key == desc.name);
        }
        task = m_tasks.add([&](TaskId id) {
            std::string key = taken ? desc.name + " (" + to_string(id) + ")" : desc.name;
            return std::make_shared<Task>(id, std::move(key), desc, workload_shape(desc),
                                          automatic);
        });
        try {
            std::optional<std::uint32_t> device;
            if (automatic) {
                device = m_scheduler->place_new(m_all, *task);
            }
            std::lock_guard lock(task->mutex);
            first = &add_instance(*task, desc, device);
            first->trial = false;
            task->active = first;
            task->keep_snapshot.store(automatic && m_scheduler->measures(),
                                      std::memory_order_relaxed);
        } catch (...) {
            m_tasks.remove(task->id); // nothing was published
            throw;
        }
        m_all.push_back(task);
        if (!automatic) {
            m_scheduler->refresh(m_all); // its load counts in the next decisions' explanation
        }
    }
    if (wait) {
        try {
            m_preparer->wait_prepared(*first);
        } catch (...) {
            (void)unregister_task(task->id); // a failed blocking registration leaves nothing
            throw;
        }
    }
    return task->id;
}

TaskError RuntimeImpl::unregister_task(TaskId id) noexcept {
    const std::shared_ptr<Task> task = m_tasks.find(id);
    if (!task) {
        return TaskError::UnknownTask;
    }
    std::lock_guard lock(task->mutex);
    if (!task->live) {
        return TaskError::UnknownTask;
    }
    task->live = false;
    task->active = nullptr;
    task->pending = nullptr;
    // Everything leaves use; the completion thread frees each instance once quiescent and the
    // GPU passed it, and then the task leaves the table.
    while (!task->instances.empty()) {
        TaskInstance* instance = task->instances.back().get();
        try {
            task->retire(instance);
        } catch (...) {
            // Out of memory moving it: it stays in `instances`, which the completion thread
            // retires too once the task is not live (CompletionTracker::retire_quiescent).
            break;
        }
        if (instance->preparing()) {
            (void)m_preparer->cancel(*instance);
        }
    }
    return TaskError::None;
}

TaskError RuntimeImpl::reconfigure(TaskId id, const TaskDesc& desc) {
    (void)check_description(desc);
    const std::shared_ptr<Task> task = m_tasks.find(id);
    if (!task) {
        return TaskError::UnknownTask;
    }
    std::lock_guard lock(task->mutex);
    if (!task->live) {
        return TaskError::UnknownTask;
    }
    // Where the new shape goes: a manual placement's device, else where the task runs now (the
    // scheduler moves it later if that pays).
    std::optional<std::uint32_t> device;
    if (desc.placement.kind == PlacementKind::Auto && task->active != nullptr) {
        device = task->active->device();
    }
    // A move, a fallback or an earlier reconfiguration still being prepared is superseded.
    if (task->pending != nullptr) {
        TaskInstance* superseded = task->pending;
        task->retire(superseded);
        if (superseded->preparing()) {
            (void)m_preparer->cancel(*superseded);
        }
    }
    TaskInstance& next = add_instance(*task, desc, device);
    if (task->active == nullptr || !task->active->prepared()) {
        // Nothing was ever shown from the old shape: the new one takes over at once.
        if (task->active != nullptr) {
            TaskInstance* old = task->active;
            task->retire(old);
            if (old->preparing()) {
                (void)m_preparer->cancel(*old);
            }
        }
        next.trial = false;
        task->active = &next;
        task->adopt_shape(desc);
        ++task->reconfigurations;
        return TaskError::None;
    }
    task->pending = &next;
    task->pending_kind = PendingKind::Reconfigure;
    task->reconfigure_error.clear();
    return TaskError::None;
}

SubmitResult RuntimeImpl::submit_locked(Task& task, std::span<const std::byte> bytes,
                                        std::span<const InputImage> inputs,
                                        WorkerJob& job) noexcept {
    try {
        if (!task.live) {
            return failed(TaskError::UnknownTask, unknown_task(task.id));
        }
        if (task.stopped) {
            ++task.failed;
            return failed(TaskError::Stopped,
                          "task '" + task.desc.name + "' stopped after " +
                              std::to_string(m_options.max_consecutive_failures) +
                              " failed jobs in a row: " + task.last_failure);
        }
        TaskInstance* instance = task.active;
        SubmitResult preparing;
        preparing.status = SubmitStatus::Preparing;
        if (instance == nullptr) {
            ++task.busy;
            preparing.reason = "task '" + task.desc.name + "' is being prepared";
            return preparing;
        }
        Worker& worker = *instance->worker;
        // An auto task whose worker was lost moves (in the pump that sees the loss, or the one
        // after): it is being prepared elsewhere, not failed.
        if ((task.automatic ||
             (task.pending != nullptr && task.pending_kind == PendingKind::Move)) &&
            worker.lost()) {
            ++task.busy;
            preparing.reason = "task '" + task.desc.name + "' is moving off " + worker.label() +
                               ", which was lost";
            return preparing;
        }
        // A task whose path failed is being prepared again with the next one (LinkFallback),
        // unless that failed too.
        if (instance->link_failed.load(std::memory_order_acquire)) {
            if (!task.fallback_error.empty()) {
                ++task.failed;
                return failed(TaskError::NoTransferPath, task.fallback_error);
            }
            ++task.busy;
            preparing.reason = "task '" + task.desc.name +
                               "' is being prepared again with another transfer path: " +
                               LinkFailures::failure(*instance);
            return preparing;
        }
        switch (instance->phase.load(std::memory_order_acquire)) {
        case InstancePhase::Preparing:
            ++task.busy;
            preparing.reason =
                "task '" + task.desc.name + "' is still being prepared on " + worker.label();
            return preparing;
        case InstancePhase::Failed:
            ++task.failed;
            return failed(TaskError::PreparationFailed, instance->preparation_error);
        case InstancePhase::Ready:
            break;
        }
        if (worker.lost()) {
            ++task.failed;
            return failed(TaskError::DeviceLost,
                          worker.label() + " is lost: " + worker.lost_reason());
        }
        if (std::string why = instance->workload->check(bytes); !why.empty()) {
            ++task.failed;
            return failed(TaskError::BadBytes, std::move(why));
        }
        if (std::string why = InputCopier::check(*instance, inputs); !why.empty()) {
            ++task.failed;
            return failed(TaskError::BadInputs, std::move(why));
        }
        if (task.keep_snapshot.load(std::memory_order_relaxed)) {
            task.snapshot.assign(bytes.begin(), bytes.end());
            task.has_snapshot = true;
        }
        std::uint64_t inputs_released = 0;
        switch (m_jobs->take(task, *instance, bytes, false, job, inputs, &inputs_released)) {
        case JobPipeline::Take::Busy: {
            ++task.busy;
            SubmitResult busy;
            busy.status = SubmitStatus::Busy;
            return busy;
        }
        case JobPipeline::Take::OutOfMemory:
            ++task.failed;
            return failed(TaskError::OutOfMemory, "Out of memory copying the job's bytes");
        case JobPipeline::Take::InputsFailed:
            ++task.failed;
            return failed(TaskError::DeviceLost, "the copy of the inputs of task '" +
                                                     task.desc.name +
                                                     "' could not be submitted on the primary");
        case JobPipeline::Take::Accepted:
            break;
        }
        ++task.accepted;
        SubmitResult out;
        out.status = SubmitStatus::Accepted;
        out.generation = job.generation;
        out.inputs_released = inputs_released;
        return out;
    } catch (...) {
        // Out of memory composing a sentence (or keeping the snapshot): nothing was taken.
        return failed(TaskError::OutOfMemory, std::string());
    }
}

SubmitResult RuntimeImpl::submit(TaskId id, std::span<const std::byte> bytes,
                                 std::span<const InputImage> inputs) noexcept {
    std::shared_ptr<Task> task;
    try {
        task = m_tasks.find(id);
    } catch (...) {
        return failed(TaskError::OutOfMemory, std::string());
    }
    if (!task) {
        try {
            return failed(TaskError::UnknownTask, unknown_task(id));
        } catch (...) {
            return failed(TaskError::UnknownTask, std::string());
        }
    }
    WorkerJob job;
    SubmitResult out;
    {
        std::lock_guard lock(task->mutex);
        out = submit_locked(*task, bytes, inputs, job);
    }
    if (out.accepted()) {
        job.instance->worker->enqueue(job);
    }
    return out;
}

bool RuntimeImpl::submit_trial(Task& task, TaskInstance& instance,
                               std::span<const std::byte> bytes) {
    WorkerJob job;
    {
        std::lock_guard lock(task.mutex);
        // A task with inputs runs only the application's jobs: a trial has no inputs to read.
        if (!task.live || !instance.prepared() || instance.worker->lost() ||
            task.find(instance.serial) == nullptr || !instance.desc.inputs.empty()) {
            return false;
        }
        if (m_jobs->take(task, instance, bytes, true, job) != JobPipeline::Take::Accepted) {
            return false;
        }
    }
    job.instance->worker->enqueue(job);
    return true;
}

void RuntimeImpl::pump() noexcept {
    m_completion->pump();
    std::unique_lock lock(m_schedule, std::try_to_lock);
    if (!lock.owns_lock()) {
        return; // a registration or calibration is running: decide in a later pump
    }
    try {
        for (auto it = m_all.begin(); it != m_all.end();) {
            bool gone = false;
            {
                std::lock_guard task_lock((*it)->mutex);
                gone = !(*it)->live;
            }
            if (gone) {
                m_scheduler->forget((*it)->key); // its measurements go with it
                it = m_all.erase(it);
            } else {
                ++it;
            }
        }
        m_fallback->step(m_all);
        m_scheduler->step(m_all, std::chrono::steady_clock::now());
    } catch (const std::exception& e) {
        log_error("runtime", "the scheduler's decision failed: {}", e.what());
    }
}

AcquireResult RuntimeImpl::acquire(TaskId id) noexcept {
    AcquireResult out;
    std::shared_ptr<Task> task;
    try {
        task = m_tasks.find(id);
    } catch (...) {
        return out; // out of memory: nothing this frame
    }
    if (!task) {
        out.error = TaskError::UnknownTask;
        return out;
    }
    std::lock_guard lock(task->mutex);
    if (!task->live) {
        out.error = TaskError::UnknownTask;
        return out;
    }
    auto hand_out = [&](TaskInstance& instance, std::uint64_t at_least) {
        out.lease = m_leases->lease(instance, id, at_least);
        if (out.lease) {
            task->shown_serial = instance.serial;
            task->shown_generation = out.lease->generation;
        }
        return out.lease.has_value();
    };
    // The active instance's newest output once it is at least what was shown (and newer than
    // what it had when it last became active, unless it made what was shown), else the shown
    // instance's: never blank, never back in time.
    if (TaskInstance* active = task->active) {
        const std::uint64_t at_least =
            task->shown_serial == active->serial
                ? task->shown_generation
                : std::max(active->activated_after + 1, task->shown_generation);
        if (hand_out(*active, at_least)) {
            return out;
        }
    }
    if (task->shown_generation > 0 &&
        (task->active == nullptr || task->shown_serial != task->active->serial)) {
        if (TaskInstance* shown = task->find(task->shown_serial)) {
            (void)hand_out(*shown, task->shown_generation);
        }
    }
    return out;
}

TaskError RuntimeImpl::release(const Lease& lease, std::uint64_t primary_value) noexcept {
    std::shared_ptr<Task> task;
    try {
        task = m_tasks.find(lease.task); // an unregistered task's leases are released here too
    } catch (...) {
        return TaskError::OutOfMemory;
    }
    if (!task) {
        return TaskError::UnknownTask;
    }
    std::lock_guard lock(task->mutex);
    TaskInstance* instance = task->find(lease.instance);
    if (instance == nullptr || !m_leases->release(*instance, lease, primary_value)) {
        return TaskError::LeaseNotHeld;
    }
    return TaskError::None;
}

TaskStats RuntimeImpl::stats(TaskId id) const {
    TaskStatsParts parts;
    {
        const std::shared_ptr<Task> task = m_tasks.find(id);
        if (!task) {
            TaskStats out;
            out.error = TaskError::UnknownTask;
            return out;
        }
        std::lock_guard lock(task->mutex);
        if (!task->live) {
            TaskStats out;
            out.error = TaskError::UnknownTask;
            return out;
        }
        parts = collect_stats(*task, *m_links);
    }
    TaskStats out = summarise(std::move(parts));
    if (const Worker* w = worker_of(out.device)) {
        out.device_name = w->device().info().name;
    }
    return out;
}

PlacementReport RuntimeImpl::placement() const {
    std::lock_guard lock(m_schedule);
    return m_scheduler->report(m_all);
}

std::uint64_t RuntimeImpl::placement_decisions() const noexcept {
    return m_scheduler->decisions();
}

CalibrationResult RuntimeImpl::calibrate(TaskId id, std::span<const std::byte> bytes,
                                         std::uint32_t jobs) {
    std::lock_guard lock(m_schedule);
    const std::shared_ptr<Task> task = live(id);
    if (!task) {
        CalibrationResult out;
        out.error = TaskError::UnknownTask;
        out.reason = unknown_task(id);
        return out;
    }
    return m_scheduler->calibrate(*task, bytes, jobs);
}

TaskError RuntimeImpl::observe_execute(TaskId id, std::uint32_t device, double ms) noexcept {
    const std::shared_ptr<Task> task = live(id);
    if (!task) {
        return TaskError::UnknownTask;
    }
    if (!std::isfinite(ms) || ms < 0.0) {
        return TaskError::None;
    }
    std::lock_guard lock(m_schedule);
    m_scheduler->observe_execute(*task, device, ms);
    return TaskError::None;
}

} // namespace tandem::detail
