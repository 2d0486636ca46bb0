#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sync/host_bridge.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using namespace std::chrono_literals;
using detail::HostBridge;
using detail::TimelineSemaphore;

// Signals `semaphore` to `value` from the GPU: an empty submission on the device's main queue.
void gpu_signal(const detail::Device& device, const TimelineSemaphore& semaphore,
                std::uint64_t value) {
    const auto signal = semaphore.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    submit.signalSemaphoreInfoCount = 1;
    submit.pSignalSemaphoreInfos = &signal;
    ASSERT_EQ(device.queue(detail::QueueRole::Main).submit({&submit, 1}), VK_SUCCESS);
}

// The primary-side action a bridge runs: a submission on the primary's queue that signals
// `semaphore` to `value`.
HostBridge::Action primary_signal(const detail::Device& device, const TimelineSemaphore& semaphore,
                                  std::uint64_t value) {
    return [&device, &semaphore, value] {
        const auto signal = semaphore.submit_info(value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.signalSemaphoreInfoCount = 1;
        submit.pSignalSemaphoreInfos = &signal;
        return device.queue(detail::QueueRole::Main).submit({&submit, 1});
    };
}

std::uint64_t value_of(const TimelineSemaphore& s) {
    std::uint64_t v = 0;
    EXPECT_EQ(s.value(v), VK_SUCCESS);
    return v;
}

class Timeline : public VulkanTest {};

TEST_F(Timeline, ValuesOnlyGrow) {
    auto& device = open(0);
    TimelineSemaphore s(device, "t", 5);
    EXPECT_EQ(value_of(s), 5u);
    EXPECT_EQ(s.signal(7), VK_SUCCESS);
    EXPECT_EQ(value_of(s), 7u);
    EXPECT_NE(s.signal(7), VK_SUCCESS);
    EXPECT_NE(s.signal(3), VK_SUCCESS);
    EXPECT_EQ(value_of(s), 7u);
}

TEST_F(Timeline, WaitTimesOutThenSucceeds) {
    auto& device = open(0);
    TimelineSemaphore s(device, "t");
    EXPECT_EQ(s.wait(1, 1ms), VK_TIMEOUT);
    gpu_signal(device, s, 1);
    EXPECT_EQ(s.wait(1, 5s), VK_SUCCESS);
}

TEST_F(Timeline, SharingNeedsOpaqueFdSupportAndSaysWhy) {
    auto& a = open(0);
    auto& b = open(1);
    if (a.info().features.external_semaphore_fd_timeline) {
        TimelineSemaphore exported(a, "exported", 0, true);
        auto imported = TimelineSemaphore::import_from(b, exported, "imported");
        gpu_signal(a, exported, 4);
        EXPECT_EQ(imported.wait(4, 5s), VK_SUCCESS);
        // Its batch on `a` completed too before `exported` goes (the wait above was on `b`).
        EXPECT_EQ(exported.wait(4, 5s), VK_SUCCESS);
    } else {
        EXPECT_THROW(TimelineSemaphore(a, "exported", 0, true), Error);
        TimelineSemaphore plain(a, "plain");
        try {
            (void)TimelineSemaphore::import_from(b, plain, "imported");
            FAIL() << "expected an error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("host bridge"), std::string::npos) << e.what();
        }
    }
}

class Bridge : public VulkanTest {
protected:
    std::uint32_t virtual_devices() const override { return 3; }
};

TEST_F(Bridge, ForwardsEveryValueInOrderAndRunsTheHostStepFirst) {
    auto& worker = open(1);
    auto& primary = open(0);
    TimelineSemaphore worker_done(worker, "worker done");
    TimelineSemaphore primary_ready(primary, "primary ready");
    HostBridge bridge(worker_done, {"test bridge", 5000ms, 64});
    std::vector<std::uint64_t> seen_before_signal;
    for (std::uint64_t v = 1; v <= 40; ++v) {
        ASSERT_TRUE(bridge.try_forward(v, [&, v] {
            // The action runs after the worker reached v and before the primary sees 2v.
            EXPECT_GE(value_of(worker_done), v);
            EXPECT_LT(value_of(primary_ready), 2 * v);
            seen_before_signal.push_back(v);
            return primary_signal(primary, primary_ready, 2 * v)();
        }));
        gpu_signal(worker, worker_done, v);
    }
    ASSERT_EQ(primary_ready.wait(80, 10s), VK_SUCCESS);
    EXPECT_EQ(bridge.forwarded(), 40u);
    ASSERT_EQ(seen_before_signal.size(), 40u);
    for (std::size_t i = 0; i < seen_before_signal.size(); ++i) {
        EXPECT_EQ(seen_before_signal[i], i + 1);
    }
    EXPECT_EQ(bridge.state(), HostBridge::State::Running);
}

TEST_F(Bridge, RefusesValuesThatDoNotGrowAndAFullQueue) {
    auto& worker = open(1);
    auto& primary = open(0);
    TimelineSemaphore worker_done(worker, "worker done");
    TimelineSemaphore primary_ready(primary, "primary ready");
    HostBridge bridge(worker_done, {"test bridge", 5000ms, 2});
    EXPECT_TRUE(bridge.try_forward(2, primary_signal(primary, primary_ready, 10)));
    EXPECT_FALSE(bridge.try_forward(2, primary_signal(primary, primary_ready, 11)));
    EXPECT_FALSE(bridge.try_forward(1, primary_signal(primary, primary_ready, 11)));
    EXPECT_FALSE(bridge.try_forward(3, {}));
    EXPECT_TRUE(bridge.try_forward(3, primary_signal(primary, primary_ready, 11)));
    // Capacity 2: one waiting, one queued.
    EXPECT_FALSE(bridge.try_forward(4, primary_signal(primary, primary_ready, 12)));
    gpu_signal(worker, worker_done, 3);
    ASSERT_EQ(primary_ready.wait(11, 10s), VK_SUCCESS);
}

// stop() with forwards pending returns without waiting for their values: the values come only
// from a watchdog, after stop() returned or a minute passed, and no action runs for them. A
// stop() that waited would return only once the watchdog sent them, and their actions ran.
TEST_F(Bridge, ShutsDownCleanlyWithWorkInFlight) {
    auto& worker = open(1);
    auto& primary = open(0);
    TimelineSemaphore worker_done(worker, "worker done");
    TimelineSemaphore primary_ready(primary, "primary ready");
    {
        HostBridge bridge(worker_done, {"test bridge", 600000ms, 64});
        for (std::uint64_t v = 1; v <= 10; ++v) {
            ASSERT_TRUE(bridge.try_forward(v, primary_signal(primary, primary_ready, v)));
        }
        gpu_signal(worker, worker_done, 3);
        ASSERT_EQ(primary_ready.wait(3, 10s), VK_SUCCESS);
        std::mutex mutex;
        std::condition_variable stopped_cv;
        bool stopped = false;
        bool watchdog_sent = false;
        std::thread watchdog([&] {
            std::unique_lock lock(mutex);
            if (!stopped_cv.wait_for(lock, 60s, [&] { return stopped; })) {
                watchdog_sent = true;
                EXPECT_EQ(worker_done.signal(10), VK_SUCCESS); // lets a waiting stop() go
            }
        });
        bridge.stop();
        {
            std::lock_guard lock(mutex);
            stopped = true;
        }
        stopped_cv.notify_all();
        watchdog.join();
        EXPECT_FALSE(watchdog_sent) << "stop() returned only once the pending values arrived";
        EXPECT_EQ(bridge.state(), HostBridge::State::Stopped);
        EXPECT_FALSE(bridge.try_forward(11, primary_signal(primary, primary_ready, 11)));
        if (!watchdog_sent) { // the values arrive after all: the stopped bridge runs nothing
            ASSERT_EQ(worker_done.signal(10), VK_SUCCESS);
        }
    }
    EXPECT_EQ(value_of(primary_ready), 3u); // no action ran for the dropped forwards
}

TEST_F(Bridge, ATimeoutIsAnErrorNotAHang) {
    auto& worker = open(1);
    auto& primary = open(0);
    TimelineSemaphore worker_done(worker, "worker done");
    TimelineSemaphore primary_ready(primary, "primary ready");
    HostBridge bridge(worker_done, {"test bridge", 50ms, 64});
    ASSERT_TRUE(bridge.try_forward(1, primary_signal(primary, primary_ready, 1)));
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (bridge.state() == HostBridge::State::Running &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(bridge.state(), HostBridge::State::TimedOut);
    EXPECT_NE(bridge.error().find("did not reach 1 within 50 ms"), std::string::npos)
        << bridge.error();
    EXPECT_FALSE(bridge.try_forward(2, primary_signal(primary, primary_ready, 2)));
    EXPECT_EQ(value_of(primary_ready), 0u);
}

TEST_F(Bridge, FailingActionStopsTheBridgeWithTheReason) {
    auto& worker = open(1);
    auto& primary = open(0);
    TimelineSemaphore worker_done(worker, "worker done");
    TimelineSemaphore primary_ready(primary, "primary ready");
    HostBridge bridge(worker_done, {"test bridge", 5000ms, 64});
    ASSERT_TRUE(
        bridge.try_forward(1, []() -> VkResult { throw std::runtime_error("copy went wrong"); }));
    gpu_signal(worker, worker_done, 1);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (bridge.state() == HostBridge::State::Running &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(bridge.state(), HostBridge::State::Failed);
    EXPECT_NE(bridge.error().find("copy went wrong"), std::string::npos);
    EXPECT_EQ(value_of(primary_ready), 0u);
    EXPECT_FALSE(bridge.try_forward(2, primary_signal(primary, primary_ready, 2)));
}

TEST_F(Bridge, AnActionErrorIsReported) {
    auto& worker = open(1);
    TimelineSemaphore worker_done(worker, "worker done");
    HostBridge bridge(worker_done, {"test bridge", 5000ms, 64});
    ASSERT_TRUE(bridge.try_forward(1, [] { return VK_ERROR_DEVICE_LOST; }));
    gpu_signal(worker, worker_done, 1);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (bridge.state() == HostBridge::State::Running &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(bridge.state(), HostBridge::State::Failed);
    EXPECT_NE(bridge.error().find("VK_ERROR_DEVICE_LOST"), std::string::npos) << bridge.error();
}

// Two bridges of one device pair run their actions on one thread, the pair's, which starts with
// the first and ends with the last; each forwards its own values.
TEST_F(Bridge, BridgesOfOnePairShareOneThread) {
    auto& worker = open(1);
    auto& primary = open(0);
    TimelineSemaphore done_a(worker, "worker done a");
    TimelineSemaphore done_b(worker, "worker done b");
    TimelineSemaphore ready_a(primary, "primary ready a");
    TimelineSemaphore ready_b(primary, "primary ready b");
    auto pair = std::make_shared<detail::PairBridge>("worker->primary bridge");
    EXPECT_FALSE(pair->running()); // no bridge yet: no thread
    std::mutex mutex;
    std::vector<std::thread::id> threads;
    auto on_thread = [&](HostBridge::Action action) -> HostBridge::Action {
        return [&, action] {
            std::lock_guard lock(mutex);
            threads.push_back(std::this_thread::get_id());
            return action();
        };
    };
    {
        HostBridge a(done_a, {"bridge a", 5000ms, 64}, pair);
        HostBridge b(done_b, {"bridge b", 5000ms, 64}, pair);
        EXPECT_TRUE(pair->running());
        EXPECT_EQ(pair->channels(), 2u);
        for (std::uint64_t v = 1; v <= 5; ++v) {
            ASSERT_TRUE(a.try_forward(v, on_thread(primary_signal(primary, ready_a, v))));
            ASSERT_TRUE(b.try_forward(v, on_thread(primary_signal(primary, ready_b, 10 * v))));
        }
        gpu_signal(worker, done_b, 5); // b's forwards do not wait behind a's
        ASSERT_EQ(ready_b.wait(50, 10s), VK_SUCCESS);
        EXPECT_EQ(value_of(ready_a), 0u);
        gpu_signal(worker, done_a, 5);
        ASSERT_EQ(ready_a.wait(5, 10s), VK_SUCCESS);
    }
    EXPECT_FALSE(pair->running());
    EXPECT_EQ(pair->channels(), 0u);
    ASSERT_EQ(threads.size(), 10u);
    for (const auto& id : threads) {
        EXPECT_EQ(id, threads.front());
        EXPECT_NE(id, std::this_thread::get_id());
    }
}

// The failure rule: one bridge's timeout or failing action fails that bridge only, and the pair's
// other bridge keeps forwarding; VK_ERROR_DEVICE_LOST fails every bridge of the pair, and any
// that attaches to it later.
TEST_F(Bridge, OneBridgeFailsAloneUnlessThePairsDeviceIsLost) {
    auto& worker = open(1);
    auto& primary = open(0);
    TimelineSemaphore never(worker, "worker that never finishes");
    TimelineSemaphore done(worker, "worker done");
    TimelineSemaphore ready(primary, "primary ready");
    auto pair = std::make_shared<detail::PairBridge>("test pair");
    auto wait_until_not_running = [](const HostBridge& bridge) {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (bridge.state() == HostBridge::State::Running &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(1ms);
        }
    };
    HostBridge timed_out(never, {"times out", 50ms, 64}, pair);
    HostBridge failing(done, {"fails", 5000ms, 64}, pair);
    HostBridge healthy(done, {"healthy", 5000ms, 64}, pair);
    ASSERT_TRUE(timed_out.try_forward(1, primary_signal(primary, ready, 100)));
    ASSERT_TRUE(failing.try_forward(1, [] { return VK_ERROR_OUT_OF_HOST_MEMORY; }));
    ASSERT_TRUE(healthy.try_forward(1, primary_signal(primary, ready, 1)));
    gpu_signal(worker, done, 1);
    wait_until_not_running(timed_out);
    wait_until_not_running(failing);
    EXPECT_EQ(timed_out.state(), HostBridge::State::TimedOut);
    EXPECT_EQ(failing.state(), HostBridge::State::Failed);
    ASSERT_EQ(ready.wait(1, 10s), VK_SUCCESS);
    ASSERT_TRUE(healthy.try_forward(2, primary_signal(primary, ready, 2)));
    gpu_signal(worker, done, 2);
    ASSERT_EQ(ready.wait(2, 10s), VK_SUCCESS);
    EXPECT_EQ(healthy.state(), HostBridge::State::Running);
    EXPECT_TRUE(pair->device_failure().empty());

    HostBridge lost(done, {"device lost", 5000ms, 64}, pair);
    ASSERT_TRUE(lost.try_forward(3, [] { return VK_ERROR_DEVICE_LOST; }));
    gpu_signal(worker, done, 3);
    wait_until_not_running(lost);
    wait_until_not_running(healthy);
    EXPECT_EQ(lost.state(), HostBridge::State::Failed);
    EXPECT_EQ(healthy.state(), HostBridge::State::Failed);
    EXPECT_NE(healthy.error().find("VK_ERROR_DEVICE_LOST"), std::string::npos) << healthy.error();
    EXPECT_NE(pair->device_failure().find("VK_ERROR_DEVICE_LOST"), std::string::npos);
    HostBridge later(done, {"later", 5000ms, 64}, pair);
    wait_until_not_running(later);
    EXPECT_EQ(later.state(), HostBridge::State::Failed);
    EXPECT_EQ(value_of(ready), 2u);
}

// Several bridges (one per worker) and several producer threads at once: every primary timeline
// ends at its last value and never went backwards on the way.
class BridgeSweep : public Bridge, public ::testing::WithParamInterface<int> {};

TEST_P(BridgeSweep, ConcurrentBridgesNeverGoBackwards) {
    const int workers = GetParam();
    auto& primary = open(0);
    std::vector<detail::Device*> worker_devices;
    for (int w = 0; w < workers; ++w) {
        worker_devices.push_back(&open(static_cast<std::uint32_t>(1 + w % 2)));
    }
    std::vector<std::unique_ptr<TimelineSemaphore>> done;
    std::vector<std::unique_ptr<TimelineSemaphore>> ready;
    std::vector<std::unique_ptr<HostBridge>> bridges;
    for (int w = 0; w < workers; ++w) {
        done.push_back(std::make_unique<TimelineSemaphore>(*worker_devices[w], "done"));
        ready.push_back(std::make_unique<TimelineSemaphore>(primary, "ready"));
        bridges.push_back(std::make_unique<HostBridge>(
            *done.back(), HostBridge::Options{"bridge", 10000ms, 256}));
    }
    constexpr std::uint64_t k_jobs = 60;
    std::vector<std::thread> producers;
    for (int w = 0; w < workers; ++w) {
        producers.emplace_back([&, w] {
            for (std::uint64_t v = 1; v <= k_jobs; ++v) {
                while (!bridges[w]->try_forward(v, primary_signal(primary, *ready[w], v))) {
                    std::this_thread::yield();
                }
                gpu_signal(*worker_devices[w], *done[w], v);
            }
        });
    }
    std::vector<std::uint64_t> last(workers, 0);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    bool all = false;
    while (!all && std::chrono::steady_clock::now() < deadline) {
        all = true;
        for (int w = 0; w < workers; ++w) {
            const std::uint64_t v = value_of(*ready[w]);
            EXPECT_GE(v, last[w]);
            last[w] = v;
            all = all && v == k_jobs;
        }
    }
    for (auto& t : producers) {
        t.join();
    }
    for (int w = 0; w < workers; ++w) {
        EXPECT_EQ(value_of(*ready[w]), k_jobs);
        // The bridge records a forward as done after its action returns, which may be after
        // the GPU already signalled what the action submitted.
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (bridges[w]->forwarded() < k_jobs && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(1ms);
        }
        EXPECT_EQ(bridges[w]->forwarded(), k_jobs);
    }
}

INSTANTIATE_TEST_SUITE_P(Workers, BridgeSweep, ::testing::Values(1, 2, 4));

} // namespace
} // namespace tandem::test
