// The runtime times the jobs' own commands on the GPU, whatever the workload (an
// application's TaskDesc::factory or a built-in one): lavapipe writes timestamps, so with
// RuntimeOptions::cpu_device_timing_period 0 a task reports one GPU time per completed job,
// above zero, in TaskStats::gpu_us and in its device's TaskDeviceStats, also with several jobs
// in flight at once; a task still being prepared is not timed yet. Otherwise a CPU device's
// jobs are timed the first four and then one each period, trial jobs each, and the rest are
// counted as untimed; on any other device every job is timed.
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
    // Every job timed, on a CPU device too.
    std::unique_ptr<Runtime> make_timed_runtime() {
        RuntimeOptions options;
        options.cpu_device_timing_period = std::chrono::milliseconds(0);
        return make_runtime("1", options);
    }

    static TaskDesc clear_task(const std::string& name, const std::string& placement,
                               std::uint32_t clears) {
        TaskDesc desc = pattern_task(placement, 256, 256);
        desc.name = name;
        desc.factory = [clears](const WorkerContext&) {
            return std::make_unique<RepeatedClear>(clears);
        };
        return desc;
    }

    // Runs `jobs` jobs one after another, each submitted `spacing` after the one before was
    // ready; then waits until `timed` of them are timed (the watcher counts a job once it saw
    // it complete, which may come a moment after the pump saw it ready).
    static void run_jobs(Runtime& runtime, TaskId task, std::uint64_t jobs, std::uint64_t timed,
                         std::chrono::milliseconds spacing = std::chrono::milliseconds(0)) {
        for (std::uint64_t g = 1; g <= jobs; ++g) {
            std::this_thread::sleep_for(spacing);
            ASSERT_TRUE(pump_until(runtime, [&] { return runtime.submit(task).accepted(); }));
            ASSERT_TRUE(pump_until(runtime, [&] {
                const TaskStats s = runtime.stats(task);
                return s.ready + s.superseded >= g;
            }));
        }
        ASSERT_TRUE(pump_until(runtime, [&] { return runtime.stats(task).gpu_us.count >= timed; }));
    }

    static void expect_timed(const TaskStats& s, std::uint64_t jobs, const std::string& where) {
        EXPECT_TRUE(s.gpu_timed) << where;
        EXPECT_EQ(s.gpu_us.count, jobs) << where;
        EXPECT_EQ(s.gpu_us.untimed, 0u) << where;
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
    auto runtime = make_timed_runtime();
    for (const std::string placement : {"primary", "worker:0"}) {
        const TaskId task = runtime->register_task(clear_task("clears-" + placement, placement, 8));
        constexpr std::uint64_t k_jobs = 5;
        run_jobs(*runtime, task, k_jobs, k_jobs);
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
    auto runtime = make_timed_runtime();
    const TaskId task = runtime->register_task(pattern_task("worker:0"));
    run_jobs(*runtime, task, 4, 4);
    expect_timed(runtime->stats(task), 4, "pattern");
}

TEST_F(GpuTime, ATaskBeingPreparedIsNotTimedYetAndPumpsManyJobsWithoutLosingOne) {
    auto runtime = make_timed_runtime();
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

TEST_F(GpuTime, ACpuDevicesJobsAreTimedOnceEachPeriodAndTheRestCounted) {
    RuntimeOptions options;
    options.cpu_device_timing_period = std::chrono::hours(1); // no period passes in the test
    auto runtime = make_runtime("1", options);
    ASSERT_FALSE(runtime->worker_devices().empty());
    const bool cpu = runtime->worker_devices()[0].type == "cpu";
    const TaskId task = runtime->register_task(clear_task("sampled", "worker:0", 2));
    constexpr std::uint64_t k_jobs = 23;
    const std::uint64_t timed = cpu ? 4 : k_jobs; // the first four, then none for an hour
    run_jobs(*runtime, task, k_jobs, timed);
    for (int i = 0; i < 20; ++i) {
        runtime->pump(); // nothing more is counted
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const TaskStats s = runtime->stats(task);
    EXPECT_TRUE(s.gpu_timed);
    EXPECT_EQ(s.gpu_us.count, timed);
    EXPECT_EQ(s.gpu_us.count + s.gpu_us.untimed, k_jobs);
    EXPECT_GT(s.gpu_us.first_us, 0.0);
    EXPECT_GT(s.gpu_us.p50_us, 0.0);
    ASSERT_EQ(s.devices.size(), 1u);
    EXPECT_EQ(s.devices[0].gpu_us.count, timed);
    EXPECT_EQ(s.devices[0].gpu_us.untimed, k_jobs - timed);

    // The scheduler's trial jobs are timed each: calibrating measures every device.
    const TaskId measured = runtime->register_task(clear_task("calibrated", "worker:0", 2));
    const CalibrationResult c = runtime->calibrate(measured, {}, 12);
    EXPECT_EQ(c.error, TaskError::None) << c.reason;
    auto trial_timed = [&] {
        std::uint64_t n = 0;
        for (const TaskDeviceStats& d : runtime->stats(measured).devices) {
            EXPECT_EQ(d.gpu_us.untimed, 0u) << "adapter " << d.device;
            n += d.gpu_us.count;
        }
        return n;
    };
    const std::uint64_t trials = runtime->stats(measured).trial_jobs;
    EXPECT_GE(trials, 12u);
    EXPECT_TRUE(pump_until(*runtime, [&] { return trial_timed() >= trials; }));
    EXPECT_EQ(trial_timed(), trials);
}

TEST_F(GpuTime, ACpuDevicesPeriodTimesAJobEachTimeItPasses) {
    RuntimeOptions options;
    options.cpu_device_timing_period = std::chrono::milliseconds(30);
    auto runtime = make_runtime("1", options);
    const TaskId task = runtime->register_task(clear_task("periodic", "worker:0", 1));
    // Jobs recorded at least 40 ms apart: each comes after the period, so each is timed (the
    // four first ones are anyway).
    run_jobs(*runtime, task, 8, 8, std::chrono::milliseconds(40));
    const TaskStats spaced = runtime->stats(task);
    EXPECT_EQ(spaced.gpu_us.count, 8u);
    EXPECT_EQ(spaced.gpu_us.untimed, 0u);
}

TEST_F(GpuTime, RefusesANegativeTimingPeriodWithASentence) {
    RuntimeOptions options;
    options.cpu_device_timing_period = std::chrono::milliseconds(-1);
    try {
        (void)make_runtime("1", options);
        FAIL() << "a negative period was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cpu_device_timing_period"), std::string::npos)
            << e.what();
    }
}

} // namespace
} // namespace tandem::test
