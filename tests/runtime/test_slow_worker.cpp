// A slow worker never slows the application's frames: with a worker's GPU work held (its
// commands wait on an event the test sets), or a task's preparation held (its workload factory
// waits for the test), the application thread runs its frames (submit, pump, acquire, release,
// the scheduler's per-frame reads and a main view rendered on the primary) to the end; the held
// work is published afterwards. Liveness, not timing: a frame loop that waited on the worker
// would not finish until a watchdog let the worker go, and the test would fail. And a slow
// worker with a queue longer than the timeout, completing work all along, is not lost.
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/vk_check.hpp"
#include "render/headless.hpp"
#include "render/renderer.hpp"
#include "render/scene_capture.hpp"
#include "runtime_fixture.hpp"
#include "scene/demo_scene.hpp"
#include "scene/snapshot.hpp"
#include "scene/snapshot_codec.hpp"
#include "workloads/pattern.hpp"
#include "workloads/scene_capture_workload.hpp"

namespace tandem::test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t k_frames = 200;
constexpr std::uint32_t k_w = 64;
constexpr std::uint32_t k_h = 48;

// Events that hold the GPU work of every GatedCapture until open(); a watchdog opens them after
// a minute so that a frame loop that waits on the worker fails instead of hanging.
class GpuGate {
public:
    VkEvent add(const detail::Device& device) {
        VkEventCreateInfo info{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
        VkEvent event = VK_NULL_HANDLE;
        detail::vk_check(vkCreateEvent(device.handle(), &info, nullptr, &event), "vkCreateEvent");
        std::lock_guard lock(m_mutex);
        if (m_open) {
            detail::vk_check(vkSetEvent(device.handle(), event), "vkSetEvent");
        }
        m_events.push_back({device.handle(), event});
        return event;
    }
    void remove(VkEvent event) {
        std::lock_guard lock(m_mutex);
        for (auto it = m_events.begin(); it != m_events.end(); ++it) {
            if (it->second == event) {
                vkDestroyEvent(it->first, event, nullptr);
                m_events.erase(it);
                return;
            }
        }
    }
    void open() {
        std::lock_guard lock(m_mutex);
        m_open = true;
        for (const auto& [device, event] : m_events) {
            detail::vk_check(vkSetEvent(device, event), "vkSetEvent");
        }
    }
    [[nodiscard]] bool opened() const {
        std::lock_guard lock(m_mutex);
        return m_open;
    }
    // Shuts the gate again: work recorded from now on waits (the events are reset).
    void close() {
        std::lock_guard lock(m_mutex);
        m_open = false;
        for (const auto& [device, event] : m_events) {
            detail::vk_check(vkResetEvent(device, event), "vkResetEvent");
        }
    }

private:
    mutable std::mutex m_mutex;
    bool m_open = false;
    std::vector<std::pair<VkDevice, VkEvent>> m_events;
};

// The scene-capture workload whose commands first wait for the gate's event (set from the
// host), so the worker's GPU stays busy with the job for as long as the test likes.
class GatedCapture final : public detail::Workload {
public:
    GatedCapture(const detail::Device& device, const detail::WorkloadParams& params,
                 const std::shared_ptr<const detail::SceneAssets>& assets,
                 std::shared_ptr<detail::SceneCaptureTimes> times, GpuGate& gate)
        : m_gate(gate), m_event(gate.add(device)), m_inner(device, params, assets, times) {}
    ~GatedCapture() override { m_gate.remove(m_event); }

    VkImageUsageFlags target_usage() const noexcept override { return m_inner.target_usage(); }
    detail::WorkloadOutput output() const noexcept override { return m_inner.output(); }
    VkResult record(VkCommandBuffer cmd, std::uint32_t slot, const detail::WorkloadTarget& target,
                    std::uint64_t generation,
                    std::span<const std::byte> snapshot) noexcept override {
        vkCmdWaitEvents(cmd, 1, &m_event, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, nullptr, 0, nullptr, 0, nullptr);
        return m_inner.record(cmd, slot, target, generation, snapshot);
    }
    void completed(std::uint32_t slot, std::uint64_t generation) noexcept override {
        m_inner.completed(slot, generation);
    }

private:
    GpuGate& m_gate;
    VkEvent m_event;
    detail::SceneCaptureWorkload m_inner;
};

// Jobs whose GPU work each waits for an event of its own, which a ticker thread sets one at a
// time, oldest first, every `period`: a worker that completes a job per period, however long
// the queue of jobs behind it.
class Ticker {
public:
    explicit Ticker(std::chrono::milliseconds period)
        : m_period(period), m_thread([this] { run(); }) {}
    ~Ticker() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_cv.notify_all();
        m_thread.join();
    }
    // Sets `event` after every earlier one (recording thread). The caller owns it and calls
    // forget() before destroying it.
    void add(VkDevice device, VkEvent event) {
        std::lock_guard lock(m_mutex);
        m_waiting.emplace_back(device, event);
    }
    void forget(VkEvent event) {
        std::lock_guard lock(m_mutex);
        std::erase_if(m_waiting, [&](const auto& e) { return e.second == event; });
    }

private:
    void run() {
        std::unique_lock lock(m_mutex);
        while (!m_cv.wait_for(lock, m_period, [&] { return m_stop; })) {
            if (!m_waiting.empty()) {
                (void)vkSetEvent(m_waiting.front().first, m_waiting.front().second);
                m_waiting.pop_front();
            }
        }
        for (const auto& [device, event] : m_waiting) { // let the rest go at the end
            (void)vkSetEvent(device, event);
        }
    }
    std::chrono::milliseconds m_period;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stop = false;
    std::deque<std::pair<VkDevice, VkEvent>> m_waiting;
    std::thread m_thread;
};

// The pattern workload behind a Ticker's event.
class TickedPattern final : public detail::Workload {
public:
    TickedPattern(const detail::Device& device, const detail::WorkloadParams& params,
                  Ticker& ticker)
        : m_device(device), m_ticker(ticker),
          m_inner(std::make_unique<detail::PatternWorkload>(device, params)) {}
    ~TickedPattern() override { // its commands completed: the runtime destroys it only then
        for (VkEvent event : m_events) {
            m_ticker.forget(event);
            vkDestroyEvent(m_device.handle(), event, nullptr);
        }
    }
    VkImageUsageFlags target_usage() const noexcept override { return m_inner->target_usage(); }
    detail::WorkloadOutput output() const noexcept override { return m_inner->output(); }
    VkResult record(VkCommandBuffer cmd, std::uint32_t slot, const detail::WorkloadTarget& target,
                    std::uint64_t generation,
                    std::span<const std::byte> snapshot) noexcept override {
        VkEventCreateInfo info{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
        VkEvent event = VK_NULL_HANDLE;
        if (vkCreateEvent(m_device.handle(), &info, nullptr, &event) != VK_SUCCESS) {
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        }
        m_events.push_back(event); // one per job: the test makes a handful
        m_ticker.add(m_device.handle(), event);
        vkCmdWaitEvents(cmd, 1, &event, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, nullptr, 0, nullptr, 0, nullptr);
        return m_inner->record(cmd, slot, target, generation, snapshot);
    }

private:
    const detail::Device& m_device;
    Ticker& m_ticker;
    std::unique_ptr<detail::Workload> m_inner;
    std::vector<VkEvent> m_events; // job thread until destruction
};

// Holds every workload made by its factory until release(): a pipeline build that takes as
// long as the test likes.
class PreparationGate {
public:
    void wait() {
        std::unique_lock lock(m_mutex);
        m_entered = true;
        m_cv.notify_all();
        m_cv.wait(lock, [&] { return m_released; });
    }
    void release() {
        std::lock_guard lock(m_mutex);
        m_released = true;
        m_cv.notify_all();
    }
    [[nodiscard]] bool released() const {
        std::lock_guard lock(m_mutex);
        return m_released;
    }
    bool wait_entered(std::chrono::seconds timeout) {
        std::unique_lock lock(m_mutex);
        return m_cv.wait_for(lock, timeout, [&] { return m_entered; });
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_entered = false;
    bool m_released = false;
};

// Calls `let_go` if finish() was not called within a minute, and at destruction in any case
// (a failed assertion must not leave the worker or the preparation thread waiting).
class Watchdog {
public:
    explicit Watchdog(std::function<void()> let_go)
        : m_let_go(std::move(let_go)), m_thread([this] {
              std::unique_lock lock(m_mutex);
              if (!m_cv.wait_for(lock, 60s, [&] { return m_done; })) {
                  m_fired = true;
                  lock.unlock();
                  m_let_go();
              }
          }) {}
    ~Watchdog() {
        finish();
        m_let_go();
    }
    // Stops the watchdog; true when it had to let the worker go.
    bool finish() {
        {
            std::lock_guard lock(m_mutex);
            m_done = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable()) {
            m_thread.join();
        }
        return m_fired;
    }

private:
    std::function<void()> m_let_go;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_done = false;
    bool m_fired = false;
    std::thread m_thread;
};

class SlowWorkerTest : public RuntimeTest {
protected:
    void SetUp() override {
        RuntimeTest::SetUp();
        detail::Scene scene = detail::make_demo_scene();
        m_assets = scene.shared_assets();
        detail::ViewRequest request;
        request.camera = 0;
        request.aspect = static_cast<float>(k_w) / static_cast<float>(k_h);
        m_snapshot = detail::encode_snapshot(detail::snapshot(scene, request));
        m_main_snapshot = detail::snapshot(scene, request);
    }

    std::unique_ptr<Runtime> make_slow_runtime() {
        RuntimeOptions options;
        options.worker_timeout = std::chrono::milliseconds(120'000); // held, not lost
        return make_runtime("1", options);
    }

    // One application frame: submits to every task, pumps, reads the scheduler's numbers,
    // renders the main view on the primary and reads every leased output there. Returns the
    // generations shown.
    std::vector<std::uint64_t> frame(Runtime& runtime, const std::vector<TaskId>& tasks,
                                     detail::HeadlessView& view, harness::LeaseReader& reader,
                                     const detail::SceneCaptureTimes* times) {
        for (TaskId t : tasks) {
            const SubmitResult r = runtime.submit(t, m_snapshot);
            EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
        }
        runtime.pump();
        if (times != nullptr) {
            (void)times->busy(); // reading the sums never waits for the worker
        }
        std::vector<std::uint64_t> shown;
        for (TaskId t : tasks) {
            (void)runtime.stats(t);
            (void)detail::RuntimeProbe(runtime).pulse(t, 8);
            if (auto lease = runtime.acquire(t)) {
                const std::uint64_t value = reader.read(*lease, false);
                EXPECT_NE(value, 0u);
                runtime.release(*lease, value);
                shown.push_back(lease->generation);
            } else {
                shown.push_back(0);
            }
        }
        (void)view.render(m_main_snapshot);
        return shown;
    }

    std::shared_ptr<const detail::SceneAssets> m_assets;
    std::vector<std::byte> m_snapshot;
    detail::FrameSnapshot m_main_snapshot;
};

TEST_F(SlowWorkerTest, FramesRunWhileTheWorkersGpuWorkIsHeld) {
    GpuGate gate; // outlives the runtime, whose workloads use it
    auto times = std::make_shared<detail::SceneCaptureTimes>();
    auto runtime = make_slow_runtime();
    const std::string workload = "gated-capture";
    detail::RuntimeAccess::impl(*runtime).workloads().add(
        workload, [&](const detail::Device& device, const detail::WorkloadParams& params) {
            return std::make_unique<GatedCapture>(device, params, m_assets, times, gate);
        });
    TaskDesc desc;
    desc.name = "held";
    desc.workload = workload;
    desc.width = k_w;
    desc.height = k_h;
    desc.placement = Placement::on_worker(0);
    const TaskId held = runtime->register_task(desc);
    TaskDesc primary_desc = pattern_task("primary", k_w, k_h);
    const TaskId own = runtime->register_task(primary_desc);

    const detail::Device& primary = detail::RuntimeAccess::impl(*runtime).primary();
    const auto cache = detail::shared_mesh_cache(primary, m_assets);
    const detail::Renderer renderer(*cache, VK_FORMAT_R8G8B8A8_UNORM);
    detail::HeadlessView view(renderer, {k_w, k_h}, "main view");
    auto reader = make_reader(*runtime, k_w, k_h);

    std::uint64_t own_newest = 0;
    {
        Watchdog watchdog([&] { gate.open(); });
        for (std::uint32_t f = 0; f < k_frames; ++f) {
            const auto shown = frame(*runtime, {held, own}, view, *reader, times.get());
            ASSERT_EQ(shown[0], 0u) << "frame " << f << " shows held work";
            EXPECT_GE(shown[1], own_newest) << "frame " << f;
            own_newest = shown[1];
        }
        EXPECT_FALSE(watchdog.finish())
            << "the frames finished only once the worker was let go: a frame waited on it";
        EXPECT_GT(own_newest, 0u) << "the primary's own task published nothing meanwhile";
        const TaskStats before = runtime->stats(held);
        EXPECT_EQ(before.ready, 0u);
        EXPECT_GT(before.accepted, 0u);
    } // lets the worker go
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(held).newest_generation > 0; }));
    const auto lease = runtime->acquire(held);
    ASSERT_TRUE(lease);
    EXPECT_GE(lease->generation, 1u);
    runtime->release(*lease, 0);
    // The worker's GPU time arrived as numbers, read on its own thread (only "held" is timed
    // into `times`, on its worker).
    const std::uint32_t held_device = runtime->stats(held).device;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const auto busy = times->busy();
        const auto it = busy.find(held_device);
        return it != busy.end() && it->second.generations > 0;
    }));
}

TEST_F(SlowWorkerTest, FramesRunWhileATaskIsPrepared) {
    PreparationGate preparation;
    auto times = std::make_shared<detail::SceneCaptureTimes>();
    auto runtime = make_slow_runtime();
    const std::string workload = "slow-to-prepare";
    detail::RuntimeAccess::impl(*runtime).workloads().add(
        workload, [&](const detail::Device& device, const detail::WorkloadParams& params) {
            preparation.wait(); // the pipeline build that takes its time
            return std::make_unique<detail::SceneCaptureWorkload>(device, params, m_assets, times);
        });
    const TaskId own = runtime->register_task(pattern_task("primary", k_w, k_h));
    TaskDesc desc;
    desc.name = "slow";
    desc.workload = workload;
    desc.width = k_w;
    desc.height = k_h;
    desc.placement = Placement::on_worker(0);
    const TaskId slow = runtime->register_task_async(desc);
    ASSERT_TRUE(preparation.wait_entered(30s));
    EXPECT_TRUE(runtime->stats(slow).preparing);
    EXPECT_EQ(runtime->submit(slow, m_snapshot).status, SubmitStatus::Preparing);

    const detail::Device& primary = detail::RuntimeAccess::impl(*runtime).primary();
    const auto cache = detail::shared_mesh_cache(primary, m_assets);
    const detail::Renderer renderer(*cache, VK_FORMAT_R8G8B8A8_UNORM);
    detail::HeadlessView view(renderer, {k_w, k_h}, "main view");
    auto reader = make_reader(*runtime, k_w, k_h);
    {
        Watchdog watchdog([&] { preparation.release(); });
        std::uint64_t own_newest = 0;
        for (std::uint32_t f = 0; f < k_frames; ++f) {
            const auto shown = frame(*runtime, {slow, own}, view, *reader, times.get());
            ASSERT_EQ(shown[0], 0u);
            EXPECT_GE(shown[1], own_newest);
            own_newest = shown[1];
        }
        EXPECT_FALSE(watchdog.finish())
            << "the frames finished only once the preparation was let go: a frame waited on it";
        EXPECT_GT(own_newest, 0u);
        EXPECT_TRUE(runtime->stats(slow).preparing);
        EXPECT_EQ(runtime->stats(slow).accepted, 0u);
    } // lets the preparation go
    ASSERT_TRUE(pump_until(*runtime, [&] { return !runtime->stats(slow).preparing; }));
    EXPECT_EQ(runtime->stats(slow).preparation_error, "");
    ASSERT_TRUE(pump_until(*runtime, [&] {
        (void)runtime->submit(slow, m_snapshot);
        return runtime->stats(slow).newest_generation > 0;
    }));
}

TEST_F(SlowWorkerTest, AFailedPreparationAnswersFailedWithItsReason) {
    auto runtime = make_slow_runtime();
    const std::string workload = "fails-to-prepare";
    detail::RuntimeAccess::impl(*runtime).workloads().add(
        workload,
        [](const detail::Device&,
           const detail::WorkloadParams&) -> std::unique_ptr<detail::Workload> {
            throw Error("The test workload cannot be built here",
                        "Nothing to do: the test wants this");
        });
    TaskDesc desc = pattern_task("worker:0", k_w, k_h);
    desc.workload = workload;
    const TaskId id = runtime->register_task_async(desc);
    ASSERT_TRUE(pump_until(*runtime, [&] { return !runtime->stats(id).preparing; }));
    const TaskStats s = runtime->stats(id);
    EXPECT_NE(s.preparation_error.find("cannot be built here"), std::string::npos)
        << s.preparation_error;
    const SubmitResult r = runtime->submit(id, m_snapshot);
    EXPECT_EQ(r.status, SubmitStatus::Failed);
    EXPECT_NE(r.reason.find("cannot be built here"), std::string::npos) << r.reason;
    // The blocking form throws what the preparation threw.
    EXPECT_THROW((void)runtime->register_task(desc), Error);
    // An unknown workload is refused at once, before any preparation.
    desc.workload = "no-such-workload";
    EXPECT_THROW((void)runtime->register_task_async(desc), Error);
}

TEST_F(SlowWorkerTest, ASlowWorkerWithALongQueueIsBusyNotLost) {
    // Each job takes 300 ms of the worker; with 5 slots the last one queued is ready about
    // 1.5 s after its request, past the 1 s timeout. The worker completes a job every 300 ms,
    // so it is slow, not lost.
    Ticker ticker(std::chrono::milliseconds(300));
    RuntimeOptions options;
    options.worker_timeout = std::chrono::milliseconds(1000);
    auto runtime = make_runtime("1", options);
    detail::RuntimeAccess::impl(*runtime).workloads().add(
        "ticked-pattern", [&](const detail::Device& device, const detail::WorkloadParams& params) {
            return std::make_unique<TickedPattern>(device, params, ticker);
        });
    TaskDesc desc = pattern_task("worker:0", k_w, k_h);
    desc.workload = "ticked-pattern";
    desc.slots = 5;
    const TaskId task = runtime->register_task(desc);
    std::uint32_t accepted = 0;
    for (int i = 0; i < 5; ++i) {
        accepted += runtime->submit(task).accepted() ? 1 : 0;
    }
    ASSERT_EQ(accepted, 5u);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const TaskStats s = runtime->stats(task);
        return s.worker_lost || s.newest_generation == 5;
    }));
    const TaskStats s = runtime->stats(task);
    EXPECT_FALSE(s.worker_lost) << s.worker_lost_reason;
    EXPECT_EQ(s.newest_generation, 5u);
}

// The pattern workload behind a GpuGate: every job's commands first wait for the gate's event,
// so a job takes on the GPU as long as the test keeps the gate shut.
class GatedPattern final : public detail::Workload {
public:
    GatedPattern(const detail::Device& device, const detail::WorkloadParams& params, GpuGate& gate)
        : m_gate(gate), m_event(gate.add(device)),
          m_inner(std::make_unique<detail::PatternWorkload>(device, params)) {}
    ~GatedPattern() override { m_gate.remove(m_event); }
    VkImageUsageFlags target_usage() const noexcept override { return m_inner->target_usage(); }
    detail::WorkloadOutput output() const noexcept override { return m_inner->output(); }
    VkResult record(VkCommandBuffer cmd, std::uint32_t slot, const detail::WorkloadTarget& target,
                    std::uint64_t generation,
                    std::span<const std::byte> snapshot) noexcept override {
        vkCmdWaitEvents(cmd, 1, &m_event, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, nullptr, 0, nullptr, 0, nullptr);
        return m_inner->record(cmd, slot, target, generation, snapshot);
    }

private:
    GpuGate& m_gate;
    VkEvent m_event;
    std::unique_ptr<detail::Workload> m_inner;
};

// Slow is not lost: a worker whose first job takes many times the worker timeout (nothing is
// measured yet: it may be compiling pipelines, uploading, or simply be a CPU device given a
// heavy scene) is not lost, and the job's output arrives.
TEST_F(SlowWorkerTest, AFirstJobFarLongerThanTheTimeoutIsNotLost) {
    GpuGate gate;
    RuntimeOptions options;
    options.worker_timeout = 200ms; // the first job below takes ten times that
    auto runtime = make_runtime("1", options);
    detail::RuntimeAccess::impl(*runtime).workloads().add(
        "gated-pattern", [&](const detail::Device& device, const detail::WorkloadParams& params) {
            return std::make_unique<GatedPattern>(device, params, gate);
        });
    TaskDesc desc = pattern_task("worker:0", k_w, k_h);
    desc.workload = "gated-pattern";
    const TaskId task = runtime->register_task(desc);
    Watchdog watchdog([&] { gate.open(); });
    ASSERT_TRUE(runtime->submit(task).accepted());
    const auto until = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < until) {
        runtime->pump();
        ASSERT_FALSE(runtime->stats(task).worker_lost) << runtime->stats(task).worker_lost_reason;
        std::this_thread::sleep_for(5ms);
    }
    gate.open();
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
    EXPECT_FALSE(runtime->stats(task).worker_lost);
    auto reader = make_reader(*runtime, k_w, k_h);
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    std::uint64_t v = 0;
    expect_pattern(read_back(*reader, *lease, v), *lease);
    (void)runtime->release(*lease, v);
}

// The allowance a loss's sentence says the worker ran past ("... its allowance of 1000 ms ...").
std::optional<std::chrono::milliseconds> allowance_in(const std::string& reason) {
    const std::string key = "allowance of ";
    const auto at = reason.find(key);
    if (at == std::string::npos) {
        return std::nullopt;
    }
    std::int64_t ms = 0;
    const char* first = reason.data() + at + key.size();
    const char* last = reason.data() + reason.size();
    const auto [end, error] = std::from_chars(first, last, ms);
    if (error != std::errc{} ||
        std::string_view(end, static_cast<std::size_t>(last - end)).substr(0, 3) != " ms") {
        return std::nullopt;
    }
    return std::chrono::milliseconds(ms);
}

// A real hang is still caught: a worker whose job never finishes is lost, with a sentence saying
// where it stopped and which allowance it ran past: first_job_timeout before anything was
// measured there; once a job was measured, max(worker_timeout, 4 x the longest job), and no
// longer first_job_timeout. The loss is reported only after that allowance passed since the
// submit (the runtime and the test read one steady clock); how late a loaded machine reports it
// is left to pump_until's limit, not asserted.
TEST_F(SlowWorkerTest, AJobThatNeverFinishesLosesTheWorkerWithinTheBound) {
    for (const bool measured_first : {false, true}) {
        GpuGate gate;
        RuntimeOptions options;
        options.worker_timeout = 200ms;
        // Measured first: a first-job allowance far past pump_until's 30 s, so that a loss
        // reported at all shows that it no longer applies.
        options.first_job_timeout = measured_first ? std::chrono::milliseconds(600'000) : 1000ms;
        auto runtime = make_runtime("1", options);
        detail::RuntimeAccess::impl(*runtime).workloads().add(
            "gated-pattern",
            [&](const detail::Device& device, const detail::WorkloadParams& params) {
                return std::make_unique<GatedPattern>(device, params, gate);
            });
        TaskDesc desc = pattern_task("worker:0", k_w, k_h);
        desc.workload = "gated-pattern";
        const TaskId task = runtime->register_task(desc);
        if (measured_first) {
            gate.open(); // one quick job: the worker's allowance knows how long a job takes
            ASSERT_TRUE(runtime->submit(task).accepted());
            ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
            gate.close();
        }
        Watchdog watchdog([&] { gate.open(); });
        const auto submitted = std::chrono::steady_clock::now();
        ASSERT_TRUE(runtime->submit(task).accepted());
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).worker_lost; }));
        const auto reported = std::chrono::steady_clock::now();
        const TaskStats s = runtime->stats(task);
        const auto allowance = allowance_in(s.worker_lost_reason);
        ASSERT_TRUE(allowance) << s.worker_lost_reason;
        if (measured_first) {
            EXPECT_GE(*allowance, options.worker_timeout) << s.worker_lost_reason;
            EXPECT_LT(*allowance, options.first_job_timeout) << s.worker_lost_reason;
        } else {
            EXPECT_EQ(*allowance, options.first_job_timeout) << s.worker_lost_reason;
        }
        EXPECT_GE(reported - submitted, *allowance) << "lost before its allowance";
        // Where it stopped: the held job's generation, its work not done.
        const std::string held = "generation " + std::to_string(measured_first ? 2 : 1) + " of ";
        EXPECT_NE(s.worker_lost_reason.find(held), std::string::npos) << s.worker_lost_reason;
        EXPECT_EQ(s.ready, measured_first ? 1u : 0u);
        EXPECT_FALSE(watchdog.finish()) << "the gate opened before the loss was seen";
        gate.open(); // the GPU finishes the job before the runtime goes
    }
}

} // namespace
} // namespace tandem::test
