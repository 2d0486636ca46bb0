// Lost devices and timeouts: the worker is marked lost, its slots retire, its last published
// output stays available and exact, submits answer Failed with a reason, nothing hangs.
#include "core/vk_check.hpp"
#include "runtime_fixture.hpp"

namespace tandem::test {
namespace {

using detail::SlotState;

class RuntimeFaults : public RuntimeTest {
protected:
    void TearDown() override {
        detail::clear_vk_faults();
        RuntimeTest::TearDown();
    }

    static void expect_retired_except_published(detail::RuntimeImpl& impl, TaskId task) {
        for (auto s : impl.slot_states(task)) {
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

    impl.force_device_lost(task);
    ASSERT_TRUE(runtime->submit(task).accepted()) << "the loss is discovered by the worker";
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).worker_lost; }));
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
    impl.hold_generation(task, 2); // never reaches the GPU until released
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).worker_lost; }));
    EXPECT_NE(
        runtime->stats(task).worker_lost_reason.find("no progress for longer than its allowance"),
        std::string::npos)
        << runtime->stats(task).worker_lost_reason;
    EXPECT_EQ(runtime->submit(task).status, SubmitStatus::Failed);
    expect_retired_except_published(impl, task);
    impl.release_held(task); // the late job finds its slot retired and does nothing
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
    impl.force_device_lost(a);
    (void)runtime->submit(a);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(a).worker_lost; }));
    EXPECT_EQ(runtime->submit(a).status, SubmitStatus::Failed);
    for (int i = 0; i < 5; ++i) {
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(b).accepted(); }));
    }
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(b).newest_generation == 5; }));
    EXPECT_FALSE(runtime->stats(b).worker_lost);
}

} // namespace
} // namespace tandem::test
