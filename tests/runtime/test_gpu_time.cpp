// The runtime times every job's own commands on the GPU, whatever the workload (an
// application's TaskDesc::factory or a built-in one): lavapipe writes timestamps, so a task
// reports one GPU time per completed job, above zero, in TaskStats::gpu_us and in its device's
// TaskDeviceStats, also with several jobs in flight at once; a task still being prepared is
// not timed yet.
#include <thread>

#include <gtest/gtest.h>

#include "core/resources.hpp"
#include "runtime_fixture.hpp"
#include "tandem/workload.hpp"

namespace tandem::test {
namespace {

// Known work: clears the whole image `clears` times (each clear waits for the previous one).
class RepeatedClear final : public Workload {
public:
    explicit RepeatedClear(std::uint32_t clears) : m_clears(clears) {}
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                              VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        for (std::uint32_t i = 0; i < m_clears; ++i) {
            if (i > 0) {
                detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                      VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                      VK_PIPELINE_STAGE_2_CLEAR_BIT,
                                      VK_ACCESS_2_TRANSFER_WRITE_BIT);
            }
            VkClearColorValue colour{};
            colour.float32[0] = static_cast<float>(i % 7) / 7.0f;
            colour.float32[3] = 1.0f;
            vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &colour,
                                 1, &range);
        }
    }

private:
    std::uint32_t m_clears;
};

class GpuTime : public RuntimeTest {
protected:
    static TaskDesc clear_task(const std::string& name, const std::string& placement,
                               std::uint32_t clears) {
        TaskDesc desc = pattern_task(placement, 256, 256);
        desc.name = name;
        desc.factory = [clears](const WorkerContext&) {
            return std::make_unique<RepeatedClear>(clears);
        };
        return desc;
    }

    // Runs `jobs` jobs one after another; then waits until each is timed (the watcher counts a
    // job once it saw it complete, which may come a moment after the pump saw it ready).
    static void run_jobs(Runtime& runtime, TaskId task, std::uint64_t jobs) {
        for (std::uint64_t g = 1; g <= jobs; ++g) {
            ASSERT_TRUE(pump_until(runtime, [&] { return runtime.submit(task).accepted(); }));
            ASSERT_TRUE(pump_until(runtime, [&] {
                const TaskStats s = runtime.stats(task);
                return s.ready + s.superseded >= g;
            }));
        }
        ASSERT_TRUE(pump_until(runtime, [&] { return runtime.stats(task).gpu_us.count >= jobs; }));
    }

    static void expect_timed(const TaskStats& s, std::uint64_t jobs, const std::string& where) {
        EXPECT_TRUE(s.gpu_timed) << where;
        EXPECT_EQ(s.gpu_us.count, jobs) << where;
        EXPECT_EQ(s.gpu_us.count, s.ready + s.superseded) << where;
        EXPECT_GT(s.gpu_us.p50_us, 0.0) << where;
        EXPECT_GE(s.gpu_us.p99_us, s.gpu_us.p50_us) << where;
        EXPECT_GE(s.gpu_us.max_us, s.gpu_us.p99_us) << where;
        EXPECT_GT(s.gpu_us.first_us, 0.0) << where;
        EXPECT_GE(s.gpu_us.total_us, s.gpu_us.max_us) << where;
        ASSERT_EQ(s.devices.size(), 1u) << where;
        const TaskDeviceStats& d = s.devices[0];
        EXPECT_EQ(d.device, s.device) << where;
        EXPECT_TRUE(d.gpu_timed) << where;
        EXPECT_EQ(d.gpu_us.count, jobs) << where;
        EXPECT_DOUBLE_EQ(d.gpu_us.p50_us, s.gpu_us.p50_us) << where;
        EXPECT_DOUBLE_EQ(d.gpu_us.total_us, s.gpu_us.total_us) << where;
    }
};

TEST_F(GpuTime, AnApplicationWorkloadsJobsAreTimedOnThePrimaryAndOnAWorker) {
    auto runtime = make_runtime("1");
    for (const std::string placement : {"primary", "worker:0"}) {
        const TaskId task = runtime->register_task(clear_task("clears-" + placement, placement, 8));
        constexpr std::uint64_t k_jobs = 5;
        run_jobs(*runtime, task, k_jobs);
        expect_timed(runtime->stats(task), k_jobs, placement);
        // Counted once each: pumping on changes nothing.
        for (int i = 0; i < 20; ++i) {
            runtime->pump();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        EXPECT_EQ(runtime->stats(task).gpu_us.count, k_jobs) << placement;
    }
}

TEST_F(GpuTime, TheBuiltInPatternWorkloadIsTimedToo) {
    auto runtime = make_runtime("1");
    const TaskId task = runtime->register_task(pattern_task("worker:0"));
    run_jobs(*runtime, task, 4);
    expect_timed(runtime->stats(task), 4, "pattern");
}

TEST_F(GpuTime, ATaskBeingPreparedIsNotTimedYetAndPumpsManyJobsWithoutLosingOne) {
    auto runtime = make_runtime("1");
    const TaskId task = runtime->register_task_async(clear_task("async", "worker:0", 2));
    const TaskStats first = runtime->stats(task);
    if (first.preparing) {
        EXPECT_FALSE(first.gpu_timed);
        EXPECT_EQ(first.gpu_us.count, 0u);
    }
    // Jobs back to back, several in flight at once: each completed job is timed exactly once,
    // whether the watcher or the slot's next recording takes its time.
    std::uint64_t accepted = 0;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        if (runtime->submit(task).accepted()) {
            ++accepted;
        }
        return accepted == 40;
    }));
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const TaskStats s = runtime->stats(task);
        return s.in_flight == 0 && s.gpu_us.count >= s.ready + s.superseded;
    }));
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.ready + s.superseded, accepted);
    expect_timed(s, accepted, "back to back");
}

} // namespace
} // namespace tandem::test
