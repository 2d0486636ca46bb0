// RuntimeImpl's calls about one task (runtime_impl.hpp): each finds the task by id and checks
// its state once, under its mutex.
#include <algorithm>
#include <cmath>
#include <exception>
#include <new>

#include "core/log.hpp"

#include "runtime/input_loans.hpp"
#include "runtime/link_fallback.hpp"
#include "runtime/runtime_impl.hpp"
#include "runtime/scheduler.hpp"
#include "runtime/task_chains.hpp"
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

} // namespace

std::string unknown_task(TaskId id) {
    return "Task " + to_string(id) +
           " names no task of this runtime (never registered, or "
           "unregistered)";
}

TaskId RuntimeImpl::register_task(const TaskDesc& given, bool wait) {
    (void)check_description(given);
    TaskDesc desc = given;
    // Chains: checked (their sizes resolved) and placed with their producers. No chain lock: a
    // task being registered cannot close a cycle, since no other task can name it yet.
    const ChainPlan chain = m_graph.plan(desc, TaskId{});
    const bool automatic =
        desc.placement.kind == PlacementKind::Auto && (!chain.device || chain.leader != nullptr);
    std::shared_ptr<Task> task;
    TaskInstance* first = nullptr;
    {
        const std::unique_lock schedule = m_scheduler->lock_schedule();
        // The scheduler's key: the name, unless a live task has it.
        const bool taken = m_scheduler->key_taken(desc.name);
        task = m_tasks.add([&](TaskId id) {
            std::string key = taken ? desc.name + " (" + to_string(id) + ")" : desc.name;
            auto made =
                std::make_shared<Task>(id, std::move(key), desc, workload_shape(desc), automatic);
            made->events = &m_events;
            return made;
        });
        try {
            {
                // Its producers and leader first: the scheduler places it with the producer it
                // follows.
                std::lock_guard lock(task->mutex);
                AdoptedLinks(task->links, chain).commit(1);
            }
            std::optional<std::uint32_t> device = chain.device;
            if (automatic) {
                device = m_scheduler->place_new(*task);
            }
            std::lock_guard lock(task->mutex);
            first = &add_instance(*task, desc, device);
            first->trial = false;
            task->set_active(first);
            task->snapshot.keep.store(automatic && m_scheduler->measures(),
                                      std::memory_order_relaxed);
        } catch (...) {
            m_tasks.remove(task->id); // nothing was published
            throw;
        }
        // Its producers pinned (unless it follows one) and, those on other devices, sending
        // their output to its worker (none on the primary).
        m_graph.link(*task, chain, first->device(), {});
        m_scheduler->admit(task, automatic);
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
    DetachedLinks links;
    const TaskError answer = unregister_locked(*task, links);
    m_graph.release(links); // its producers' mutexes, with its own no longer held
    if (answer == TaskError::None) {
        m_leases->forget(id);
    }
    return answer;
}

TaskError RuntimeImpl::unregister_locked(Task& t, DetachedLinks& links) noexcept {
    Task* task = &t;
    std::lock_guard lock(task->mutex);
    if (!task->live) {
        return TaskError::UnknownTask;
    }
    links = TaskGraph::detach(*task);
    task->live.store(false, std::memory_order_release);
    task->set_active(nullptr);
    task->pending = nullptr;
    TaskGraph::stop_reading(task->links);
    // Everything leaves use; the completion thread frees each instance once quiescent and the
    // GPU passed it, and then the task leaves the table.
    // Loans end: their slots free once the application's writes submitted so far passed.
    for (const auto* list : {&task->instances, &task->retiring}) {
        for (const auto& instance : *list) {
            m_loans->end_all(*instance);
        }
    }
    while (!task->instances.empty()) {
        TaskInstance* instance = task->instances.back().get();
        try {
            discard(*task, instance);
        } catch (...) {
            // Out of memory moving it: it stays in `instances`, which the completion thread
            // retires too once the task is not live (CompletionTracker::retire_quiescent).
            break;
        }
    }
    return TaskError::None;
}

TaskError RuntimeImpl::reconfigure(TaskId id, const TaskDesc& given) {
    // The id first, as every call checks it: UnknownTask whatever the description holds.
    if (!m_tasks.live(id)) {
        return TaskError::UnknownTask;
    }
    (void)check_description(given);
    const std::shared_ptr<Task> task = m_tasks.find(id);
    if (!task) {
        return TaskError::UnknownTask;
    }
    TaskDesc desc = given;
    // Two reconfigures at once could close a cycle between them: one at a time for chains.
    const auto chains = m_graph.lock_for(desc);
    const ChainPlan chain = m_graph.plan(desc, id);
    std::uint32_t placed = 0;
    DetachedLinks old;
    {
        std::lock_guard lock(task->mutex);
        if (!task->live) {
            return TaskError::UnknownTask;
        }
        // Its newest shape's producers and leader before the shape is adopted (a chain moves
        // as a unit or not at all); it reads in step from its next generation on.
        AdoptedLinks adopted(task->links, chain);
        reconfigure_locked(*task, desc, chain.device);
        adopted.commit(task->generations + 1);
        placed = (task->pending != nullptr ? task->pending : task->active)->device();
        old = TaskGraph::detach(*task);
    }
    // The new shape's pins and feeds counted before the old shape's are let go: a producer read
    // by both stays pinned and keeps its feed.
    m_graph.link(*task, chain, placed, std::move(old));
    return TaskError::None;
}

void RuntimeImpl::reconfigure_locked(Task& t, const TaskDesc& desc,
                                     std::optional<std::uint32_t> with_producers) {
    Task* task = &t;
    // Where the new shape goes: its producers' device, a manual placement's, else where the
    // task runs now (the scheduler moves it later if that pays).
    std::optional<std::uint32_t> device = with_producers;
    if (!device && desc.placement.kind == PlacementKind::Auto && task->active != nullptr) {
        device = task->active->device();
    }
    // A move, a fallback or an earlier reconfiguration still being prepared is superseded.
    if (task->pending != nullptr) {
        discard(*task, task->pending);
    }
    TaskInstance& next = add_instance(*task, desc, device);
    if (take_over(*task, next, PendingKind::Reconfigure)) {
        // Nothing was ever shown from the old shape: the new one took over at once.
        task->adopt_shape(desc);
        ++task->counts.reconfigurations;
        return;
    }
    task->preparation.reconfigure_error.clear();
}

void RuntimeImpl::discard(Task& task, TaskInstance* instance) {
    task.retire(instance);
    if (instance->preparing()) {
        (void)m_preparer->cancel(*instance);
    }
}

bool RuntimeImpl::take_over(Task& task, TaskInstance& next, PendingKind kind) {
    if (task.active == nullptr || !task.active->prepared()) {
        if (task.active != nullptr) {
            discard(task, task.active);
        }
        next.trial = false;
        task.set_active(&next);
        return true;
    }
    task.pending = &next;
    task.pending_kind = kind;
    return false;
}

TaskInstance* usable_instance(Task& task, std::uint32_t max_failures, SubmitResult& why) {
    if (!task.live) {
        why = failed(TaskError::UnknownTask, unknown_task(task.id));
        return nullptr;
    }
    if (task.failures.stopped) {
        ++task.counts.failed;
        why = failed(TaskError::Stopped, "task '" + task.desc.name + "' stopped after " +
                                             std::to_string(max_failures) +
                                             " failed jobs in a row: " + task.failures.last);
        return nullptr;
    }
    TaskInstance* instance = task.active;
    why = SubmitResult{};
    why.status = SubmitStatus::Preparing;
    if (instance == nullptr) {
        ++task.counts.busy;
        why.reason = "task '" + task.desc.name + "' is being prepared";
        return nullptr;
    }
    Worker& worker = *instance->worker;
    // An auto task whose worker was lost moves (in the pump that sees the loss, or the one
    // after): it is being prepared elsewhere, not failed.
    if ((task.automatic || (task.pending != nullptr && task.pending_kind == PendingKind::Move)) &&
        worker.lost()) {
        ++task.counts.busy;
        why.reason =
            "task '" + task.desc.name + "' is moving off " + worker.label() + ", which was lost";
        return nullptr;
    }
    // A task whose path failed is being prepared again with the next one (LinkFallback),
    // unless that failed too.
    if (instance->link_failed.load(std::memory_order_acquire)) {
        if (!task.preparation.fallback_error.empty()) {
            ++task.counts.failed;
            why = failed(TaskError::NoTransferPath, task.preparation.fallback_error);
            return nullptr;
        }
        ++task.counts.busy;
        why.reason = "task '" + task.desc.name +
                     "' is being prepared again with another transfer path: " +
                     LinkFailures::failure(*instance);
        return nullptr;
    }
    // Prepared again to feed a new consumer on another worker (chain_feeds.hpp): a matching
    // consumer there reads every generation from the next on.
    if (task.pending != nullptr && task.pending_kind == PendingKind::Feeds) {
        ++task.counts.busy;
        why.reason = "task '" + task.desc.name + "' is being prepared again on " + worker.label() +
                     " to send its output to a consumer on another worker";
        return nullptr;
    }
    // A chain's leader whose move is ready leaves once its matching consumers read every
    // generation it made here (CompletionTracker::settle_pending): it makes no more here
    // meanwhile, or a consumer one generation behind would keep it here for as long as the two
    // are submitted in step.
    if (task.move_waits_for_consumers()) {
        ++task.counts.busy;
        why.reason = "task '" + task.desc.name + "' moves to adapter " +
                     std::to_string(task.pending->device()) +
                     " once its consumers read its generation " + std::to_string(task.generations);
        return nullptr;
    }
    switch (instance->phase.load(std::memory_order_acquire)) {
    case InstancePhase::Preparing:
        ++task.counts.busy;
        why.reason = "task '" + task.desc.name + "' is still being prepared on " + worker.label();
        return nullptr;
    case InstancePhase::Failed:
        ++task.counts.failed;
        why = failed(TaskError::PreparationFailed, instance->preparation_error);
        return nullptr;
    case InstancePhase::Ready:
        break;
    }
    if (worker.lost()) {
        ++task.counts.failed;
        why = failed(TaskError::DeviceLost, worker.label() + " is lost: " + worker.lost_reason());
        return nullptr;
    }
    return instance;
}

SubmitResult RuntimeImpl::submit_locked(Task& task, std::span<const std::byte> bytes,
                                        std::span<const InputImage> inputs, WorkerJob& job,
                                        SubmitHolds& holds) noexcept {
    try {
        SubmitResult not_usable;
        TaskInstance* instance =
            usable_instance(task, m_options.max_consecutive_failures, not_usable);
        if (instance == nullptr) {
            return not_usable;
        }
        std::string refused;
        try {
            refused = instance->workload->check(bytes);
        } catch (const std::bad_alloc&) {
            throw;
        } catch (const std::exception& e) {
            // The application's check threw: its bytes are refused, with what it said.
            refused = std::string("the task's workload check threw: ") + e.what();
        } catch (...) {
            refused = "the task's workload check threw";
        }
        if (!refused.empty()) {
            ++task.counts.failed;
            return failed(TaskError::BadBytes, std::move(refused));
        }
        if (std::string why = InputCopier::check(*instance, inputs); !why.empty()) {
            ++task.counts.failed;
            return failed(TaskError::BadInputs, std::move(why));
        }
        // Lent images (Runtime::lend_inputs): their loan's slot takes the job when the loan is
        // of this instance; a loan of one the task left is copied from, and ends.
        LoanMatch loan;
        if (!inputs.empty()) {
            if (std::string why = match_loan(task, *instance, inputs, loan); !why.empty()) {
                ++task.counts.failed;
                return failed(TaskError::BadInputs, std::move(why));
            }
        }
        const bool own_loan = loan.instance == instance;
        // Chains: the holds were taken for this instance's next generation; anything that
        // changed since (another thread's submit, a new shape) is asked again.
        if (!holds.fit(*instance, task.generations)) {
            ++task.counts.busy;
            SubmitResult busy;
            busy.status = SubmitStatus::Busy;
            busy.reason = "task '" + task.desc.name + "' changed while its chain was read";
            return busy;
        }
        if (task.snapshot.keep.load(std::memory_order_relaxed)) {
            task.snapshot.bytes.assign(bytes.begin(), bytes.end());
            task.snapshot.held = true;
        }
        std::uint64_t inputs_released = 0;
        const std::size_t chained_reads = holds.reads().size();
        switch (m_jobs->take(task, *instance, bytes, false, job, inputs, &inputs_released,
                             &holds.reads(),
                             own_loan ? std::optional<std::uint32_t>(loan.slot) : std::nullopt,
                             own_loan ? loan.lent : 0u)) {
        case JobPipeline::Take::Busy: {
            ++task.counts.busy;
            SubmitResult busy;
            busy.status = SubmitStatus::Busy;
            return busy;
        }
        case JobPipeline::Take::OutOfMemory:
            ++task.counts.failed;
            return failed(TaskError::OutOfMemory, "Out of memory copying the job's bytes");
        case JobPipeline::Take::InputsFailed:
            ++task.counts.failed;
            return failed(TaskError::PrimarySubmitFailed,
                          "the copy of the inputs of task '" + task.desc.name +
                              "' could not be submitted to the primary's queue");
        case JobPipeline::Take::PrimaryLost:
            ++task.counts.failed;
            return failed(TaskError::DeviceLost, "the copy of the inputs of task '" +
                                                     task.desc.name +
                                                     "' found the primary device lost");
        case JobPipeline::Take::Accepted:
            break;
        }
        ++task.counts.accepted;
        task.counts.chained_reads += chained_reads;
        if (own_loan) { // the job holds the slot now
            auto& loans = instance->inputs.loans;
            loans.erase(loans.begin() + static_cast<std::ptrdiff_t>(loan.index));
        } else if (loan.instance != nullptr) {
            // The copy just submitted reads the lent images: their instance lives until it ran.
            InstanceInputs& lent = loan.instance->inputs;
            lent.last_copy = std::max(lent.last_copy, inputs_released);
            end_loan(loan);
        }
        const std::uint32_t lent = own_loan ? loan.lent : 0u;
        task.counts.lent_submits += lent != 0 ? 1u : 0u;
        if (own_loan && instance->inputs.signalled(loan.slot)) {
            ++task.counts.lent_signalled_submits; // nothing was submitted (InputCopier::copy)
        }
        if (!instance->inputs.empty() && lent != (1u << instance->inputs.declared.size()) - 1) {
            ++task.counts.input_copies;
        }
        if (task.links.cursor) {
            // Release: its producers keep nothing older once they see it (the hold on this
            // generation was taken before).
            task.links.cursor->next.store(job.generation + 1, std::memory_order_release);
        }
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
    // Chains: the producers' slots are held before the task's own mutex is taken, for the
    // generation this submit would get; those the job's slot did not take over go with `holds`.
    SubmitHolds holds;
    try {
        const ChainHold held = holds.take(m_tasks, *task);
        if (held.status != ChainHold::Status::Held) {
            std::lock_guard lock(task->mutex);
            if (held.status == ChainHold::Status::Broken) {
                ++task->counts.failed;
                return failed(TaskError::ChainBroken, held.reason);
            }
            ++task->counts.busy;
            out.status = held.status == ChainHold::Status::Busy ? SubmitStatus::Busy
                                                                : SubmitStatus::Preparing;
            out.reason = held.reason;
            return out;
        }
    } catch (...) {
        return failed(TaskError::OutOfMemory, std::string());
    }
    {
        std::lock_guard lock(task->mutex);
        out = submit_locked(*task, bytes, inputs, job, holds);
    }
    m_input_copies->wake_owed(); // the copier's thread, for the batch queued under the lock
    if (out.accepted()) {
        // Copies queued for the copier's thread: it wakes the job thread once it submitted them.
        job.instance->worker->enqueue(
            job, [&] { return m_input_copies->copy_queued(*job.instance, job.slot); });
    }
    return out;
}

void RuntimeImpl::pump() noexcept {
    m_completion->pump();
    m_scheduler->pump();
}

AcquireResult RuntimeImpl::acquire(TaskId id, bool on_worker) noexcept {
    AcquireResult out;
    std::shared_ptr<Task> task;
    try {
        task = m_tasks.find(id);
    } catch (...) {
        out.error = TaskError::OutOfMemory; // nothing this frame; no words either
        return out;
    }
    auto unknown = [&] {
        out.error = TaskError::UnknownTask;
        try {
            out.reason = unknown_task(id);
        } catch (...) {
            // Out of memory for the sentence: the code says it.
        }
        return out;
    };
    if (!task) {
        return unknown();
    }
    std::lock_guard lock(task->mutex);
    if (!task->live) {
        return unknown();
    }
    if (!on_worker && task->active != nullptr && task->active->keeps_output_on_worker()) {
        out.error = TaskError::BadArgument;
        try {
            out.reason = "Task '" + task->desc.name +
                         "' keeps its outputs on its worker (TaskDesc::keep_output_on_worker): "
                         "lease them there with acquire_on_worker";
        } catch (...) {
            // Out of memory for the sentence: the code says it.
        }
        return out;
    }
    auto hand_out = [&](TaskInstance& instance, std::uint64_t at_least) {
        out.lease = m_leases->lease(instance, id, at_least, on_worker);
        if (out.lease) {
            task->shown.serial = instance.serial;
            task->shown.generation = out.lease->generation;
        }
        return out.lease.has_value();
    };
    // The active instance's newest output once it is at least what was shown (and newer than
    // what it had when it last became active, unless it made what was shown), else the shown
    // instance's: never blank, never back in time.
    if (TaskInstance* active = task->active) {
        const std::uint64_t at_least =
            task->shown.serial == active->serial
                ? task->shown.generation
                : std::max(active->activated_after + 1, task->shown.generation);
        if (hand_out(*active, at_least)) {
            return out;
        }
    }
    if (task->shown.generation > 0 &&
        (task->active == nullptr || task->shown.serial != task->active->serial)) {
        if (TaskInstance* shown = task->find(task->shown.serial)) {
            (void)hand_out(*shown, task->shown.generation);
        }
    }
    return out;
}

TaskError RuntimeImpl::release(const Lease& lease, std::uint64_t value) noexcept {
    if (lease.ticket == 0) {
        return TaskError::LeaseNotHeld; // never issued: a default Lease
    }
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
    if (instance == nullptr || !m_leases->release(*instance, lease, value)) {
        return TaskError::LeaseNotHeld;
    }
    m_completion->kick(); // the reads' end to look for
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
    const HeldLeases held = m_leases->held(id, Clock::now());
    out.leases_held = held.count;
    out.leases_held_long = held.long_held;
    out.oldest_lease_us = micros(Clock::time_point{}, Clock::time_point{} + held.oldest);
    if (const Worker* w = m_workers.of(out.device)) {
        out.device_name = w->device().info().name;
    }
    return out;
}

} // namespace tandem::detail
