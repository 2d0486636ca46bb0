// The scheduler inside the Runtime (placement "auto") on three logical devices (lavapipe: the
// primary and two workers, openings of one device that the tests ask to be treated as separate,
// except the one that shows they free nothing), with synthetic profiles whose numbers each test
// chooses; a measured delivery is reported as one figure; auto tasks
// avoid a slow worker; tasks whose transfer is dear stay on the primary; a stalled measurement
// moves nothing; a move keeps the TaskId and never shows a blank or an older frame (exact
// pixels, generations per frame); a lost worker's tasks start moving in the pump that sees the
// loss while the surface keeps its last good output; a move is prepared off the frame; manual
// placements are never overridden; without a profile the runtime measures every device itself
// (trial jobs, or calibrate()); bad options and a profile of other devices are refused with the
// reason.
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/capabilities.hpp"
#include "runtime_fixture.hpp"
#include "sched/profile.hpp"
#include "sched_fixture.hpp"
#include "tandem/error.hpp"
#include "workloads/pattern.hpp"
#include "workloads/workload.hpp"

namespace tandem::test {
namespace {

// The synthetic profiles' reference size, so each device's number is its cost per update. A
// primary far slower than the workers makes the hysteresis margin (10% of the primary's cost)
// wide, so that real timings on a loaded machine never move what a test expects to stay.
constexpr std::uint32_t k_w = 256;
constexpr std::uint32_t k_h = 256;

// A fresh, empty folder under the system's temporary directory.
std::filesystem::path temp_folder(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("tandem-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

class SchedulerTest : public RuntimeTest {
protected:
    void SetUp() override {
        RuntimeTest::SetUp();
        for (const auto& a : adapters()) {
            devices.push_back(a.info);
        }
        ASSERT_EQ(devices.size(), 3u);
    }
    void TearDown() override {
        runtime.reset();
        RuntimeTest::TearDown();
    }

    // A runtime whose scheduler starts from `profile` (none: measured timings only), deciding
    // in every pump. Its three adapters are openings of one device, which these tests move
    // tasks between: they ask for the openings to be treated as separate devices unless
    // `options` says otherwise (`separate` false).
    void start(const std::optional<detail::Profile>& profile, SchedulerOptions options = {},
               bool separate = true) {
        options.openings_are_separate = separate;
        RuntimeOptions o;
        if (profile) {
            const auto path = temp_folder("scheduler-profile") / "profile.json";
            detail::save_profile(*profile, path);
            options.profile = path.string();
        }
        options.decision_interval = std::chrono::milliseconds(0);
        o.scheduler = options;
        runtime = make_runtime("auto", o);
        ASSERT_EQ(runtime->primary_device().index, primary());
    }

    static TaskDesc pattern(const std::string& name, const std::string& placement = "auto") {
        TaskDesc d;
        d.name = name;
        d.width = k_w;
        d.height = k_h;
        d.placement = Placement::parse(placement).value();
        d.rate_hz = 30.0;
        return d;
    }

    // One primary frame: submit every task, pump (the scheduler decides there).
    void frame(const std::vector<TaskId>& tasks) {
        for (const TaskId t : tasks) {
            (void)runtime->submit(t);
        }
        runtime->pump();
    }

    [[nodiscard]] std::uint32_t device_of(TaskId task) const { return runtime->stats(task).device; }
    std::uint32_t primary() const { return devices[0].index; }
    std::uint32_t worker(std::size_t k) const { return devices[1 + k].index; }

    std::unique_ptr<Runtime> runtime;
    std::vector<DeviceInfo> devices;
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
    // The runtime moves results over the best path the pair allows (zero copy between
    // lavapipe's openings, else shared memory), which the cost model prices: give them the
    // host-imported numbers.
    for (auto& pair : profile.pairs) {
        pair.paths.push_back({TransferPath::ZeroCopy, pair.paths[0].link});
        pair.paths.push_back({TransferPath::SharedMemory, pair.paths[0].link});
    }
    return profile;
}

TEST_F(SchedulerTest, AutoTasksAvoidASlowWorker) {
    // Worker 0 is 100x slower than worker 1 (past its capacity at 30 Hz); moving pays.
    start(profile_of(devices, 200.0, 100.0, 1.0));
    const TaskId a = runtime->register_task(pattern("a"));
    const TaskId b = runtime->register_task(pattern("b"));
    for (int f = 0; f < 20; ++f) {
        frame({a, b});
        EXPECT_EQ(device_of(a), worker(1)) << "frame " << f;
        EXPECT_EQ(device_of(b), worker(1)) << "frame " << f;
    }
    ASSERT_TRUE(pump_until(
        *runtime, [&] { return runtime->stats(a).ready > 0 && runtime->stats(b).ready > 0; }));
    for (const TaskDeviceStats& d : runtime->stats(a).devices) {
        EXPECT_NE(d.device, worker(0)) << "never registered on the slow worker";
    }
    const PlacementReport report = runtime->placement();
    ASSERT_EQ(report.tasks.size(), 2u);
    EXPECT_EQ(report.tasks[0].task, a);
    EXPECT_TRUE(report.tasks[0].automatic);
    EXPECT_EQ(report.tasks[0].device, worker(1));
    EXPECT_FALSE(report.tasks[0].reason.empty());
    EXPECT_NE(report.model.find("profile"), std::string::npos) << report.model;
    EXPECT_TRUE(nlohmann::json::accept(report.json));
}

// Lavapipe's three openings are one device: moving a task from the primary to another opening
// frees nothing, so the scheduler never does it, however much faster the profile says the
// workers are, and says why.
TEST_F(SchedulerTest, OpeningsOfOneDeviceNeverTakeATaskForAGain) {
    ASSERT_EQ(devices[0].device_uuid, devices[1].device_uuid);
    start(profile_of(devices, 200.0, 0.5, 0.5), {}, false);
    const TaskId a = runtime->register_task(pattern("a"));
    for (int f = 0; f < 20; ++f) {
        frame({a});
        ASSERT_EQ(device_of(a), primary()) << "frame " << f;
    }
    const PlacementReport report = runtime->placement();
    ASSERT_EQ(report.tasks.size(), 1u);
    EXPECT_NE(report.tasks[0].reason.find("adapter " + std::to_string(worker(0)) +
                                          " is an opening of the same device as the primary: "
                                          "moving there frees nothing"),
              std::string::npos)
        << report.tasks[0].reason;
    const auto doc = nlohmann::json::parse(report.json);
    ASSERT_EQ(doc["openings"].size(), 1u) << report.text;
    EXPECT_FALSE(doc["openings_are_separate"].get<bool>());
    for (const auto& d : doc["tasks"][0]["devices"]) {
        if (d["role"] == "worker") {
            EXPECT_EQ(d["opening_of"], primary());
            EXPECT_FALSE(d["candidate"].get<bool>());
            EXPECT_EQ(d["gain_ms"].get<double>(), 0.0);
        }
    }
    EXPECT_EQ(runtime->stats(a).devices.size(), 1u) << "registered on the primary only";
    EXPECT_EQ(runtime->stats(a).moves, 0u);
}

// The runtime times a result's way to the primary as a whole (worker done -> ready): the
// explanation reports that as one measured delivery, not as parts it was never timed in.
TEST_F(SchedulerTest, AMeasuredDeliveryIsReportedAsOneFigure) {
    start(profile_of(devices, 200.0, 1.0, 2.0));
    const TaskId a = runtime->register_task(pattern("a"));
    ASSERT_EQ(device_of(a), worker(0));
    nlohmann::json move;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame({a});
        if (auto lease = runtime->acquire(a)) {
            runtime->release(*lease, 0);
        }
        const auto doc = nlohmann::json::parse(runtime->placement().json);
        for (const auto& d : doc.at("tasks").at(0).at("devices")) {
            if (d.at("device") == worker(0)) {
                move = d.at("move");
            }
        }
        return move.is_object() && !move.at("delivery").is_null();
    })) << runtime->placement().text;
    EXPECT_EQ(move["delivery"]["source"], "measured");
    // Measured from the task's own jobs: each a part (ready minus worker done) of a latency the
    // task's counters hold, so no more than the longest of them (a delivery may take 0 ms when
    // one pump sees the work and the copy complete together).
    const double delivery_ms = move["delivery"]["ms"].get<double>();
    const TaskStats measured = runtime->stats(a);
    ASSERT_EQ(device_of(a), worker(0));
    ASSERT_GT(measured.ready_observed.count, 0u);
    EXPECT_GE(delivery_ms, 0.0);
    EXPECT_LE(delivery_ms, measured.ready_observed.max_us / 1000.0)
        << "longest request-to-ready " << measured.ready_observed.max_us << " us";
    for (const char* part : {"transfer", "sync", "reintegrate"}) {
        EXPECT_TRUE(move[part].is_null()) << part << ": " << move.dump();
    }
    EXPECT_EQ(move["prepare"]["source"], "profile");
    EXPECT_NE(runtime->placement().text.find("(measured, as a whole)"), std::string::npos)
        << runtime->placement().text;
    // Openings treated as separate, as this test asked, and the explanation says so.
    EXPECT_NE(runtime->placement().text.find("treated as separate devices as asked"),
              std::string::npos)
        << runtime->placement().text;
}

TEST_F(SchedulerTest, TasksWithSmallGainStayOnThePrimaryWhenTransferIsDear) {
    SyntheticLink dear;
    dear.gbps = 0.001; // 1 MB/s: a 256 KiB result costs about 260 ms to move
    dear.latency_us = 20000.0;
    start(profile_of(devices, 1.0, 0.5, 0.5, dear));
    const TaskId a = runtime->register_task(pattern("a"));
    for (int f = 0; f < 10; ++f) {
        frame({a});
        EXPECT_EQ(device_of(a), primary()) << "frame " << f;
    }
    const PlacementReport report = runtime->placement();
    ASSERT_EQ(report.tasks.size(), 1u);
    EXPECT_FALSE(report.tasks[0].reason.empty());
    EXPECT_EQ(runtime->stats(a).devices.size(), 1u) << "registered on the primary only";
}

TEST_F(SchedulerTest, AStalledMeasurementMovesNothing) {
    start(profile_of(devices, 200.0, 2.0, 1.0));
    const TaskId a = runtime->register_task(pattern("a"));
    ASSERT_EQ(device_of(a), worker(1));
    for (int f = 0; f < 30; ++f) {
        // Steady timings on worker 1, with one stall of 100 s among them: as the last sample or
        // in a mean of nine it would move the task to worker 0, past any margin.
        runtime->observe_execute(a, worker(1), f == 12 ? 100000.0 : 1.0);
        runtime->pump();
        EXPECT_EQ(device_of(a), worker(1)) << "frame " << f;
        EXPECT_EQ(runtime->placement().moves, 0u) << "frame " << f;
    }
    EXPECT_EQ(runtime->stats(a).moves, 0u);
}

// The path each worker's move is priced with is the one its links negotiate: the pair's best,
// then, once that path is dropped for the pair, the next one, whose profile entry prices it.
TEST_F(SchedulerTest, MovesArePricedWithThePathLeftAfterADrop) {
    auto profile = profile_of(devices, 200.0, 1.0, 2.0);
    for (auto& pair : profile.pairs) {
        pair.paths = {{TransferPath::ZeroCopy, {400.0, 5.0}},
                      {TransferPath::SharedMemory, {100.0, 10.0}},
                      {TransferPath::HostImported, {8.0, 30.0}},
                      {TransferPath::HostCopy, {4.0, 60.0}}};
    }
    start(profile);
    const TaskId a = runtime->register_task(pattern("a"));
    const PairInfo pair = detail::query_pair_info(devices[1], devices[0]);
    const auto first = pair.best_path();
    ASSERT_TRUE(first);
    // The path worker 0's move is priced with in the last decision.
    const auto priced = [&] {
        frame({a});
        const auto doc = nlohmann::json::parse(runtime->placement().json);
        for (const auto& task : doc.at("tasks")) {
            for (const auto& d : task.at("devices")) {
                if (d.at("device") == worker(0) && !d.at("move").is_null()) {
                    return d.at("move").at("path").get<std::string>();
                }
            }
        }
        return std::string("(none)");
    };
    EXPECT_EQ(priced(), to_string(*first));
    detail::RuntimeImpl& impl = detail::RuntimeAccess::impl(*runtime);
    impl.pairs().drop(worker(0), primary(), to_string(*first), "dropped by the test");
    const detail::Device& worker_device = impl.workers().of(worker(0))->device();
    const auto next =
        impl.pairs().pair(worker_device, impl.primary()).path(worker_device, std::nullopt);
    ASSERT_TRUE(next);
    EXPECT_NE(*next, *first);
    ASSERT_EQ(impl.pairs().dropped(worker(0), primary()).size(), 1u);
    EXPECT_EQ(priced(), to_string(*next));
}

TEST_F(SchedulerTest, AMoveKeepsTheIdAndNeverShowsABlankOrAnOlderFrame) {
    start(profile_of(devices, 200.0, 1.0, 2.0));
    auto reader = make_reader(*runtime, k_w, k_h);
    const TaskId a = runtime->register_task(pattern("a"));
    ASSERT_EQ(device_of(a), worker(0));
    std::uint64_t shown = 0;
    std::set<std::uint32_t> producers;
    // A frame: submit, pump, show what acquire gives (exact pixels), release.
    const auto show_frame = [&](bool must_show) {
        frame({a});
        auto lease = runtime->acquire(a);
        if (!lease) {
            EXPECT_FALSE(must_show) << "the surface went blank";
            return;
        }
        EXPECT_EQ(lease->task, a);
        EXPECT_GE(lease->generation, shown) << "an older frame was shown";
        shown = lease->generation;
        producers.insert(lease->device);
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *lease, v), *lease);
        runtime->release(*lease, v);
    };
    ASSERT_TRUE(pump_until(*runtime, [&] {
        show_frame(false);
        return shown >= 3;
    }));
    // Worker 0 turns out far slower than its profile said: at 30 Hz it would be busy for three
    // seconds of every second, so the next decision moves the task to worker 1.
    for (int i = 0; i < 9; ++i) {
        runtime->observe_execute(a, worker(0), 100.0);
    }
    ASSERT_TRUE(pump_until(*runtime, [&] {
        show_frame(true);
        return producers.count(worker(1)) > 0;
    }));
    EXPECT_EQ(device_of(a), worker(1));
    const TaskStats s = runtime->stats(a);
    EXPECT_EQ(s.moves, 1u);
    EXPECT_EQ(s.device, worker(1));
    ASSERT_EQ(s.devices.size(), 2u);
    EXPECT_EQ(s.devices[0].device, worker(1));
    EXPECT_TRUE(s.devices[0].active);
    EXPECT_EQ(s.devices[1].device, worker(0));
    EXPECT_FALSE(s.devices[1].active);
    EXPECT_EQ(s.accepted, s.devices[0].accepted + s.devices[1].accepted);
    for (int f = 0; f < 10; ++f) {
        show_frame(true);
    }
}

TEST_F(SchedulerTest, ALostWorkersTasksMoveInThePumpThatSeesItAndTheirOutputStaysVisible) {
    start(profile_of(devices, 200.0, 0.5, 1.0));
    auto reader = make_reader(*runtime, k_w, k_h);
    const TaskId a = runtime->register_task(pattern("a"));
    const auto show = [&]() -> std::optional<Lease> {
        const std::optional<Lease> lease = runtime->acquire(a).lease;
        if (lease) {
            std::uint64_t v = 0;
            expect_pattern(read_back(*reader, *lease, v), *lease);
            runtime->release(*lease, v);
        }
        return lease;
    };
    ASSERT_EQ(device_of(a), worker(0));
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame({a});
        return runtime->stats(a).ready >= 2;
    }));
    auto before = show();
    ASSERT_TRUE(before);
    ASSERT_EQ(before->device, worker(0));

    // The first registration's id is the task's: the fault hook reaches worker 0's queue.
    detail::RuntimeProbe(*runtime).force_device_lost(a);
    // The worker discovers the loss at its next submit (slots may be busy at first); the pump
    // that sees it starts the move.
    ASSERT_TRUE(pump_until(*runtime, [&] {
        (void)runtime->submit(a);
        runtime->pump();
        return runtime->stats(a).devices.size() > 1;
    }));
    // The decision that moved it may not be the last one (every pump decides here), but every
    // decision since puts it on worker 1.
    const PlacementReport report = runtime->placement();
    ASSERT_EQ(report.tasks.size(), 1u);
    EXPECT_EQ(report.tasks[0].device, worker(1));
    EXPECT_TRUE(report.failures.empty());
    std::uint64_t last_good = 0;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        for (const TaskDeviceStats& d : runtime->stats(a).devices) {
            if (d.device == worker(0) && d.worker_lost) {
                last_good = d.newest_generation;
                return true;
            }
        }
        return false;
    }));
    ASSERT_GT(last_good, 0u);

    // Every frame shows an output: the lost worker's last good one until the new device
    // delivers, then the new device's, generations never going back.
    bool switched = false;
    std::uint64_t shown_new = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && shown_new < last_good + 3) {
        auto lease = show();
        ASSERT_TRUE(lease) << "the surface went blank";
        EXPECT_EQ(lease->task, a);
        if (lease->device == worker(0)) {
            EXPECT_FALSE(switched) << "back to the lost worker's output";
            EXPECT_EQ(lease->generation, last_good);
        } else {
            ASSERT_EQ(lease->device, worker(1));
            EXPECT_GT(lease->generation, last_good);
            EXPECT_GE(lease->generation, shown_new);
            switched = true;
            shown_new = lease->generation;
        }
        const SubmitResult r = runtime->submit(a);
        EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
        runtime->pump();
    }
    EXPECT_TRUE(switched) << "the new device never delivered";
}

TEST_F(SchedulerTest, AMoveIsPreparedOffTheFrame) {
    // The pattern workload, whose preparation on worker 1 waits until the test lets it go: a
    // pipeline build that takes as long as the test likes.
    std::mutex mutex;
    std::condition_variable cv;
    bool released = false;
    const std::uint32_t held_device = worker(1);
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
    detail::RuntimeAccess::impl(*runtime).workloads().add(
        "pattern-slow-on-worker-1",
        [&](const detail::Device& device, const detail::WorkloadParams& p) {
            if (device.info().index == held_device) {
                std::unique_lock lock(mutex);
                cv.wait(lock, [&] { return released; });
            }
            return std::make_unique<detail::PatternWorkload>(device, p);
        });
    auto reader = make_reader(*runtime, k_w, k_h);
    auto desc = pattern("a");
    desc.workload = "pattern-slow-on-worker-1";
    desc.cost.kind = "pattern";
    const TaskId a = runtime->register_task(desc);
    ASSERT_EQ(device_of(a), worker(0));
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame({a});
        return runtime->stats(a).ready >= 2;
    }));
    detail::RuntimeProbe(*runtime).force_device_lost(a);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        (void)runtime->submit(a);
        runtime->pump();
        return runtime->stats(a).worker_lost;
    }));
    const std::uint64_t last_good = runtime->stats(a).devices[0].newest_generation;

    // 200 frames while worker 1 builds the task's pipeline: every one shows the last good output
    // and every submit answers Preparing (the task is moving), none Failed.
    for (int f = 0; f < 200; ++f) {
        const SubmitResult r = runtime->submit(a);
        EXPECT_EQ(r.status, SubmitStatus::Preparing) << "frame " << f << ": " << r.reason;
        runtime->pump();
        EXPECT_EQ(runtime->placement().tasks.at(0).device, worker(1));
        auto lease = runtime->acquire(a);
        ASSERT_TRUE(lease) << "frame " << f << ": the surface went blank";
        EXPECT_EQ(lease->device, worker(0));
        EXPECT_EQ(lease->generation, last_good);
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *lease, v), *lease);
        runtime->release(*lease, v);
    }
    EXPECT_EQ(device_of(a), worker(0)) << "switched before the new device was prepared";

    let_go();
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame({a});
        auto lease = runtime->acquire(a);
        if (!lease) {
            ADD_FAILURE() << "the surface went blank";
            return true;
        }
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *lease, v), *lease);
        runtime->release(*lease, v);
        return lease->device != worker(0);
    }));
    EXPECT_EQ(device_of(a), worker(1));
}

TEST_F(SchedulerTest, ManualPlacementsAreNeverOverridden) {
    // The scheduler would put everything on worker 1.
    start(profile_of(devices, 200.0, 200.0, 0.5));
    const TaskId p = runtime->register_task(pattern("on-primary", "primary"));
    const TaskId w = runtime->register_task(pattern("on-worker-0", "worker:0"));
    const TaskId a = runtime->register_task(pattern("auto"));
    for (int f = 0; f < 10; ++f) {
        frame({p, w, a});
        EXPECT_EQ(device_of(p), primary());
        EXPECT_EQ(device_of(w), worker(0));
        EXPECT_EQ(device_of(a), worker(1));
    }
    EXPECT_EQ(runtime->stats(p).devices.size(), 1u);
    EXPECT_EQ(runtime->stats(w).devices.size(), 1u);
    for (const TaskPlacement& t : runtime->placement().tasks) {
        EXPECT_EQ(t.automatic, t.task == a) << t.name;
    }
}

TEST_F(SchedulerTest, WithoutAProfileTheRuntimeMeasuresEveryDeviceItself) {
    SchedulerOptions options;
    options.trial_jobs = 6;
    start(std::nullopt, options);
    auto desc = pattern("a");
    desc.rate_hz = 10.0;
    const TaskId a = runtime->register_task(desc);
    EXPECT_EQ(device_of(a), primary()) << "nothing is known yet";
    EXPECT_NE(runtime->placement().model.find("measured"), std::string::npos);
    // Trial jobs of the task's own snapshots on each worker, until every device has a cost.
    const auto known = [&] {
        const auto report = nlohmann::json::parse(runtime->placement().json);
        if (!report.contains("tasks")) {
            return false;
        }
        for (const auto& d : report["tasks"][0]["devices"]) {
            if (!d.contains("execute") || d["execute"].is_null()) {
                return false;
            }
        }
        return true;
    };
    std::uint64_t shown = 0;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        frame({a});
        if (auto lease = runtime->acquire(a)) {
            EXPECT_GE(lease->generation, shown);
            shown = lease->generation;
            runtime->release(*lease, 0);
        }
        return known();
    })) << runtime->placement().text;
    // Every device ran the task (its own jobs, or trial jobs: at most trial_jobs of them on a
    // device it never ran on).
    const TaskStats s = runtime->stats(a);
    EXPECT_EQ(s.devices.size(), 3u);
    for (const TaskDeviceStats& d : s.devices) {
        if (d.trial) {
            EXPECT_LE(d.accepted, options.trial_jobs) << "adapter " << d.device;
        }
    }
}

TEST_F(SchedulerTest, CalibrateMeasuresEachDeviceBeforeTheFirstFrame) {
    SchedulerOptions options;
    options.background_calibration = false;
    start(std::nullopt, options);
    const auto before = std::chrono::steady_clock::now();
    const TaskId a = runtime->register_task(pattern("a"));
    const CalibrationResult calibrated = runtime->calibrate(a, {}, 6);
    // Every job measured ran within the call: no cost can exceed the call's own duration.
    const double call_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before)
            .count();
    ASSERT_EQ(calibrated.error, TaskError::None) << calibrated.reason;
    const std::vector<DeviceCost>& costs = calibrated.costs;
    ASSERT_EQ(costs.size(), 3u);
    for (const DeviceCost& c : costs) {
        ASSERT_TRUE(c.execute_ms) << "adapter " << c.device;
        EXPECT_GT(*c.execute_ms, 0.0) << "adapter " << c.device << ": a job takes some time";
        EXPECT_LT(*c.execute_ms, call_ms) << "adapter " << c.device;
        EXPECT_EQ(c.source, "measured");
        EXPECT_EQ(c.primary, c.device == primary());
        if (!c.primary) {
            EXPECT_TRUE(c.move_ms) << "adapter " << c.device;
        }
    }
    try {
        (void)runtime->calibrate(a, {}, 2);
        FAIL() << "two jobs were accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("2 jobs"), std::string::npos) << e.what();
    }
}

TEST_F(SchedulerTest, BadOptionsAndRatesAreRefusedWithASentence) {
    start(std::nullopt);
    auto desc = pattern("a");
    desc.rate_hz = 0.0;
    try {
        (void)runtime->register_task(desc);
        FAIL() << "a zero rate was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("update rate"), std::string::npos) << e.what();
    }
    RuntimeOptions o;
    o.scheduler.capacity = 1.5;
    EXPECT_THROW((void)make_runtime("auto", o), Error);
    o = {};
    o.scheduler.profile = (temp_folder("scheduler-none") / "missing.json").string();
    try {
        (void)make_runtime("auto", o);
        FAIL() << "a missing profile was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos) << e.what();
    }
    o.scheduler.profile_optional = true;
    auto measured = make_runtime("auto", o);
    EXPECT_NE(measured->placement().model.find("measured timings only"), std::string::npos);
}

TEST_F(SchedulerTest, AProfileOfOtherDevicesIsRefusedWithTheReason) {
    auto profile = profile_of(devices, 1.0, 1.0, 1.0);
    profile.devices[1].driver_version = "0.0.0-other";
    try {
        start(profile);
        FAIL() << "a mismatched profile was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("tandem calibrate"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("driver"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace tandem::test
