// Every public call about a task, given every kind of id that names no live task (a default
// TaskId, one never registered, one unregistered, another runtime's) and every kind of bad
// argument, answers the one thing tandem/task.hpp and tandem/runtime.hpp document: the id is
// checked first (UnknownTask, whatever the other arguments hold), then the arguments
// (BadArgument, BadInputs, LeaseNotHeld, LoanNotHeld, or a tandem::Error of category
// InvalidArgument from the set-up calls), then the task's state.
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "clear_workload.hpp"
#include "runtime_fixture.hpp"

namespace tandem::test {
namespace {

// A workload whose check() throws for any bytes but none: the application's own code failing.
class ThrowingCheck final : public ClearWorkload {
public:
    std::string check(std::span<const std::byte> bytes) const override {
        if (!bytes.empty()) {
            throw std::invalid_argument("the check could not parse the bytes");
        }
        return {};
    }
};

class BadIds : public RuntimeTest {
protected:
    // Calls `call` and expects it to throw a tandem::Error of `category`.
    template <typename Call>
    static void expect_error(ErrorCategory category, Call&& call, const std::string& what) {
        try {
            call();
            ADD_FAILURE() << what << ": did not throw";
        } catch (const Error& e) {
            EXPECT_EQ(e.category(), category)
                << what << ": " << to_string(e.category()) << ": " << e.what();
        }
    }

    // Every call that takes a TaskId, given `id` (which names no live task), with good and bad
    // other arguments alike: UnknownTask each.
    static void expect_unknown(Runtime& runtime, TaskId id, const std::string& kind) {
        SCOPED_TRACE(kind);
        const std::byte bytes[4] = {};
        const SubmitResult s = runtime.submit(id, bytes);
        EXPECT_EQ(s.status, SubmitStatus::Failed);
        EXPECT_EQ(s.error, TaskError::UnknownTask);
        EXPECT_FALSE(s.reason.empty());
        const InputImage image{};
        const SubmitResult si = runtime.submit(id, {}, std::span<const InputImage>(&image, 1));
        EXPECT_EQ(si.status, SubmitStatus::Failed);
        EXPECT_EQ(si.error, TaskError::UnknownTask);
        const LendResult l = runtime.lend_inputs(id);
        EXPECT_FALSE(l.lent());
        EXPECT_EQ(l.error, TaskError::UnknownTask);
        EXPECT_FALSE(l.reason.empty());
        EXPECT_EQ(runtime.return_inputs(id, InputLoan{}), TaskError::UnknownTask);
        const AcquireResult a = runtime.acquire(id);
        EXPECT_FALSE(a);
        EXPECT_EQ(a.error, TaskError::UnknownTask);
        EXPECT_FALSE(a.reason.empty());
        EXPECT_EQ(runtime.stats(id).error, TaskError::UnknownTask);
        EXPECT_EQ(runtime.unregister_task(id), TaskError::UnknownTask);
        TaskDesc good = pattern_task();
        EXPECT_EQ(runtime.reconfigure(id, good), TaskError::UnknownTask);
        TaskDesc bad = pattern_task();
        bad.slots = 1;
        EXPECT_EQ(runtime.reconfigure(id, bad), TaskError::UnknownTask) << "the id first";
        const CalibrationResult c = runtime.calibrate(id, {}, 8);
        EXPECT_EQ(c.error, TaskError::UnknownTask);
        EXPECT_FALSE(c.reason.empty());
        EXPECT_EQ(runtime.calibrate(id, {}, 1).error, TaskError::UnknownTask) << "the id first";
        const std::uint32_t primary = runtime.primary_device().index;
        EXPECT_EQ(runtime.observe_execute(id, primary, 1.0), TaskError::UnknownTask);
        EXPECT_EQ(runtime.observe_execute(id, 999, std::nan("")), TaskError::UnknownTask)
            << "the id first";
        Lease lease;
        lease.task = id;
        lease.ticket = 0xfeedull << 32; // never issued
        EXPECT_EQ(runtime.release(lease, 0), TaskError::UnknownTask);
        // As a chain's producer the id is part of a description: refused by throwing (a default
        // TaskId there names no producer: the input is the application's own).
        if (!id) {
            return;
        }
        TaskDesc consumer = pattern_task();
        TaskInputDesc input;
        input.producer = id;
        consumer.inputs.push_back(input);
        expect_error(
            ErrorCategory::InvalidArgument, [&] { (void)runtime.register_task(consumer); },
            "register_task with it as producer");
        expect_error(
            ErrorCategory::InvalidArgument, [&] { (void)runtime.register_task_async(consumer); },
            "register_task_async with it as producer");
    }
};

TEST_F(BadIds, EveryCallAnswersEveryKindOfIdThatNamesNoTaskWithUnknownTask) {
    auto runtime = make_runtime();
    auto other = make_runtime();
    const TaskId live = runtime->register_task(pattern_task());
    const TaskId gone = runtime->register_task(pattern_task());
    ASSERT_EQ(runtime->unregister_task(gone), TaskError::None);
    TaskId never = live;
    never.index += 1000; // an entry the table never had
    TaskId never_generation = live;
    never_generation.generation += 7; // the entry, a generation it never had
    const TaskId of_other = other->register_task(pattern_task());
    TaskId forged = live;
    forged.runtime += 1000; // a tag no runtime has

    // A lease of an unregistered task is released until its objects are gone; its id answers
    // UnknownTask to release only then.
    Lease stale;
    stale.task = gone;
    stale.ticket = 0xfeedull << 32;
    ASSERT_TRUE(
        pump_until(*runtime, [&] { return runtime->release(stale, 0) == TaskError::UnknownTask; }));

    expect_unknown(*runtime, TaskId{}, "default TaskId");
    expect_unknown(*runtime, never, "never registered (index)");
    expect_unknown(*runtime, never_generation, "never registered (generation)");
    expect_unknown(*runtime, gone, "unregistered");
    expect_unknown(*runtime, of_other, "another runtime's");
    expect_unknown(*runtime, forged, "a runtime tag no runtime has");

    // The live task and the other runtime's are untouched by all of that.
    EXPECT_EQ(runtime->stats(live).error, TaskError::None);
    EXPECT_EQ(other->stats(of_other).error, TaskError::None);
    EXPECT_EQ(runtime->unregister_task(live), TaskError::None);
    EXPECT_EQ(other->unregister_task(of_other), TaskError::None);
}

TEST_F(BadIds, EveryBadArgumentOfALiveTaskHasItsOneAnswer) {
    auto runtime = make_runtime();
    const TaskId task = runtime->register_task(pattern_task());
    const std::uint32_t primary = runtime->primary_device().index;

    // observe_execute: a device of no adapter, a time not finite or negative.
    EXPECT_EQ(runtime->observe_execute(task, 999, 1.0), TaskError::BadArgument);
    EXPECT_EQ(runtime->observe_execute(task, primary, std::nan("")), TaskError::BadArgument);
    EXPECT_EQ(runtime->observe_execute(task, primary, std::numeric_limits<double>::infinity()),
              TaskError::BadArgument);
    EXPECT_EQ(runtime->observe_execute(task, primary, -1.0), TaskError::BadArgument);
    EXPECT_EQ(runtime->observe_execute(task, primary, 2.0), TaskError::None);

    // submit: inputs to a task that declares none.
    const InputImage image{};
    const SubmitResult inputs = runtime->submit(task, {}, std::span<const InputImage>(&image, 1));
    EXPECT_EQ(inputs.status, SubmitStatus::Failed);
    EXPECT_EQ(inputs.error, TaskError::BadInputs);
    EXPECT_FALSE(inputs.reason.empty());
    // lend_inputs: nothing to lend.
    const LendResult lend = runtime->lend_inputs(task);
    EXPECT_EQ(lend.status, SubmitStatus::Failed);
    EXPECT_EQ(lend.error, TaskError::BadInputs);
    // return_inputs: a loan never made.
    InputLoan loan;
    loan.ticket = 12345;
    EXPECT_EQ(runtime->return_inputs(task, loan), TaskError::LoanNotHeld);
    EXPECT_EQ(runtime->return_inputs(task, InputLoan{}), TaskError::LoanNotHeld);
    // release: a default lease, one never issued, one released twice.
    EXPECT_EQ(runtime->release(Lease{}, 0), TaskError::LeaseNotHeld);
    Lease forged;
    forged.task = task;
    forged.ticket = 0xfeedull << 32;
    EXPECT_EQ(runtime->release(forged, 0), TaskError::LeaseNotHeld);
    // acquire before any output: no lease, no error.
    const AcquireResult none = runtime->acquire(task);
    EXPECT_FALSE(none);
    EXPECT_EQ(none.error, TaskError::None);
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
    const AcquireResult lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    EXPECT_EQ(runtime->release(*lease, 0), TaskError::None);
    EXPECT_EQ(runtime->release(*lease, 0), TaskError::LeaseNotHeld);

    // Set-up calls: a description refused throws InvalidArgument and changes nothing.
    const auto refused = [&](const std::string& what, const auto& change) {
        TaskDesc desc = pattern_task();
        change(desc);
        expect_error(
            ErrorCategory::InvalidArgument, [&] { (void)runtime->register_task(desc); },
            "register_task: " + what);
        expect_error(
            ErrorCategory::InvalidArgument, [&] { (void)runtime->register_task_async(desc); },
            "register_task_async: " + what);
        expect_error(
            ErrorCategory::InvalidArgument, [&] { (void)runtime->reconfigure(task, desc); },
            "reconfigure: " + what);
    };
    refused("one slot", [](TaskDesc& d) { d.slots = 1; });
    refused("17 slots", [](TaskDesc& d) { d.slots = 17; });
    refused("width 0", [](TaskDesc& d) { d.width = 0; });
    refused("height 16385", [](TaskDesc& d) { d.height = 16385; });
    refused("rate 0", [](TaskDesc& d) { d.rate_hz = 0; });
    refused("rate NaN", [](TaskDesc& d) { d.rate_hz = std::nan(""); });
    refused("no such worker",
            [](TaskDesc& d) { d.placement = Placement::parse("worker:9").value(); });
    refused("nine inputs", [](TaskDesc& d) { d.inputs.resize(9); });
    // calibrate: fewer than three jobs.
    expect_error(
        ErrorCategory::InvalidArgument, [&] { (void)runtime->calibrate(task, {}, 2); },
        "calibrate with 2 jobs");
    // The task is as it was.
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.error, TaskError::None);
    EXPECT_EQ(s.reconfigurations, 0u);
    EXPECT_EQ(runtime->resources().tasks, 1u);
}

// A Workload::check() that throws refuses the job's bytes (BadBytes) with what it said; it is
// not out of memory.
TEST_F(BadIds, ACheckThatThrowsRefusesTheBytesWithItsMessage) {
    auto runtime = make_runtime();
    TaskDesc desc = pattern_task();
    desc.workload = "(application)";
    desc.factory = [](const WorkerContext&) { return std::make_unique<ThrowingCheck>(); };
    const TaskId task = runtime->register_task(desc);
    const std::byte bytes[3] = {};
    const SubmitResult r = runtime->submit(task, bytes);
    EXPECT_EQ(r.status, SubmitStatus::Failed);
    EXPECT_EQ(r.error, TaskError::BadBytes);
    EXPECT_NE(r.reason.find("the check could not parse the bytes"), std::string::npos) << r.reason;
    EXPECT_TRUE(runtime->submit(task).accepted());
}

// tandem::Error's category: from a VkResult, and as named.
TEST(ErrorCategories, FollowTheResultOrTheThrower) {
    EXPECT_EQ(Error(VK_ERROR_DEVICE_LOST, "x").category(), ErrorCategory::DeviceLost);
    EXPECT_EQ(Error(VK_ERROR_OUT_OF_DEVICE_MEMORY, "x").category(), ErrorCategory::OutOfMemory);
    EXPECT_EQ(Error(VK_ERROR_EXTENSION_NOT_PRESENT, "x").category(), ErrorCategory::Unsupported);
    EXPECT_EQ(Error(VK_ERROR_INITIALIZATION_FAILED, "x").category(), ErrorCategory::Vulkan);
    EXPECT_EQ(Error("x").category(), ErrorCategory::Other);
    const Error named(ErrorCategory::InvalidArgument, "Task 'x' has size 0x0", "Use 1 or more");
    EXPECT_EQ(named.category(), ErrorCategory::InvalidArgument);
    EXPECT_EQ(named.result(), VK_SUCCESS);
    EXPECT_STREQ(named.what(), "Task 'x' has size 0x0. Use 1 or more");
    EXPECT_STREQ(to_string(ErrorCategory::InvalidArgument), "invalid argument");
}

} // namespace
} // namespace tandem::test
