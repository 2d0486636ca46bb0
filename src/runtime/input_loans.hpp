// Lent input images (tandem/input.hpp, Runtime::lend_inputs and return_inputs): InputLoans
// lends and takes back, and match_loan finds which loan a submit's inputs name. A loan is a slot of
// one of the task's instances, Lent since lend_inputs took it, listed in that instance's
// InstanceInputs::loans (under the task's mutex); a submit naming its images takes that slot
// (JobPipeline::take) when the instance still takes the task's submits, and otherwise (the task
// moved meanwhile) copies the lent images as an application's and ends the loan.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

#include "runtime/task.hpp"
#include "tandem/input.hpp"
#include "tandem/runtime.hpp"

namespace tandem::detail {

struct LoanMatch {
    TaskInstance* instance = nullptr; // the loan's instance; null when no lent image is named
    std::size_t index = 0;            // the loan's place in instance->inputs.loans
    std::uint32_t slot = 0;
    std::uint32_t lent = 0; // bit i: inputs[i] is the loan's image of the application's input i
};

// Finds the loan whose images `inputs` name among `task`'s instances, for a submit to `active`.
// Empty on success (`out.instance` null when they name none); a sentence when they name images
// of two loans, a lent image for another input than its own, or (a loan of an instance the
// task left) images whose format or size `active`'s inputs no longer have. Caller holds the
// task's mutex. Throws only std::bad_alloc.
[[nodiscard]] std::string match_loan(const Task& task, const TaskInstance& active,
                                     std::span<const InputImage> inputs, LoanMatch& out);

// The loan as the application sees it: one entry per application input of `slot` (a buffer's
// empty).
[[nodiscard]] InputLoan loan_of(const TaskInstance& instance, std::uint32_t slot,
                                std::uint64_t ticket, std::uint64_t writable);

// Ends `match`'s loan: out of the list, its slot Free. Caller holds the task's mutex, not the
// instance's.
void end_loan(const LoanMatch& match) noexcept;

class InputCopier;
class JobPipeline;
class TaskTable;

// The loans of the runtime's tasks: Runtime::lend_inputs and return_inputs (tandem/runtime.hpp
// has their contracts), and the end of an unregistered instance's loans. Any thread.
class InputLoans {
public:
    // `max_failures`: RuntimeOptions::max_consecutive_failures (a stopped task lends nothing).
    InputLoans(const TaskTable& tasks, JobPipeline& jobs, InputCopier& copies,
               std::uint32_t max_failures)
        : m_tasks(tasks), m_jobs(jobs), m_copies(copies), m_max_failures(max_failures) {}

    [[nodiscard]] LendResult lend(TaskId id) noexcept;
    TaskError give_back(TaskId id, const InputLoan& loan) noexcept;
    // Ends every loan of `instance` (unregister): their slots are free again once the primary's
    // main queue passed what the application submitted so far. Caller holds the task's mutex.
    void end_all(TaskInstance& instance) noexcept;

private:
    const TaskTable& m_tasks;
    JobPipeline& m_jobs;
    InputCopier& m_copies;
    std::uint32_t m_max_failures;
    std::atomic<std::uint64_t> m_tickets{0}; // InputLoan::ticket
};

} // namespace tandem::detail
