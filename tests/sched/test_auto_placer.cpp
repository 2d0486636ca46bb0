// The scheduler driving a real runtime (AutoPlacer) on three logical devices (lavapipe: the
// primary and two workers), with synthetic profiles whose numbers each test chooses: auto tasks
// avoid a slow worker; tasks whose transfer is dear stay on the primary; a stalled measurement
// moves nothing; a lost worker's tasks move in the next decision while the surface keeps its
// last good output (exact pixels) until the new device's arrives; a move is prepared off the
// frame (frames go on while its workload is built); manual placements are never
// overridden; a profile of other devices is refused with the reason.
#include <condition_variable>
#include <functional>
#include <mutex>

#include <gtest/gtest.h>

#include "autoplace/auto_placer.hpp"
#include "runtime_fixture.hpp"
#include "sched_fixture.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

// The synthetic profiles' reference size, so each device's number is its cost per update. A
// primary far slower than the workers makes the hysteresis margin (10% of the primary's cost)
// wide, so that real timings on a loaded machine never move what a test expects to stay.
constexpr std::uint32_t k_w = 256;
constexpr std::uint32_t k_h = 256;

class AutoPlacerTest : public RuntimeTest {
protected:
    void SetUp() override {
        RuntimeTest::SetUp();
        runtime = make_runtime("auto");
        devices = {runtime->primary_device()};
        for (const auto& w : runtime->worker_devices()) {
            devices.push_back(w);
        }
        ASSERT_EQ(devices.size(), 3u);
    }
    void TearDown() override {
        placer.reset();
        model.reset();
        runtime.reset();
        RuntimeTest::TearDown();
    }

    void start(const detail::Profile& profile) {
        model = std::make_unique<detail::CostModel>(profile, devices);
        placer = std::make_unique<detail::AutoPlacer>(*runtime, *model);
    }

    static detail::AutoTask pattern(const std::string& name,
                                    const std::string& placement = "auto") {
        detail::AutoTask t;
        t.desc.name = name;
        t.desc.width = k_w;
        t.desc.height = k_h;
        t.desc.placement = placement;
        t.automatic = placement == "auto";
        t.shape = {"pattern", k_w, k_h, 0, 0};
        t.rate_hz = 30.0;
        return t;
    }

    // One primary frame: decide, submit every task, pump.
    void frame() {
        (void)placer->decide();
        for (std::size_t i = 0; i < placer->size(); ++i) {
            (void)placer->submit(i, {});
        }
        runtime->pump();
    }

    std::uint32_t primary() const { return devices[0].index; }
    std::uint32_t worker(std::size_t k) const { return devices[1 + k].index; }

    std::unique_ptr<Runtime> runtime;
    std::vector<DeviceInfo> devices;
    std::unique_ptr<detail::CostModel> model;
    std::unique_ptr<detail::AutoPlacer> placer;
};

// Device costs per adapter, in the order primary, worker 0, worker 1.
detail::Profile profile_of(const std::vector<DeviceInfo>& devices, double primary, double w0,
                           double w1, const SyntheticLink& link = {}) {
    std::vector<SyntheticDevice> costs(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const double ms = i == 0 ? primary : (i == 1 ? w0 : w1);
        costs[devices[i].index].pattern_256_ms = ms;
    }
    auto profile = synthetic_profile(devices, costs, link);
    // The runtime moves results over the best path the pair allows (shared memory between
    // lavapipe's openings), which the cost model prices: give it the host-imported numbers.
    for (auto& pair : profile.pairs) {
        pair.paths.push_back({TransferPath::SharedMemory, pair.paths[0].link});
    }
    return profile;
}

TEST_F(AutoPlacerTest, AutoTasksAvoidASlowWorker) {
    // Worker 0 is 100x slower than worker 1 (past its capacity at 30 Hz); moving pays.
    start(profile_of(devices, 200.0, 100.0, 1.0));
    const auto a = placer->add(pattern("a"));
    const auto b = placer->add(pattern("b"));
    for (int f = 0; f < 20; ++f) {
        frame();
        EXPECT_EQ(placer->device(a), worker(1)) << "frame " << f;
        EXPECT_EQ(placer->device(b), worker(1)) << "frame " << f;
    }
    ASSERT_TRUE(pump_until(*runtime, [&] {
        return runtime->stats(*placer->active_id(a)).ready > 0 &&
               runtime->stats(*placer->active_id(b)).ready > 0;
    }));
    for (const auto& [device, id] : placer->registrations(a)) {
        EXPECT_NE(device, worker(0)) << "never registered on the slow worker";
    }
}

TEST_F(AutoPlacerTest, TasksWithSmallGainStayOnThePrimaryWhenTransferIsDear) {
    SyntheticLink dear;
    dear.gbps = 0.001; // 1 MB/s: a 256 KiB result costs about 260 ms to move
    dear.latency_us = 20000.0;
    start(profile_of(devices, 1.0, 0.5, 0.5, dear));
    const auto a = placer->add(pattern("a"));
    for (int f = 0; f < 10; ++f) {
        frame();
        EXPECT_EQ(placer->device(a), primary()) << "frame " << f;
    }
    const auto& plan = placer->plan();
    ASSERT_EQ(plan.tasks.size(), 1u);
    EXPECT_FALSE(plan.tasks[0].reason.empty());
    EXPECT_EQ(placer->registrations(a).size(), 1u) << "registered on the primary only";
}

TEST_F(AutoPlacerTest, AStalledMeasurementMovesNothing) {
    start(profile_of(devices, 200.0, 2.0, 1.0));
    const auto a = placer->add(pattern("a"));
    (void)placer->decide();
    ASSERT_EQ(placer->device(a), worker(1));
    for (int f = 0; f < 30; ++f) {
        // Steady timings on worker 1, with one stall of 100 s among them: as the last sample or
        // in a mean of nine it would move the task to worker 0, past any margin.
        placer->observe_execute(a, worker(1), f == 12 ? 100000.0 : 1.0);
        (void)placer->decide();
        EXPECT_EQ(placer->device(a), worker(1)) << "frame " << f;
        EXPECT_EQ(placer->plan().moves(), 0u) << "frame " << f;
    }
}

TEST_F(AutoPlacerTest, ALostWorkersTasksMoveInTheNextFrameAndTheirOutputStaysVisible) {
    start(profile_of(devices, 200.0, 0.5, 1.0));
    auto reader = make_reader(*runtime, k_w, k_h);
    const auto a = placer->add(pattern("a"));
    const auto show = [&]() -> std::optional<Lease> {
        auto lease = placer->acquire(a);
        if (lease) {
            std::uint64_t v = 0;
            expect_pattern(read_back(*reader, *lease, v), *lease);
            placer->release(*lease, v);
        }
        return lease;
    };
    frame();
    ASSERT_EQ(placer->device(a), worker(0));
    const TaskId first = *placer->active_id(a);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame();
        return runtime->stats(first).ready >= 2;
    }));
    ASSERT_EQ(*placer->active_id(a), first);
    auto before = show();
    ASSERT_TRUE(before);
    ASSERT_EQ(before->task, first);

    runtime->impl().force_device_lost(first);
    // The worker discovers the loss at its next submit (slots may be busy at first).
    ASSERT_TRUE(pump_until(*runtime, [&] {
        (void)runtime->submit(first);
        return runtime->stats(first).worker_lost;
    }));
    const std::uint64_t last_good = runtime->stats(first).newest_generation;

    // The very next decision moves the task off the lost worker: it is prepared there off the
    // frame, and the frames meanwhile keep showing the lost worker's last good output.
    frame();
    EXPECT_EQ(placer->plan().device_of("a"), worker(1));
    EXPECT_EQ(placer->lost(), std::vector<std::uint32_t>{worker(0)});
    ASSERT_EQ(placer->plan().tasks.size(), 1u);
    EXPECT_TRUE(placer->plan().tasks[0].lost_move);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        auto lease = show();
        EXPECT_TRUE(lease) << "the surface went blank while the move was prepared";
        if (lease) {
            EXPECT_EQ(lease->task, first);
            EXPECT_EQ(lease->generation, last_good);
        }
        frame();
        return placer->device(a) == worker(1);
    }));
    const TaskId second = *placer->active_id(a);
    EXPECT_NE(second, first);

    // Every frame shows an output: the lost worker's last good one until the new device
    // delivers, then the new device's, generations never going back on one registration.
    bool switched = false;
    std::uint64_t shown_new = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && shown_new < 3) {
        auto lease = show();
        ASSERT_TRUE(lease) << "the surface went blank";
        if (lease->task == first) {
            EXPECT_FALSE(switched) << "back to the lost worker's output";
            EXPECT_EQ(lease->generation, last_good);
        } else {
            ASSERT_EQ(lease->task, second);
            EXPECT_GE(lease->generation, shown_new);
            switched = true;
            shown_new = lease->generation;
        }
        frame();
    }
    EXPECT_TRUE(switched) << "the new device never delivered";
}

TEST_F(AutoPlacerTest, AMoveIsPreparedOffTheFrame) {
    // The pattern workload, whose preparation on worker 1 waits until the test lets it go: a
    // pipeline build that takes as long as the test likes.
    std::mutex mutex;
    std::condition_variable cv;
    bool released = false;
    const std::uint32_t held_device = worker(1);
    detail::register_workload("pattern-slow-on-worker-1",
                              [&](const detail::Device& device, const detail::WorkloadParams& p) {
                                  if (device.info().index == held_device) {
                                      std::unique_lock lock(mutex);
                                      cv.wait(lock, [&] { return released; });
                                  }
                                  return detail::create_workload("pattern", device, p);
                              });
    const auto let_go = [&] {
        std::lock_guard lock(mutex);
        released = true;
        cv.notify_all();
    };
    struct LetGoAtExit { // a failed assertion must not leave the preparation thread waiting
        std::function<void()> let_go;
        ~LetGoAtExit() { let_go(); }
    } at_exit{let_go};
    start(profile_of(devices, 200.0, 0.5, 1.0));
    auto reader = make_reader(*runtime, k_w, k_h);
    auto task = pattern("a");
    task.desc.workload = "pattern-slow-on-worker-1";
    const auto a = placer->add(task);
    frame();
    ASSERT_EQ(placer->device(a), worker(0));
    const TaskId first = *placer->active_id(a);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame();
        return runtime->stats(first).ready >= 2;
    }));
    runtime->impl().force_device_lost(first);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        (void)runtime->submit(first);
        return runtime->stats(first).worker_lost;
    }));
    const std::uint64_t last_good = runtime->stats(first).newest_generation;

    // 200 frames while worker 1 builds the task's pipeline: every one shows the last good output.
    for (int f = 0; f < 200; ++f) {
        frame();
        EXPECT_EQ(placer->plan().device_of("a"), worker(1));
        auto lease = placer->acquire(a);
        ASSERT_TRUE(lease) << "frame " << f << ": the surface went blank";
        EXPECT_EQ(lease->task, first);
        EXPECT_EQ(lease->generation, last_good);
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *lease, v), *lease);
        placer->release(*lease, v);
    }
    EXPECT_EQ(placer->device(a), worker(0)) << "switched before the new device was prepared";

    let_go();
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame();
        auto lease = placer->acquire(a);
        if (!lease) {
            ADD_FAILURE() << "the surface went blank";
            return true;
        }
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *lease, v), *lease);
        placer->release(*lease, v);
        return lease->task != first;
    }));
    EXPECT_EQ(placer->device(a), worker(1));
}

TEST_F(AutoPlacerTest, ManualPlacementsAreNeverOverridden) {
    // The scheduler would put everything on worker 1.
    start(profile_of(devices, 200.0, 200.0, 0.5));
    const auto p = placer->add(pattern("on-primary", "primary"));
    const auto w = placer->add(pattern("on-worker-0", "worker:0"));
    const auto a = placer->add(pattern("auto"));
    for (int f = 0; f < 10; ++f) {
        frame();
        EXPECT_EQ(placer->device(p), primary());
        EXPECT_EQ(placer->device(w), worker(0));
        EXPECT_EQ(placer->device(a), worker(1));
    }
    EXPECT_EQ(placer->registrations(p).size(), 1u);
    EXPECT_EQ(placer->registrations(w).size(), 1u);
}

TEST_F(AutoPlacerTest, AProfileOfOtherDevicesIsRefusedWithTheReason) {
    auto profile = profile_of(devices, 1.0, 1.0, 1.0);
    profile.devices[1].driver_version = "0.0.0-other";
    const auto mismatches = detail::check_profile(profile, devices);
    ASSERT_FALSE(mismatches.empty());
    EXPECT_NE(mismatches[0].reason.find("driver"), std::string::npos) << mismatches[0].reason;
    try {
        detail::CostModel refused(profile, devices);
        FAIL() << "a mismatched profile was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("tandem calibrate"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace tandem::test
