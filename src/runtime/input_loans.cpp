#include "runtime/input_loans.hpp"

#include <algorithm>

#include "runtime/runtime_impl.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

std::string input_name(const TaskInstance& instance, std::size_t i) {
    return "input '" + instance.desc.inputs[instance.inputs.declared[i]].name + "' of task '" +
           instance.desc.name + "'";
}

} // namespace

std::string match_loan(const Task& task, const TaskInstance& active,
                       std::span<const InputImage> inputs, LoanMatch& out) {
    out = LoanMatch{};
    for (const auto* list : {&task.instances, &task.retiring}) {
        for (const auto& instance : *list) {
            const InstanceInputs& in = instance->inputs;
            // An image of Tandem's whose loan ended may be rewritten by Tandem any time now.
            for (std::uint32_t s = 0; s < in.slots.size(); ++s) {
                if (std::any_of(in.loans.begin(), in.loans.end(),
                                [&](const InstanceInputs::Loan& l) { return l.slot == s; })) {
                    continue;
                }
                for (const InputSlot& image : in.slots[s]) {
                    for (const InputImage& named : inputs) {
                        if (named.image != VK_NULL_HANDLE && named.image == image.source.get()) {
                            return "the submit names an image task '" + task.desc.name +
                                   "' lent before, whose loan ended (a submit took it, or it "
                                   "was returned): lend again (lend_inputs) and name the new "
                                   "loan's images";
                        }
                    }
                }
            }
            for (std::size_t l = 0; l < in.loans.size(); ++l) {
                const std::vector<InputSlot>& images = in.slots[in.loans[l].slot];
                std::uint32_t lent = 0;
                for (std::size_t i = 0; i < inputs.size(); ++i) {
                    if (inputs[i].image == VK_NULL_HANDLE) {
                        continue;
                    }
                    for (std::size_t j = 0; j < images.size(); ++j) {
                        if (images[j].source.get() != inputs[i].image || in.buffer_sizes[j] > 0) {
                            continue;
                        }
                        if (i != j) {
                            return "the submit names the image lent for " +
                                   input_name(*instance, j) + " as input " + std::to_string(i) +
                                   ": name each lent image for its own input";
                        }
                        lent |= 1u << i;
                    }
                }
                if (lent == 0) {
                    continue;
                }
                if (out.instance != nullptr) {
                    return "the submit names images of two loans of task '" + task.desc.name +
                           "' (tickets " +
                           std::to_string(out.instance->inputs.loans[out.index].ticket) + " and " +
                           std::to_string(in.loans[l].ticket) +
                           "): name one loan's images, and return the other";
                }
                out = LoanMatch{instance.get(), l, in.loans[l].slot, lent};
            }
            // A loan semaphore names its own loan's writes: at another value its wait would
            // pass before them (an earlier loan's) or never.
            for (std::uint32_t s = 0; s < in.signals.size(); ++s) {
                for (const InputImage& named : inputs) {
                    if (named.wait_semaphore != in.signals[s].semaphore.handle()) {
                        continue;
                    }
                    const bool own = out.instance == instance.get() && out.slot == s;
                    if (!own || named.wait_value != in.signals[s].lent) {
                        return "the submit waits on the semaphore of a loan of task '" +
                               task.desc.name + "' (InputLoan::written)" +
                               (own ? " at " + std::to_string(named.wait_value) +
                                          " instead of its written_value " +
                                          std::to_string(in.signals[s].lent)
                                    : std::string(" without naming that loan's images")) +
                               ": name each loan's semaphore with its own images and its "
                               "written_value";
                    }
                }
            }
        }
    }
    if (out.instance == nullptr || out.instance == &active) {
        return {};
    }
    // A loan of an instance the task left: its images are copied into `active`'s slot.
    const std::vector<InputSlot>& lent = out.instance->inputs.slots[out.slot];
    static const std::vector<InputSlot> none;
    const std::vector<InputSlot>& now =
        active.inputs.slots.empty() ? none : active.inputs.slots.front();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (((out.lent >> i) & 1u) == 0) {
            continue;
        }
        if (i >= now.size() || active.inputs.buffer_sizes[i] > 0 ||
            lent[i].source.format != now[i].source.format ||
            lent[i].source.extent.width != now[i].source.extent.width ||
            lent[i].source.extent.height != now[i].source.extent.height) {
            return "the image lent for " + input_name(*out.instance, i) +
                   " no longer has the input's format and size (the task was reconfigured "
                   "since): return the loan (return_inputs) and lend again";
        }
    }
    return {};
}

InputLoan loan_of(const TaskInstance& instance, std::uint32_t slot, std::uint64_t ticket,
                  std::uint64_t writable) {
    InputLoan loan;
    loan.ticket = ticket;
    loan.writable = writable;
    const InstanceInputs& in = instance.inputs;
    if (slot < in.signals.size()) {
        loan.written = in.signals[slot].semaphore.handle();
        loan.written_value = in.signals[slot].lent;
    }
    for (std::size_t i = 0; i < in.slots[slot].size(); ++i) {
        LentInput lent;
        if (in.buffer_sizes[i] == 0) {
            const Image& image = in.slots[slot][i].source;
            lent.image = image.get();
            lent.view = image.view.get();
            lent.format = image.format;
            lent.extent = image.extent;
        }
        loan.inputs.push_back(lent);
    }
    return loan;
}

void end_loan(const LoanMatch& match) noexcept {
    auto& loans = match.instance->inputs.loans;
    loans.erase(loans.begin() + static_cast<std::ptrdiff_t>(match.index));
    std::lock_guard lock(match.instance->mutex);
    (void)match.instance->ring.apply(match.slot, SlotEvent::Abort); // Lent -> Free
}

LendResult InputLoans::lend(TaskId id) noexcept {
    LendResult out;
    try {
        const std::shared_ptr<Task> task = m_tasks.find(id);
        if (!task) {
            out.error = TaskError::UnknownTask;
            out.reason = unknown_task(id);
            return out;
        }
        std::lock_guard lock(task->mutex);
        SubmitResult why;
        TaskInstance* instance = usable_instance(*task, m_max_failures, why);
        if (instance == nullptr) {
            out.status = why.status;
            out.error = why.error;
            out.reason = std::move(why.reason);
            return out;
        }
        InstanceInputs& in = instance->inputs;
        if (in.signals.empty()) { // no slot has a loan semaphore: nothing to lend
            ++task->counts.failed;
            out.error = TaskError::BadInputs;
            out.reason = "task '" + task->desc.name +
                         "' has no image input of the application's to lend (TaskDesc::inputs: "
                         "chained inputs and buffers are not lent)";
            return out;
        }
        in.loans.reserve(in.loans.size() + 1); // nothing below throws once the slot is taken
        std::optional<std::uint32_t> slot;
        std::uint64_t last_work = 0;
        {
            std::lock_guard instance_lock(instance->mutex);
            slot = m_jobs.take_free_slot(*instance);
            if (slot) {
                last_work = instance->ring[*slot].work_value;
                (void)instance->ring.apply(*slot, SlotEvent::Lend);
            }
        }
        if (!slot) {
            ++task->counts.busy;
            out.status = SubmitStatus::Busy;
            out.reason = "every slot of task '" + task->desc.name + "' is in use";
            return out;
        }
        std::uint64_t writable = 0;
        if (const VkResult r = m_copies.lend(*instance, *slot, last_work, writable);
            r != VK_SUCCESS) {
            std::lock_guard instance_lock(instance->mutex);
            (void)instance->ring.apply(*slot, SlotEvent::Abort);
            ++task->counts.failed;
            out.error =
                r == VK_ERROR_DEVICE_LOST ? TaskError::DeviceLost : TaskError::PrimarySubmitFailed;
            out.reason = "the primary's queue refused the batch that lends task '" +
                         task->desc.name + "''s input images (" + tandem::to_string(r) + ")";
            return out;
        }
        const std::uint64_t ticket = m_tickets.fetch_add(1, std::memory_order_relaxed) + 1;
        in.loans.push_back({ticket, *slot});
        ++in.signals[*slot].lent; // the value this loan's writes signal (InputLoan::written)
        out.loan = loan_of(*instance, *slot, ticket, writable);
        out.status = SubmitStatus::Accepted;
        return out;
    } catch (...) {
        // Out of memory before a slot was taken, or filling the answer (the loan stays listed
        // and is ended with the task).
        out = LendResult{};
        out.error = TaskError::OutOfMemory;
        return out;
    }
}

TaskError InputLoans::give_back(TaskId id, const InputLoan& loan) noexcept {
    std::shared_ptr<Task> task;
    try {
        task = m_tasks.find(id);
    } catch (...) {
        return TaskError::OutOfMemory;
    }
    if (!task) {
        return TaskError::UnknownTask;
    }
    std::lock_guard lock(task->mutex);
    if (!task->live) {
        return TaskError::UnknownTask;
    }
    for (const auto* list : {&task->instances, &task->retiring}) {
        for (const auto& instance : *list) {
            auto& loans = instance->inputs.loans;
            for (std::size_t l = 0; l < loans.size(); ++l) {
                if (loans[l].ticket != loan.ticket) {
                    continue;
                }
                end_loan({instance.get(), l, loans[l].slot, 0});
                // The application's writes of the images, submitted before, pass before the
                // instance may be freed.
                (void)m_copies.fence(*instance);
                return TaskError::None;
            }
        }
    }
    return TaskError::LoanNotHeld;
}

void InputLoans::end_all(TaskInstance& instance) noexcept {
    if (instance.inputs.loans.empty()) {
        return;
    }
    while (!instance.inputs.loans.empty()) {
        end_loan({&instance, 0, instance.inputs.loans.front().slot, 0});
    }
    (void)m_copies.fence(instance);
}

} // namespace tandem::detail
