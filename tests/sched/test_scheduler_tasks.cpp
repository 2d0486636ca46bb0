// The runtime's scheduler and the tasks it knows (three openings of lavapipe, treated as
// separate devices): trial jobs run only for tasks placed auto; what it learns is keyed by
// TaskId, so a task registered under the name of one unregistered before the next pump starts
// from nothing of it and keeps its own; calibrate() does not hold the schedule lock while its
// trial jobs run, so registrations, observe_execute and placement() go on meanwhile.
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/vk_check.hpp"
#include "runtime_fixture.hpp"
#include "tandem/workload.hpp"

namespace tandem::test {
namespace {

class SchedulerTasksTest : public RuntimeTest {
protected:
    void SetUp() override {
        RuntimeTest::SetUp();
        ASSERT_EQ(adapters().size(), 3u);
    }
    void TearDown() override {
        runtime.reset();
        RuntimeTest::TearDown();
    }

    // No profile; a decision in every pump; the openings treated as separate devices, so that
    // trial jobs run on the workers.
    void start(bool background_calibration) {
        RuntimeOptions o;
        o.scheduler.decision_interval = std::chrono::milliseconds(0);
        o.scheduler.openings_are_separate = true;
        o.scheduler.background_calibration = background_calibration;
        runtime = make_runtime("auto", o);
        ASSERT_EQ(runtime->worker_devices().size(), 2u);
    }

    [[nodiscard]] std::uint32_t worker(std::size_t k) const {
        return runtime->worker_devices().at(k).index;
    }

    static TaskDesc pattern(const std::string& name, const std::string& placement) {
        TaskDesc d = pattern_task(placement, 64, 48);
        d.name = name;
        return d;
    }

    // The execute cost the last decision gave `task` on adapter `device` (nullopt: unknown).
    [[nodiscard]] std::optional<double> execute_ms(TaskId task, std::uint32_t device) const {
        const PlacementReport report = runtime->placement();
        const auto json = nlohmann::json::parse(report.json);
        for (std::size_t i = 0; i < report.tasks.size(); ++i) {
            if (report.tasks[i].task != task) {
                continue;
            }
            for (const auto& estimate : json.at("tasks").at(i).at("devices")) {
                if (estimate.at("device") == device) {
                    const auto& execute = estimate.at("execute");
                    return execute.is_null() ? std::nullopt
                                             : std::optional(execute.at("ms").get<double>());
                }
            }
        }
        ADD_FAILURE() << "the last decision has no estimate of " << task << " on " << device;
        return std::nullopt;
    }

    std::unique_ptr<Runtime> runtime;
};

// Background calibration measures the auto task on the workers; a task placed on the primary, on
// any worker or on a named adapter gets no trial job anywhere.
TEST_F(SchedulerTasksTest, TrialJobsRunOnlyForTasksPlacedAuto) {
    start(true);
    const TaskId automatic = runtime->register_task(pattern("auto", "auto"));
    const std::vector<TaskId> manual{
        runtime->register_task(pattern("primary", "primary")),
        runtime->register_task(pattern("worker", "worker")),
        runtime->register_task(pattern("named", std::to_string(worker(1)))),
    };
    const auto measured_everywhere = [&] {
        for (const TaskId t : manual) {
            (void)runtime->submit(t);
        }
        (void)runtime->submit(automatic);
        std::uint32_t devices_with_trials = 0;
        for (const TaskDeviceStats& d : runtime->stats(automatic).devices) {
            devices_with_trials += d.trial_jobs > 0 ? 1 : 0;
        }
        return devices_with_trials == 2; // both workers; the primary runs its own jobs
    };
    ASSERT_TRUE(pump_until(*runtime, measured_everywhere));
    for (const TaskId t : manual) {
        const TaskStats s = runtime->stats(t);
        EXPECT_EQ(s.trial_jobs, 0u) << t;
        for (const TaskDeviceStats& d : s.devices) {
            EXPECT_EQ(d.trial_jobs, 0u) << t << " on adapter " << d.device;
        }
    }
}

// A task unregistered and a new one of the same name registered before the next pump: the new
// one starts with none of the old one's measurements, and keeps its own once the pump dropped
// the old one's. Many such turns leave the last one as clean.
TEST_F(SchedulerTasksTest, MeasurementsAreTheTaskIdsNotTheNames) {
    start(false); // only what observe_execute reports
    constexpr int k_samples = 8;
    const TaskId old_task = runtime->register_task(pattern("same", "auto"));
    for (int i = 0; i < k_samples; ++i) {
        ASSERT_EQ(runtime->observe_execute(old_task, worker(0), 123.0), TaskError::None);
    }
    runtime->pump();
    ASSERT_EQ(execute_ms(old_task, worker(0)), std::optional(123.0));

    ASSERT_EQ(runtime->unregister_task(old_task), TaskError::None);
    const TaskId new_task = runtime->register_task(pattern("same", "auto")); // no pump between
    EXPECT_EQ(execute_ms(new_task, worker(0)), std::nullopt);
    for (int i = 0; i < k_samples; ++i) {
        ASSERT_EQ(runtime->observe_execute(new_task, worker(1), 77.0), TaskError::None);
    }
    runtime->pump(); // drops the old task's measurements
    EXPECT_EQ(execute_ms(new_task, worker(1)), std::optional(77.0));
    EXPECT_EQ(execute_ms(new_task, worker(0)), std::nullopt);

    TaskId last = new_task;
    for (int turn = 0; turn < 20; ++turn) {
        ASSERT_EQ(runtime->unregister_task(last), TaskError::None);
        last = runtime->register_task(pattern("same", "auto"));
        EXPECT_EQ(execute_ms(last, worker(1)), std::nullopt) << "turn " << turn;
        for (int i = 0; i < k_samples; ++i) {
            ASSERT_EQ(runtime->observe_execute(last, worker(0), 50.0 + turn), TaskError::None);
        }
        if (turn % 2 == 0) {
            runtime->pump();
        }
    }
    runtime->pump();
    EXPECT_EQ(execute_ms(last, worker(0)), std::optional(50.0 + 19));
}

// Clears its image; every job waits in record() until the test opens the gate, after saying
// that one has entered it.
struct Gate {
    std::mutex mutex;
    std::condition_variable changed;
    bool entered = false;
    bool open = false;
};

class GatedClear final : public Workload {
public:
    explicit GatedClear(std::shared_ptr<Gate> gate) : m_gate(std::move(gate)) {}
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        {
            std::unique_lock lock(m_gate->mutex);
            m_gate->entered = true;
            m_gate->changed.notify_all();
            m_gate->changed.wait(lock, [&] { return m_gate->open; });
        }
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                              VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const VkClearColorValue colour{{0.25f, 0.5f, 0.75f, 1.0f}};
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &colour, 1,
                             &range);
    }

private:
    std::shared_ptr<Gate> m_gate;
};

// While calibrate() is inside a trial job (its workload waits at the gate, which opens only
// after), another thread registers a task, reports a timing and reads the placement: each
// returns. Were the schedule lock held through the trial jobs, they would return only once the
// gate opened.
TEST_F(SchedulerTasksTest, CalibrateLeavesTheScheduleLockWhileTrialJobsRun) {
    start(false);
    auto gate = std::make_shared<Gate>();
    TaskDesc gated = pattern("gated", "auto");
    gated.factory = [gate](const WorkerContext&) { return std::make_unique<GatedClear>(gate); };
    const TaskId task = runtime->register_task(gated);

    std::thread calibrating([&] {
        const CalibrationResult result = runtime->calibrate(task, {}, 5);
        EXPECT_EQ(result.error, TaskError::None) << result.reason;
    });
    const auto open_gate = [&] {
        std::lock_guard lock(gate->mutex);
        gate->open = true;
        gate->changed.notify_all();
    };
    bool entered = false;
    {
        std::unique_lock lock(gate->mutex);
        // A deadline against a hang only.
        entered =
            gate->changed.wait_for(lock, std::chrono::seconds(60), [&] { return gate->entered; });
    }
    if (!entered) {
        open_gate();
        calibrating.join();
        FAIL() << "calibrate() ran no trial job";
    }

    bool done_while_gated = false;
    std::optional<TaskId> registered;
    auto calls = std::async(std::launch::async, [&] {
        registered = runtime->register_task_async(pattern("meanwhile", "auto"));
        EXPECT_EQ(runtime->observe_execute(task, worker(0), 1.0), TaskError::None);
        (void)runtime->placement();
        std::lock_guard lock(gate->mutex);
        done_while_gated = !gate->open;
    });
    // A deadline against a hang only: the calls return (or not) while the gate stays shut.
    const bool returned = calls.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
    open_gate();
    calls.get();
    calibrating.join();
    EXPECT_TRUE(returned);
    EXPECT_TRUE(done_while_gated)
        << "register_task_async, observe_execute and placement() waited for the trial job";
    ASSERT_TRUE(registered.has_value());
    EXPECT_EQ(runtime->unregister_task(*registered), TaskError::None);
}

} // namespace
} // namespace tandem::test
