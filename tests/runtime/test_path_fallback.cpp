// Transfer-path self-test and fallback inside the runtime, on lavapipe opened three times (two
// openings of one device allow zero-copy, shared-memory, host-imported and host-copy), for each
// of those paths: a path whose self-test fails (an injected fault, or a wrong byte) is dropped
// with its reason and the task runs on the next one; a path that fails after the task published
// output (a fault in a later transfer) is dropped too, and the task is prepared again on the
// same device with the next path while its last output stays acquirable, its generations never
// go back and its later outputs are exact. A link failing with a lost device loses the worker
// instead, dropping no path. Under the fixture's synchronisation validation.
#include <algorithm>
#include <optional>
#include <string>

#include "core/capabilities.hpp"
#include "core/vk_check.hpp"
#include "runtime_fixture.hpp"
#include "transfer/path_self_test.hpp"
#include "transfer_test_support.hpp"

namespace tandem::test {
namespace {

class PathFallback : public RuntimeTest, public ::testing::WithParamInterface<TransferPath> {
protected:
    void SetUp() override {
        RuntimeTest::SetUp();
        if (HasFatalFailure() || IsSkipped()) {
            return;
        }
        m_pair = detail::query_pair_info(adapters()[1].info, adapters()[0].info);
        // Without CUDA, the cuda-peer path runs with the host's copy in place of CUDA's.
        m_stand_in = path() == TransferPath::CudaPeer && detail::allow_cuda_stand_in(m_pair);
        if (!m_pair.allows(path())) {
            GTEST_SKIP() << to_string(path()) << " is not available here";
        }
    }
    void TearDown() override {
        detail::clear_vk_faults();
        detail::clear_self_test_corruption();
        RuntimeTest::TearDown();
    }
    [[nodiscard]] TransferPath path() const { return GetParam(); }
    // A runtime over two openings of the device; the cuda-peer path with the host's copy where
    // there is no CUDA, as the bridge's host step: with the host signalling a stream's gate while
    // the runtime's threads poll the primary timeline, Debian 12's synchronisation validation now
    // and then stalls 10 s in its own state tracking ("UNASSIGNED-VkSemaphore-state-timeout").
    // The link tests run the host's stream.
    [[nodiscard]] std::unique_ptr<Runtime> path_runtime() {
        auto runtime = make_runtime("auto");
        if (m_stand_in) {
            detail::RuntimeAccess::impl(*runtime).stand_in_for_cuda(host_staging_copier(false));
        }
        return runtime;
    }
    // The path the pair falls back to from path(), if any.
    [[nodiscard]] std::optional<TransferPath> next_path() const {
        bool after = false;
        for (const auto& a : m_pair.paths) {
            if (after && a.available) {
                return a.path;
            }
            after = after || a.path == path();
        }
        return std::nullopt;
    }
    // Fails the self-test of every path the pair prefers to path(), so path() is chosen.
    void fail_better_self_tests() const {
        for (const auto& a : m_pair.paths) {
            if (a.path == path()) {
                break;
            }
            if (a.available) {
                detail::inject_vk_fault(detail::self_test_context(a.path),
                                        VK_ERROR_INITIALIZATION_FAILED);
            }
        }
    }
    // The reason path() was dropped for the task's pair ("" when it was not).
    static std::string dropped_reason(const TaskStats& stats, TransferPath dropped) {
        for (const auto& d : stats.dropped_paths) {
            if (d.path == to_string(dropped)) {
                return d.reason;
            }
        }
        return {};
    }
    // Submits and acquires until `count` outputs newer than `previous` were read back exact;
    // generations never go back. Returns the newest generation seen.
    std::uint64_t deliver_exact(Runtime& runtime, harness::LeaseReader& reader, TaskId task,
                                int count, std::uint64_t previous) {
        int verified = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (verified < count && std::chrono::steady_clock::now() < deadline && !HasFailure()) {
            (void)runtime.submit(task);
            runtime.pump();
            auto lease = runtime.acquire(task);
            if (!lease) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                continue;
            }
            EXPECT_GE(lease->generation, previous) << "went back";
            std::uint64_t v = 0;
            if (lease->generation > previous) {
                expect_pattern(read_back(reader, *lease, v), *lease);
                ++verified;
            }
            previous = std::max(previous, lease->generation);
            runtime.release(*lease, v);
        }
        EXPECT_EQ(verified, count);
        return previous;
    }

    PairInfo m_pair;
    bool m_stand_in = false;
};

TEST_P(PathFallback, AFailedSelfTestDropsThePathAndTheNextRunsTheTask) {
    for (const bool corrupt : {false, true}) {
        SCOPED_TRACE(corrupt ? "wrong byte" : "fault");
        fail_better_self_tests();
        if (corrupt) {
            detail::inject_self_test_corruption(path());
        } else {
            detail::inject_vk_fault(detail::self_test_context(path()),
                                    VK_ERROR_INVALID_EXTERNAL_HANDLE);
        }
        auto runtime = path_runtime();
        const auto next = next_path();
        const std::string why =
            corrupt ? "byte 0 of texel (5, 3)" : "VK_ERROR_INVALID_EXTERNAL_HANDLE";
        // The drop at the self-test is an event of its own, though no job ever carried the path.
        const auto expect_drop_reported = [&] {
            const auto events = runtime->take_events();
            EXPECT_TRUE(std::any_of(events.begin(), events.end(),
                                    [&](const RuntimeEvent& e) {
                                        return e.kind == RuntimeEventKind::TransferPathDropped &&
                                               e.error == TaskError::TransferFailed &&
                                               e.message.find(to_string(path())) !=
                                                   std::string::npos &&
                                               e.message.find(why) != std::string::npos;
                                    }))
                << events.size() << " events";
        };
        if (!next) {
            EXPECT_THROW((void)runtime->register_task(pattern_task("worker:0")), Error)
                << "no path is left";
            expect_drop_reported();
            detail::clear_vk_faults();
            continue;
        }
        auto reader = make_reader(*runtime);
        const TaskId task = runtime->register_task(pattern_task("worker:0"));
        expect_drop_reported();
        EXPECT_EQ(runtime->stats(task).transfer_path, next);
        const TaskStats stats = runtime->stats(task);
        EXPECT_EQ(stats.transfer_path, next);
        const std::string reason = dropped_reason(stats, path());
        EXPECT_NE(reason.find(why), std::string::npos) << reason;
        (void)deliver_exact(*runtime, *reader, task, 3, 0);
        // A second task of the pair is not self-tested again, and never gets the dropped path.
        const TaskId other = runtime->register_task(pattern_task("worker:0", 33, 17));
        EXPECT_EQ(runtime->stats(other).transfer_path, next);
        detail::clear_vk_faults();
    }
}

TEST_P(PathFallback, APathThatFailsInUseFallsBackKeepingTheOutput) {
    fail_better_self_tests();
    auto runtime = path_runtime();
    auto reader = make_reader(*runtime);
    const TaskId task = runtime->register_task(pattern_task("worker:0"));
    ASSERT_EQ(runtime->stats(task).transfer_path, path());
    const std::uint64_t shown = deliver_exact(*runtime, *reader, task, 2, 0);
    ASSERT_GT(shown, 0u);

    // The next transfer's recording fails inside the link: the path, not the device. For the
    // CUDA path, its CUDA copy on the pair's bridge thread fails instead.
    const bool cuda = path() == TransferPath::CudaPeer;
    if (cuda) {
        detail::inject_vk_fault("CUDA copy cuda-peer", VK_ERROR_UNKNOWN);
    } else {
        detail::inject_vk_fault("vkEndCommandBuffer transfer worker",
                                VK_ERROR_OUT_OF_DEVICE_MEMORY);
    }
    // The fault may hit a transfer deliver_exact left in flight, before this submit: with no
    // path left the task then refuses submits at once, which the loop below checks.
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const SubmitResult r = runtime->submit(task);
        return r.accepted() || r.status == SubmitStatus::Failed;
    }));
    const auto next = next_path();
    std::uint64_t previous = shown;
    bool settled = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!settled && std::chrono::steady_clock::now() < deadline && !HasFailure()) {
        runtime->pump();
        // Until a newer output arrives, the last one stays acquirable and exact.
        auto lease = runtime->acquire(task);
        ASSERT_TRUE(lease) << "the last published output must stay acquirable";
        EXPECT_GE(lease->generation, previous) << "went back";
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *lease, v), *lease);
        previous = std::max(previous, lease->generation);
        runtime->release(*lease, v);
        const TaskStats stats = runtime->stats(task);
        EXPECT_FALSE(stats.worker_lost) << stats.worker_lost_reason;
        const SubmitResult r = runtime->submit(task);
        settled = next ? stats.transfer_path == next : r.status == SubmitStatus::Failed;
        if (!next && settled) {
            EXPECT_NE(r.reason.find("no other path"), std::string::npos) << r.reason;
            EXPECT_NE(r.reason.find("was dropped"), std::string::npos) << r.reason;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ASSERT_TRUE(settled);
    // The drop, and the job whose transfer failed, are reported as events.
    const auto events = runtime->take_events();
    const auto reported = [&](RuntimeEventKind kind) {
        return std::any_of(events.begin(), events.end(), [&](const RuntimeEvent& e) {
            return e.kind == kind && e.task == task && e.error == TaskError::TransferFailed;
        });
    };
    EXPECT_TRUE(reported(RuntimeEventKind::TransferPathDropped));
    EXPECT_TRUE(reported(RuntimeEventKind::JobFailed));
    const TaskStats stats = runtime->stats(task);
    const std::string reason = dropped_reason(stats, path());
    EXPECT_NE(reason.find("failed in use"), std::string::npos) << reason;
    EXPECT_NE(reason.find(cuda ? "the CUDA copy between the GPUs failed"
                               : "VK_ERROR_OUT_OF_DEVICE_MEMORY"),
              std::string::npos)
        << reason;
    if (next) {
        EXPECT_EQ(runtime->stats(task).transfer_path, next);
        const std::uint64_t newest = deliver_exact(*runtime, *reader, task, 3, previous);
        EXPECT_GT(newest, shown);
        EXPECT_FALSE(runtime->stats(task).worker_lost);
    } else {
        auto lease = runtime->acquire(task);
        ASSERT_TRUE(lease) << "with no path left the last output stays acquirable";
        EXPECT_EQ(lease->generation, previous);
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *lease, v), *lease);
        runtime->release(*lease, v);
    }
}

// Zero-copy's slot images are its shared memory: when a task's cannot be made (here, the
// primary's import of one fails), the path is dropped for the pair with the reason, that task
// runs on the next path, and a task already running on zero-copy keeps its link.
TEST_P(PathFallback, AFailedImportOfSlotImagesDropsThePathForTheNextTask) {
    if (path() != TransferPath::ZeroCopy) {
        GTEST_SKIP() << "only zero-copy's slot images are the path's own memory";
    }
    auto runtime = path_runtime();
    auto reader = make_reader(*runtime);
    const TaskId first = runtime->register_task(pattern_task("worker:0"));
    ASSERT_EQ(runtime->stats(first).transfer_path, TransferPath::ZeroCopy);
    const std::uint64_t shown = deliver_exact(*runtime, *reader, first, 2, 0);

    detail::inject_vk_fault("vkAllocateMemory import", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    const TaskId second = runtime->register_task(pattern_task("worker:0"));
    const auto next = next_path();
    ASSERT_TRUE(next);
    EXPECT_EQ(runtime->stats(second).transfer_path, next);
    const std::string reason = dropped_reason(runtime->stats(second), TransferPath::ZeroCopy);
    EXPECT_NE(reason.find("slot images"), std::string::npos) << reason;
    EXPECT_NE(reason.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos) << reason;
    (void)deliver_exact(*runtime, *reader, second, 2, 0);
    EXPECT_EQ(runtime->stats(first).transfer_path, TransferPath::ZeroCopy);
    EXPECT_GT(deliver_exact(*runtime, *reader, first, 2, shown), shown);
    EXPECT_FALSE(runtime->stats(first).worker_lost);
}

class LinkDeviceLoss : public RuntimeTest {
protected:
    void TearDown() override {
        detail::clear_vk_faults();
        RuntimeTest::TearDown();
    }
};

// A link that fails because the device reported loss is the device's fault: the worker is lost
// as before (its last output kept), and no path is dropped for the pair.
TEST_F(LinkDeviceLoss, LosesTheWorkerAndDropsNoPath) {
    auto runtime = make_runtime("auto");
    auto reader = make_reader(*runtime);
    const TaskId task = runtime->register_task(pattern_task("worker:0"));
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
    detail::inject_vk_fault("vkEndCommandBuffer transfer worker", VK_ERROR_DEVICE_LOST);
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).worker_lost; }));
    const TaskStats stats = runtime->stats(task);
    EXPECT_TRUE(stats.dropped_paths.empty()) << stats.dropped_paths.front().reason;
    EXPECT_EQ(runtime->submit(task).status, SubmitStatus::Failed);
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease->generation, 1u);
    std::uint64_t v = 0;
    expect_pattern(read_back(*reader, *lease, v), *lease);
    runtime->release(*lease, v);
}

INSTANTIATE_TEST_SUITE_P(EveryRuntimePath, PathFallback,
                         ::testing::Values(TransferPath::ZeroCopy, TransferPath::SharedMemory,
                                           TransferPath::CudaPeer, TransferPath::HostImported,
                                           TransferPath::HostCopy),
                         [](const auto& param) {
                             std::string name = to_string(param.param);
                             std::erase(name, '-');
                             return name;
                         });

} // namespace
} // namespace tandem::test
