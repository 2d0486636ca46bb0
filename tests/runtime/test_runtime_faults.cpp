// Lost devices and timeouts: the worker is marked lost, its slots retire, its last published
// output stays available and exact, submits answer Failed with a reason, nothing hangs. Every
// job accepted and then failed is named, with its generation, by a JobFailed event.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "clear_workload.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "runtime_fixture.hpp"
#include "tandem/workload.hpp"

namespace tandem::test {
namespace {

using detail::SlotState;

class RuntimeFaults : public RuntimeTest {
protected:
    void TearDown() override {
        detail::clear_vk_faults();
        RuntimeTest::TearDown();
    }

    // Pumps until the runtime reported a JobFailed event of `task` for each of `generations`
    // with `code`; returns every event it took.
    static std::vector<RuntimeEvent> expect_failed_jobs(Runtime& runtime, TaskId task,
                                                        const std::set<std::uint64_t>& generations,
                                                        TaskError code) {
        std::vector<RuntimeEvent> events;
        std::set<std::uint64_t> named;
        const bool all = pump_until(runtime, [&] {
            for (RuntimeEvent& e : runtime.take_events()) {
                if (e.kind == RuntimeEventKind::JobFailed && e.task == task) {
                    EXPECT_EQ(e.error, code) << e.message;
                    EXPECT_FALSE(e.message.empty());
                    EXPECT_TRUE(named.insert(e.generation).second)
                        << "generation " << e.generation << " named twice";
                }
                events.push_back(std::move(e));
            }
            return std::includes(named.begin(), named.end(), generations.begin(),
                                 generations.end());
        });
        EXPECT_TRUE(all) << "not every failed job was named";
        EXPECT_EQ(named, generations) << "a job that did not fail was named";
        EXPECT_EQ(runtime.events_dropped(), 0u);
        return events;
    }

    static bool has_event(const std::vector<RuntimeEvent>& events, RuntimeEventKind kind) {
        return std::any_of(events.begin(), events.end(),
                           [&](const RuntimeEvent& e) { return e.kind == kind; });
    }

    static void expect_retired_except_published(detail::RuntimeImpl& impl, TaskId task) {
        for (auto s : detail::RuntimeProbe(impl).slot_states(task)) {
            EXPECT_TRUE(s == SlotState::Retired || s == SlotState::Ready || s == SlotState::Leased)
                << detail::to_string(s);
            EXPECT_NE(s, SlotState::Free) << "a lost worker's slot can be reused";
        }
    }
};

TEST_F(RuntimeFaults, ForcedDeviceLossRetiresSlotsAndKeepsTheLastOutput) {
    auto runtime = make_runtime();
    auto reader = make_reader(*runtime);
    auto& impl = detail::RuntimeAccess::impl(*runtime);
    const TaskId task = runtime->register_task(pattern_task());
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));

    detail::RuntimeProbe(impl).force_device_lost(task);
    const SubmitResult lost = runtime->submit(task);
    ASSERT_TRUE(lost.accepted()) << "the loss is discovered by the worker";
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).worker_lost; }));
    const auto events =
        expect_failed_jobs(*runtime, task, {lost.generation}, TaskError::DeviceLost);
    EXPECT_TRUE(has_event(events, RuntimeEventKind::DeviceLost));
    const auto stats = runtime->stats(task);
    EXPECT_NE(stats.worker_lost_reason.find("VK_ERROR_DEVICE_LOST"), std::string::npos)
        << stats.worker_lost_reason;
    const auto r = runtime->submit(task);
    EXPECT_EQ(r.status, SubmitStatus::Failed);
    EXPECT_NE(r.reason.find("lost"), std::string::npos) << r.reason;
    EXPECT_EQ(runtime->stats(task).failed, 1u);
    expect_retired_except_published(impl, task);

    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease) << "the last published output must stay available";
    EXPECT_EQ(lease->generation, 1u);
    std::uint64_t v = 0;
    expect_pattern(read_back(*reader, *lease, v), *lease);
    runtime->release(*lease, v);
    runtime->pump();
    expect_retired_except_published(impl, task);
}

TEST_F(RuntimeFaults, WorkThatDoesNotCompleteInTimeMarksTheWorkerLost) {
    RuntimeOptions options;
    options.worker_timeout = std::chrono::milliseconds(300);
    auto runtime = make_runtime("none", options);
    auto reader = make_reader(*runtime);
    auto& impl = detail::RuntimeAccess::impl(*runtime);
    const TaskId task = runtime->register_task(pattern_task());
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
    detail::RuntimeProbe(impl).hold_generation(task, 2); // never reaches the GPU until released
    const SubmitResult held = runtime->submit(task);
    ASSERT_TRUE(held.accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).worker_lost; }));
    EXPECT_TRUE(
        has_event(expect_failed_jobs(*runtime, task, {held.generation}, TaskError::DeviceLost),
                  RuntimeEventKind::DeviceLost));
    EXPECT_NE(
        runtime->stats(task).worker_lost_reason.find("no progress for longer than its allowance"),
        std::string::npos)
        << runtime->stats(task).worker_lost_reason;
    EXPECT_EQ(runtime->submit(task).status, SubmitStatus::Failed);
    expect_retired_except_published(impl, task);
    detail::RuntimeProbe(impl).release_held(
        task); // the late job finds its slot retired and does nothing
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease->generation, 1u);
    std::uint64_t v = 0;
    expect_pattern(read_back(*reader, *lease, v), *lease);
    runtime->release(*lease, v);
}

// With two workers, losing one leaves the other running.
TEST_F(RuntimeFaults, LosingOneWorkerLeavesTheOtherRunning) {
    auto runtime = make_runtime("auto");
    auto& impl = detail::RuntimeAccess::impl(*runtime);
    const TaskId a = runtime->register_task(pattern_task("worker:0"));
    const TaskId b = runtime->register_task(pattern_task("worker:1"));
    detail::RuntimeProbe(impl).force_device_lost(a);
    const SubmitResult lost = runtime->submit(a);
    ASSERT_TRUE(lost.accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(a).worker_lost; }));
    const auto events = expect_failed_jobs(*runtime, a, {lost.generation}, TaskError::DeviceLost);
    const auto loss = std::find_if(events.begin(), events.end(), [](const RuntimeEvent& e) {
        return e.kind == RuntimeEventKind::DeviceLost;
    });
    ASSERT_NE(loss, events.end());
    EXPECT_EQ(loss->device, runtime->stats(a).device);
    EXPECT_EQ(runtime->submit(a).status, SubmitStatus::Failed);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(b).accepted(); }));
    }
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(b).newest_generation == 5; }));
    EXPECT_FALSE(runtime->stats(b).worker_lost);
}

// Fails the jobs whose single byte is 0xEE (its record() throws); clears the others.
class FailOnRequest final : public ClearWorkload {
public:
    void record(const RecordContext& job) override {
        if (job.bytes.size() == 1 && job.bytes[0] == std::byte{0xEE}) {
            throw std::runtime_error("the test asked this job to fail");
        }
        ClearWorkload::record(job);
    }
};

// Every job whose record() was made to throw, among jobs that succeed, is named by a JobFailed
// event with its generation (and only those); the last one the task allows in a row stops it,
// which a TaskStopped event says.
TEST_F(RuntimeFaults, EveryJobMadeToFailIsNamedByItsGeneration) {
    RuntimeOptions options;
    options.max_consecutive_failures = 3;
    auto runtime = make_runtime("1", options);
    TaskDesc desc = pattern_task("worker:0");
    desc.workload = "(application)";
    desc.factory = [](const WorkerContext&) { return std::make_unique<FailOnRequest>(); };
    const TaskId task = runtime->register_task(desc);
    const std::byte fail[1] = {std::byte{0xEE}};
    const std::byte good[4] = {};
    std::set<std::uint64_t> failed;
    // Failures among successes (never three in a row), then three in a row.
    const bool plan[] = {true, false, true, true, false, false, true, false, true, true, true};
    for (const bool to_fail : plan) {
        SubmitResult r;
        ASSERT_TRUE(pump_until(*runtime, [&] {
            r = to_fail ? runtime->submit(task, fail) : runtime->submit(task, good);
            return r.status != SubmitStatus::Busy;
        }));
        ASSERT_TRUE(r.accepted()) << r.reason;
        if (to_fail) {
            failed.insert(r.generation);
        }
        // One at a time, so that the failures in a row are the plan's.
        ASSERT_TRUE(pump_until(*runtime, [&] {
            const TaskStats s = runtime->stats(task);
            return s.ready + s.superseded + s.failed_jobs >= r.generation;
        }));
    }
    const auto events = expect_failed_jobs(*runtime, task, failed, TaskError::WorkloadFailed);
    const auto stopped = std::count_if(events.begin(), events.end(), [&](const RuntimeEvent& e) {
        return e.kind == RuntimeEventKind::TaskStopped && e.task == task &&
               e.error == TaskError::Stopped;
    });
    EXPECT_EQ(stopped, 1);
    EXPECT_EQ(runtime->stats(task).failed_jobs, failed.size());
    EXPECT_EQ(runtime->submit(task, good).error, TaskError::Stopped);
}

// The event log is bounded: with max_events 2, the newest two are kept and the rest counted.
TEST_F(RuntimeFaults, TheEventLogKeepsTheNewestAndCountsTheRest) {
    RuntimeOptions options;
    options.max_events = 2;
    options.max_consecutive_failures = 100;
    auto runtime = make_runtime("none", options);
    TaskDesc desc = pattern_task();
    desc.workload = "(application)";
    desc.factory = [](const WorkerContext&) { return std::make_unique<FailOnRequest>(); };
    const TaskId task = runtime->register_task(desc);
    const std::byte fail[1] = {std::byte{0xEE}};
    std::uint64_t last = 0;
    for (int i = 0; i < 5; ++i) {
        SubmitResult r;
        ASSERT_TRUE(pump_until(*runtime, [&] {
            r = runtime->submit(task, fail);
            return r.status != SubmitStatus::Busy;
        }));
        ASSERT_TRUE(r.accepted());
        last = r.generation;
    }
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).failed_jobs == 5; }));
    const auto events = runtime->take_events();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events.back().generation, last);
    EXPECT_EQ(events.back().sequence, 5u);
    EXPECT_EQ(runtime->events_dropped(), 3u);
    EXPECT_TRUE(runtime->take_events().empty());
}

} // namespace
} // namespace tandem::test
