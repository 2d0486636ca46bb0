// Tasks an engine keeps for hours: registered, changed and unregistered thousands of times, the
// runtime holds afterwards exactly what a runtime that never had a task holds (device memory,
// threads); a task moved a thousand times holds at most one instance per device; unregister
// keeps the leases the application holds valid and unchanged, and every call answers an id that
// names no task the same way; reconfigure changes a task's shape while frames run, never blank
// and never back in time; trial jobs take none of the application's generations or counts.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "app_image.hpp"
#include "runtime_fixture.hpp"
#include "tandem/capture.hpp"
#include "tandem/compute.hpp"
#include "tandem/log.hpp"
#include "tandem/post.hpp"

namespace tandem::test {
namespace {

using namespace std::chrono_literals;

class TaskLifetime : public RuntimeTest {
protected:
    // Pumps until everything that left use was freed (nothing retiring), or 60 s.
    static bool settled(Runtime& runtime) {
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        while (runtime.resources().retiring != 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
            runtime.pump();
            std::this_thread::sleep_for(1ms);
        }
        return true;
    }

    static void expect_same_holdings(const RuntimeResources& now, const RuntimeResources& base) {
        ASSERT_EQ(now.devices.size(), base.devices.size());
        for (std::size_t d = 0; d < now.devices.size(); ++d) {
            EXPECT_EQ(now.devices[d].allocations, base.devices[d].allocations)
                << "adapter " << now.devices[d].device;
            EXPECT_EQ(now.devices[d].bytes, base.devices[d].bytes)
                << "adapter " << now.devices[d].device;
        }
        EXPECT_EQ(now.threads, base.threads);
        EXPECT_EQ(now.tasks, 0u);
        EXPECT_EQ(now.instances, 0u);
        EXPECT_EQ(now.retiring, 0u);
    }

    // The application's inputs of the lifetime tests' tasks with inputs, written once: a 40x24
    // RGBA8 image (every byte 7) and a 256-byte buffer (every byte 9), in that order.
    struct TwoInputs {
        TwoInputs(detail::Device& device, const Runtime& runtime)
            : image(device, runtime, VK_FORMAT_R8G8B8A8_UNORM, 40, 24),
              buffer(device, runtime, 256, 0),
              inputs{image.write(std::vector<std::uint8_t>(std::size_t{40} * 24 * 4, 7), 0),
                     buffer.write(std::vector<std::uint8_t>(256, 9), 0)} {}
        // Once the last submit's inputs were released at `released`.
        void finish(std::uint64_t released) {
            image.finish(released);
            buffer.finish(released);
        }
        AppImage image;
        AppImage buffer;
        std::array<InputImage, 2> inputs;
    };

    // One submit of `inputs` to `task`, accepted, and its job's output ready; `released` grows
    // to the newest value at which the application may write the inputs again.
    static void run_with_inputs(Runtime& runtime, TaskId task, std::span<const InputImage> inputs,
                                std::uint64_t& released) {
        const std::uint64_t before = runtime.stats(task).ready;
        ASSERT_TRUE(pump_until(runtime, [&] {
            const SubmitResult r = runtime.submit(task, {}, inputs);
            released = std::max(released, r.inputs_released);
            return r.accepted();
        }));
        ASSERT_TRUE(pump_until(runtime, [&] { return runtime.stats(task).ready > before; }))
            << runtime.stats(task).workload_error;
    }

    // One job on `task`, waited for, its output leased and released: the GPU used its objects.
    static void run_one(Runtime& runtime, TaskId task, std::span<const std::byte> bytes = {}) {
        const std::uint64_t before = runtime.stats(task).ready;
        ASSERT_TRUE(pump_until(runtime, [&] { return runtime.submit(task, bytes).accepted(); }));
        ASSERT_TRUE(pump_until(runtime, [&] { return runtime.stats(task).ready > before; }))
            << runtime.stats(task).workload_error;
        auto lease = runtime.acquire(task);
        ASSERT_TRUE(lease);
        EXPECT_EQ(runtime.release(*lease, 0), TaskError::None);
    }
};

// The compute test's module (tests/runtime/shaders/palette.comp: push constants generation and
// count, a palette of 5 and an offset) and one job of it.
std::vector<std::uint32_t> palette_module() {
    std::FILE* f = std::fopen(TANDEM_TEST_SHADER, "rb");
    std::vector<std::uint32_t> words;
    if (f != nullptr) {
        std::uint32_t w = 0;
        while (std::fread(&w, 4, 1, f) == 1) {
            words.push_back(w);
        }
        std::fclose(f);
    }
    return words;
}

std::vector<std::byte> palette_job() {
    std::vector<std::byte> out(8 + 4 * 5 + 4);
    const std::uint32_t words[] = {1,           5,           0xff0000ffu, 0x00ff00ffu,
                                   0x0000ffffu, 0xffffffffu, 0x00000000u, 3};
    std::memcpy(out.data(), words, out.size());
    return out;
}

std::shared_ptr<const Scene> small_scene(MeshId& mesh) {
    static const float positions[] = {-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0};
    static const std::uint16_t indices[] = {0, 1, 2, 0, 2, 3};
    SceneBuilder builder;
    PrimitiveDesc quad;
    quad.positions = positions;
    quad.indices16 = indices;
    quad.material = builder.add_material({{0.8f, 0.3f, 0.2f, 1.0f}, std::nullopt});
    mesh = builder.add_mesh("quad", {quad});
    return builder.build();
}

TEST_F(TaskLifetime, ThousandsOfTasksComeAndGoAndLeaveNothingBehind) {
    auto runtime = make_runtime("auto");
    ASSERT_EQ(runtime->worker_devices().size(), 2u);
    const RuntimeResources base = runtime->resources();
    const char* placements[] = {"primary", "worker:0", "worker:1"};
    std::set<TaskId> ids;
    // Pattern tasks: every tenth runs a job on the GPU before it goes.
    for (int i = 0; i < 2000; ++i) {
        TaskDesc desc = pattern_task(placements[i % 3], 16 + i % 7, 8 + i % 5);
        const TaskId id = runtime->register_task(desc);
        EXPECT_TRUE(ids.insert(id).second) << "id " << id << " was handed out before";
        if (i % 10 == 0) {
            run_one(*runtime, id);
        }
        ASSERT_EQ(runtime->unregister_task(id), TaskError::None);
        runtime->pump();
    }
    // Compute tasks of the application's SPIR-V.
    ComputeTaskDesc compute;
    compute.spirv = palette_module();
    compute.push_constant_bytes = 8;
    compute.input_bytes = {4 * 5, 4};
    const WorkloadFactory compute_factory = compute_workload(compute);
    const std::vector<std::byte> compute_job = palette_job();
    for (int i = 0; i < 500; ++i) {
        TaskDesc desc = pattern_task(placements[i % 3], 37, 29);
        desc.factory = compute_factory;
        const TaskId id = runtime->register_task(desc);
        EXPECT_TRUE(ids.insert(id).second);
        if (i % 10 == 0) {
            run_one(*runtime, id, compute_job);
        }
        ASSERT_EQ(runtime->unregister_task(id), TaskError::None);
        runtime->pump();
    }
    // Capture tasks of the application's scene.
    MeshId mesh;
    const auto scene = small_scene(mesh);
    CaptureSnapshot shot;
    shot.camera.view = look_at({0, 0, 3}, {0, 0, 0}, {0, 1, 0});
    shot.instances.push_back({mesh, k_identity, {}});
    const std::vector<std::byte> capture_job = encode_capture(shot);
    for (int i = 0; i < 500; ++i) {
        TaskDesc desc = pattern_task(placements[i % 3], 32, 24);
        desc.factory = capture_workload(scene);
        const TaskId id = runtime->register_task(desc);
        EXPECT_TRUE(ids.insert(id).second);
        if (i % 10 == 0) {
            run_one(*runtime, id, capture_job);
        }
        ASSERT_EQ(runtime->unregister_task(id), TaskError::None);
        runtime->pump();
    }
    ASSERT_TRUE(settled(*runtime));
    const RuntimeResources now = runtime->resources();
    expect_same_holdings(now, base);
    // What is kept for the next task is bounded: per device, images up to the caches' bound, one
    // empty block for images and one for buffers (lavapipe has one memory type) beyond what the
    // kept images use, and the pattern, compute and mesh pipelines.
    std::uint32_t pairs_of_workers = 0;
    for (std::size_t d = 0; d < now.devices.size(); ++d) {
        // Each device's cache keeps up to 64 images and pairs together (256 MiB); a zero-copy
        // pair is kept by the worker that exports it and holds memory on the primary as well.
        const DeviceResources& r = now.devices[d];
        EXPECT_LE(r.cached_images + r.cached_pairs, DeviceResources::k_cached_bound)
            << "adapter " << r.device;
        EXPECT_EQ(r.idle_images, r.cached_images + r.cached_pairs + r.partner_halves);
        const auto caches = static_cast<std::uint32_t>(now.devices.size());
        EXPECT_LE(r.idle_image_bytes, DeviceResources::k_cached_bytes_bound * caches);
        if (d == 0) {
            EXPECT_EQ(r.cached_pairs, 0u) << "the primary exports no pair";
        } else {
            EXPECT_EQ(r.partner_halves, 0u) << "a worker is no pair's partner";
            pairs_of_workers += r.cached_pairs;
        }
        const std::uint64_t block = std::uint64_t{32} << 20;
        EXPECT_LE(now.devices[d].pool_blocks,
                  base.devices[d].pool_blocks + 2 + now.devices[d].idle_image_bytes / block + 1)
            << "adapter " << now.devices[d].device;
        EXPECT_LE(now.devices[d].pipelines, base.devices[d].pipelines + 3)
            << "adapter " << now.devices[d].device;
    }
    EXPECT_EQ(now.devices[0].partner_halves, pairs_of_workers);
}

// A workload that clears its output and reads nothing: what its task's inputs cost is Tandem's.
class Clear final : public Workload {
public:
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const VkClearColorValue c{{0.5f, 0.25f, 0.75f, 1.0f}};
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &c, 1,
                             &range);
    }
};

// Tasks with an image and a buffer input on every device, and chains whose consumer on the
// primary reads a worker's delivered output, come and go: their input links, slot images and
// buffers, and their holds on their producers, are all freed.
TEST_F(TaskLifetime, TasksWithInputsAndChainsComeAndGoAndLeaveNothingBehind) {
    auto runtime = make_runtime("auto");
    ASSERT_EQ(runtime->worker_devices().size(), 2u);
    TwoInputs app(app_device(), *runtime);
    const std::array<InputImage, 2>& inputs = app.inputs;
    const RuntimeResources base = runtime->resources();
    const char* placements[] = {"primary", "worker:0", "worker:1"};
    std::uint64_t released = 0;
    for (int i = 0; i < 1000; ++i) {
        TaskDesc desc = pattern_task(placements[i % 3], 40, 24);
        desc.name = "with-inputs";
        desc.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, 0, 0},
                       {.name = "params", .buffer_size = 256}};
        desc.factory = [](const WorkerContext&) { return std::make_unique<Clear>(); };
        const TaskId id = runtime->register_task(desc);
        if (i % 10 == 0) {
            run_with_inputs(*runtime, id, inputs, released);
        }
        ASSERT_EQ(runtime->unregister_task(id), TaskError::None);
        runtime->pump();
    }
    for (int i = 0; i < 1000; ++i) {
        const TaskId producer = runtime->register_task(pattern_task(placements[1 + i % 2], 32, 24));
        TaskDesc blur = blur_task("blur", 32, 24);
        blur.inputs[0].producer = producer;
        blur.inputs[0].chain = ChainMode::Newest;
        blur.placement = Placement::parse("primary").value();
        const TaskId consumer = runtime->register_task(blur);
        if (i % 10 == 0) {
            run_one(*runtime, producer);
            run_one(*runtime, consumer);
        }
        // Either may go first: a consumer's holds keep what it reads.
        ASSERT_EQ(runtime->unregister_task(i % 2 == 0 ? producer : consumer), TaskError::None);
        ASSERT_EQ(runtime->unregister_task(i % 2 == 0 ? consumer : producer), TaskError::None);
        runtime->pump();
    }
    app.finish(released);
    ASSERT_TRUE(settled(*runtime));
    expect_same_holdings(runtime->resources(), base);
}

// On the host-imported path to a CPU worker, the slot images that are the staging itself (its
// inputs read in place, its outputs written in place) come and go with their tasks: a thousand
// registrations, every tenth running a job, leave nothing behind.
TEST_F(TaskLifetime, TasksUsingTheStagingInPlaceComeAndGoAndLeaveNothingBehind) {
    RuntimeOptions options;
    options.transfer_path = "host-imported";
    auto runtime = make_runtime("1", options);
    const auto& workers = runtime->worker_devices();
    ASSERT_EQ(workers.size(), 1u);
    if (workers[0].type != "cpu") {
        GTEST_SKIP()
            << "[expected-skip:no-cpu-worker] the staging is used in place by CPU devices only";
    }
    TwoInputs app(app_device(), *runtime);
    const std::array<InputImage, 2>& inputs = app.inputs;
    const RuntimeResources base = runtime->resources();
    std::uint64_t released = 0;
    for (int i = 0; i < 1000; ++i) {
        TaskDesc desc = pattern_task("worker:0", 40, 24);
        desc.name = "in-place";
        desc.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, 0, 0},
                       {.name = "params", .buffer_size = 256}};
        desc.factory = [](const WorkerContext&) { return std::make_unique<Clear>(); };
        const TaskId id = runtime->register_task(desc);
        const TaskStats s = runtime->stats(id);
        ASSERT_EQ(s.transfer_path, TransferPath::HostImported);
        ASSERT_TRUE(s.inputs_read_in_place);
        ASSERT_TRUE(s.outputs_written_in_place);
        if (i % 10 == 0) {
            run_with_inputs(*runtime, id, inputs, released);
        }
        ASSERT_EQ(runtime->unregister_task(id), TaskError::None);
        runtime->pump();
    }
    app.finish(released);
    ASSERT_TRUE(settled(*runtime));
    expect_same_holdings(runtime->resources(), base);
}

TEST_F(TaskLifetime, AnAutoTaskMovedAThousandTimesKeepsOneInstancePerDevice) {
    RuntimeOptions options;
    options.scheduler.decision_interval = 0ms;
    // lavapipe opened three times: openings of one device, asked to be treated as separate so
    // that moves between them happen at all. Trial jobs measure what a move costs.
    options.scheduler.openings_are_separate = true;
    auto runtime = make_runtime("auto", options);
    ASSERT_EQ(runtime->worker_devices().size(), 2u);
    const std::uint32_t primary = runtime->primary_device().index;
    const std::uint32_t w0 = runtime->worker_devices()[0].index;
    const std::uint32_t w1 = runtime->worker_devices()[1].index;
    TaskDesc desc = pattern_task("auto", 32, 16);
    const TaskId task = runtime->register_task(desc);
    // Its costs are the application's own: the primary far too slow, the workers priced so the
    // scheduler wants the one the task is not on.
    const auto price = [&](std::uint32_t expensive) {
        for (int k = 0; k < 9; ++k) {
            (void)runtime->observe_execute(task, primary, 400.0);
            (void)runtime->observe_execute(task, expensive, 200.0);
            (void)runtime->observe_execute(task, expensive == w0 ? w1 : w0, 0.1);
        }
    };
    std::uint64_t shown = 0;
    std::uint32_t shown_device = primary;
    std::uint64_t most_bytes = 0;
    std::uint32_t most_instances = 0;
    const auto frame = [&] {
        (void)runtime->submit(task);
        runtime->pump();
        if (auto lease = runtime->acquire(task)) {
            EXPECT_GE(lease->generation, shown) << "went back";
            shown = lease->generation;
            shown_device = lease->device;
            (void)runtime->release(*lease, 0);
        } else {
            EXPECT_EQ(shown, 0u) << "blank after an output was shown";
        }
        const RuntimeResources r = runtime->resources();
        most_instances = std::max(most_instances, r.instances);
        std::uint64_t bytes = 0;
        for (const auto& d : r.devices) {
            bytes += d.bytes;
        }
        most_bytes = std::max(most_bytes, bytes);
    };
    std::uint64_t bytes_after_warm_up = 0;
    for (std::uint64_t move = 1; move <= 1000; ++move) {
        const std::uint32_t from = runtime->stats(task).device;
        price(from == w1 ? w1 : w0);
        // Moved once the new device's output is the one shown.
        ASSERT_TRUE(pump_until(*runtime,
                               [&] {
                                   frame();
                                   const std::uint32_t now = runtime->stats(task).device;
                                   return now != from && shown_device == now;
                               }))
            << "move " << move;
        if (move == 3) {
            bytes_after_warm_up = most_bytes; // an instance on each device it goes to
        }
        if (HasFailure()) {
            break;
        }
    }
    EXPECT_GE(runtime->stats(task).moves, 1000u);
    // The documented bound: one instance per device the task ran on (and one more while a
    // move's is being prepared), whatever the number of moves.
    EXPECT_LE(most_instances, 3u);
    EXPECT_EQ(most_bytes, bytes_after_warm_up) << "memory grew with the moves";
}

TEST_F(TaskLifetime, UnregisterKeepsHeldLeasesAndStaleIdsGetOneAnswer) {
    auto runtime = make_runtime("auto");
    auto reader = make_reader(*runtime);
    const RuntimeResources base = runtime->resources();
    const TaskId task = runtime->register_task(pattern_task("worker:0"));
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    std::uint64_t v = 0;
    expect_pattern(read_back(*reader, *lease, v), *lease);

    EXPECT_EQ(runtime->unregister_task(task), TaskError::None);
    // The lease stays valid and unchanged while the runtime keeps running.
    for (int i = 0; i < 20; ++i) {
        runtime->pump();
        std::this_thread::sleep_for(2ms);
    }
    std::uint64_t v2 = 0;
    expect_pattern(read_back(*reader, *lease, v2), *lease);
    EXPECT_EQ(runtime->resources().tasks, 0u);

    // The id names no task: the same answer from every call.
    for (const TaskId stale : {task, TaskId{}, TaskId{4711, 3}}) {
        const SubmitResult r = runtime->submit(stale);
        EXPECT_EQ(r.status, SubmitStatus::Failed);
        EXPECT_EQ(r.error, TaskError::UnknownTask);
        EXPECT_FALSE(r.reason.empty());
        const AcquireResult a = runtime->acquire(stale);
        EXPECT_FALSE(a);
        EXPECT_EQ(a.error, TaskError::UnknownTask);
        EXPECT_EQ(runtime->stats(stale).error, TaskError::UnknownTask);
        EXPECT_EQ(runtime->unregister_task(stale), TaskError::UnknownTask);
        EXPECT_EQ(runtime->reconfigure(stale, pattern_task("primary")), TaskError::UnknownTask);
        EXPECT_EQ(runtime->calibrate(stale).error, TaskError::UnknownTask);
        EXPECT_EQ(runtime->observe_execute(stale, 0, 1.0), TaskError::UnknownTask);
    }
    // The held lease goes straight back to its instance; a second release finds it not held,
    // or no task at all once the completion thread removed the task (its last lease went with
    // the first release, so that may come first).
    EXPECT_EQ(runtime->release(*lease, v2), TaskError::None);
    const TaskError again = runtime->release(*lease, v2);
    EXPECT_TRUE(again == TaskError::LeaseNotHeld || again == TaskError::UnknownTask)
        << to_string(again);
    ASSERT_TRUE(settled(*runtime));
    expect_same_holdings(runtime->resources(), base);
    // Once everything went, the lease's task is gone from the table too.
    EXPECT_EQ(runtime->release(*lease, v2), TaskError::UnknownTask);
    // Its id is never handed out again.
    for (int i = 0; i < 50; ++i) {
        const TaskId next = runtime->register_task_async(pattern_task("primary"));
        EXPECT_NE(next, task);
        EXPECT_EQ(runtime->unregister_task(next), TaskError::None);
    }
}

TEST_F(TaskLifetime, UnregisterWhilePreparingMovingOrLost) {
    RuntimeOptions options;
    options.scheduler.decision_interval = 0ms;
    options.scheduler.openings_are_separate = true;
    auto runtime = make_runtime("auto", options);
    auto& impl = detail::RuntimeAccess::impl(*runtime);
    const RuntimeResources base = runtime->resources();
    // While it is being prepared.
    for (int i = 0; i < 20; ++i) {
        const TaskId t = runtime->register_task_async(pattern_task(i % 2 ? "worker:0" : "primary"));
        EXPECT_EQ(runtime->unregister_task(t), TaskError::None);
        EXPECT_EQ(runtime->submit(t).error, TaskError::UnknownTask);
    }
    // During a move: its new instance is still being prepared.
    const TaskId moving = runtime->register_task(pattern_task("auto"));
    const std::uint32_t w0 = runtime->worker_devices()[0].index;
    const std::uint32_t w1 = runtime->worker_devices()[1].index;
    for (int k = 0; k < 9; ++k) {
        (void)runtime->observe_execute(moving, runtime->primary_device().index, 400.0);
        (void)runtime->observe_execute(moving, w0, 0.1);
        (void)runtime->observe_execute(moving, w1, 200.0);
    }
    ASSERT_TRUE(pump_until(*runtime, [&] {
        (void)runtime->submit(moving);
        const TaskStats s = runtime->stats(moving);
        for (const TaskDeviceStats& d : s.devices) {
            if (d.device == w0 && !d.active) {
                return true; // an instance there, not active yet
            }
        }
        return s.device == w0;
    }));
    EXPECT_EQ(runtime->unregister_task(moving), TaskError::None);
    // Twice.
    EXPECT_EQ(runtime->unregister_task(moving), TaskError::UnknownTask);
    ASSERT_TRUE(settled(*runtime));
    expect_same_holdings(runtime->resources(), base);
    // After its worker was lost (its objects wait for the runtime's end: the device may still
    // hold them; nothing crashes meanwhile).
    const TaskId lost = runtime->register_task(pattern_task("worker:1"));
    detail::RuntimeProbe(impl).force_device_lost(lost);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        (void)runtime->submit(lost);
        return runtime->stats(lost).worker_lost;
    }));
    EXPECT_EQ(runtime->unregister_task(lost), TaskError::None);
    EXPECT_EQ(runtime->stats(lost).error, TaskError::UnknownTask);
    for (int i = 0; i < 20; ++i) {
        runtime->pump();
    }
}

TEST_F(TaskLifetime, ReconfigureChangesTheSizeWhileFramesRunNeverBlankNeverBack) {
    auto runtime = make_runtime("auto");
    auto reader = make_reader(*runtime, 96, 72);
    const TaskId task = runtime->register_task(pattern_task("worker:0", 64, 48));
    std::uint64_t shown = 0;
    bool new_size = false;
    bool reconfigured = false;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    int new_frames = 0;
    for (int frame = 0; std::chrono::steady_clock::now() < deadline && new_frames < 40; ++frame) {
        std::this_thread::sleep_for(500us);
        new_frames += new_size ? 1 : 0;
        const SubmitResult r = runtime->submit(task);
        EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
        EXPECT_NE(r.status, SubmitStatus::Preparing) << "the old shape takes submits meanwhile";
        runtime->pump();
        if (!reconfigured && frame >= 20 && shown > 0) {
            TaskDesc bigger = pattern_task("worker:1", 96, 72);
            bigger.slots = 4;
            ASSERT_EQ(runtime->reconfigure(task, bigger), TaskError::None);
            reconfigured = true;
        }
        auto lease = runtime->acquire(task);
        if (!lease) {
            EXPECT_EQ(shown, 0u) << "frame " << frame << ": blank after an output was shown";
            continue;
        }
        EXPECT_GE(lease->generation, shown) << "frame " << frame << " went back";
        shown = lease->generation;
        if (lease->extent.width == 96) {
            EXPECT_EQ(lease->extent.height, 72u);
            EXPECT_TRUE(reconfigured);
            new_size = true;
        } else {
            EXPECT_FALSE(new_size) << "the old size came back";
            EXPECT_EQ(lease->extent.width, 64u);
        }
        std::uint64_t v = 0;
        if (frame % 7 == 0) {
            expect_pattern(read_back(*reader, *lease, v), *lease);
        }
        (void)runtime->release(*lease, v);
    }
    EXPECT_TRUE(new_size);
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.reconfigurations, 1u);
    EXPECT_EQ(s.device, runtime->worker_devices()[1].index);
    // A description that cannot be refused nothing: the task runs on unchanged.
    TaskDesc bad = pattern_task("worker:0", 0, 72);
    EXPECT_THROW((void)runtime->reconfigure(task, bad), Error);
    EXPECT_EQ(runtime->stats(task).reconfigurations, 1u);
}

// The application had not acquired anything yet when the task moved: acquire still hands out
// the newest output the old device made until the new shape has one of its own.
TEST_F(TaskLifetime, AReconfigureBeforeTheFirstAcquireIsNotBlankWhileOutputsExist) {
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, 64, 48);
    const TaskId task = runtime->register_task(pattern_task("worker:0", 64, 48));
    for (std::uint64_t g = 1; g <= 2; ++g) {
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(task).accepted(); }));
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready >= g; }));
    }
    ASSERT_EQ(runtime->reconfigure(task, pattern_task("primary", 64, 48)), TaskError::None);
    // The new shape takes over once prepared; no job of it ran.
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).reconfigurations == 1; }));
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.device, runtime->primary_device().index);
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease) << "blank though generation 2 is ready on the worker";
    EXPECT_EQ(lease->generation, 2u);
    EXPECT_EQ(lease->device, runtime->worker_devices()[0].index);
    std::uint64_t v = 0;
    expect_pattern(read_back(*reader, *lease, v), *lease);
    EXPECT_EQ(runtime->release(*lease, v), TaskError::None);
    // The new shape's first output replaces it, and nothing goes back.
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(task).accepted(); }));
    std::optional<Lease> newer;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        auto l = runtime->acquire(task);
        if (l && l->generation > 2) {
            newer = *l.lease;
            return true;
        }
        if (l) {
            EXPECT_EQ(l->generation, 2u);
            (void)runtime->release(*l, 0);
        }
        return false;
    }));
    EXPECT_EQ(newer->generation, 3u);
    EXPECT_EQ(newer->device, runtime->primary_device().index);
    EXPECT_EQ(runtime->release(*newer, 0), TaskError::None);
}

TEST_F(TaskLifetime, TrialJobsTakeNoneOfTheApplicationsGenerationsOrCounts) {
    RuntimeOptions options;
    options.scheduler.decision_interval = 0ms;
    options.scheduler.openings_are_separate = true; // trial jobs on the workers too
    auto runtime = make_runtime("auto", options);
    const TaskId task = runtime->register_task(pattern_task("auto", 32, 16));
    std::uint64_t expected = 1;
    std::uint64_t accepted = 0;
    for (int frame = 0; frame < 4000 && accepted < 200; ++frame) {
        const SubmitResult r = runtime->submit(task);
        if (r.accepted()) {
            EXPECT_EQ(r.generation, expected) << "the generations the application gets have a gap";
            ++expected;
            ++accepted;
        }
        runtime->pump();
        if (auto lease = runtime->acquire(task)) {
            (void)runtime->release(*lease, 0);
        }
        std::this_thread::sleep_for(200us);
    }
    ASSERT_EQ(accepted, 200u);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).in_flight == 0; }));
    const TaskStats s = runtime->stats(task);
    EXPECT_GT(s.trial_jobs, 0u) << "no trial job ran: the test shows nothing";
    EXPECT_EQ(s.accepted, 200u);
    EXPECT_EQ(s.ready + s.superseded, 200u);
    EXPECT_LE(s.newest_generation, 200u);
}

TEST_F(TaskLifetime, TheLogCallbackGetsTheRuntimesMessagesAndStdoutNothing) {
    std::mutex mutex;
    std::vector<std::pair<LogLevel, std::string>> got;
    RuntimeOptions options;
    options.log_level = LogLevel::Debug;
    options.log = [&](LogLevel level, std::string_view category, std::string_view message) {
        std::lock_guard lock(mutex);
        got.emplace_back(level, std::string(category) + ": " + std::string(message));
    };
    {
        auto runtime = make_runtime("auto", options);
        const TaskId task = runtime->register_task(pattern_task("worker:0"));
        detail::RuntimeProbe(*runtime).force_device_lost(task);
        ASSERT_TRUE(pump_until(*runtime, [&] {
            (void)runtime->submit(task);
            return runtime->stats(task).worker_lost;
        }));
    }
    bool lost = false;
    bool debug = false;
    {
        std::lock_guard lock(mutex);
        for (const auto& [level, text] : got) {
            lost =
                lost || (level == LogLevel::Warn && text.rfind("runtime: worker1 is lost", 0) == 0);
            debug = debug || level == LogLevel::Debug;
        }
    }
    EXPECT_TRUE(lost) << "the lost worker's warning did not reach the callback";
    EXPECT_TRUE(debug) << "the level asked for debug messages";

    // With default options: warnings go to stderr, nothing to stdout.
    std::fflush(stdout);
    const int saved = ::dup(STDOUT_FILENO);
    std::FILE* capture = std::tmpfile();
    ASSERT_NE(capture, nullptr);
    ::dup2(::fileno(capture), STDOUT_FILENO);
    {
        auto runtime = make_runtime("auto");
        const TaskId task = runtime->register_task(pattern_task("worker:1"));
        detail::RuntimeProbe(*runtime).force_device_lost(task);
        (void)pump_until(*runtime, [&] {
            (void)runtime->submit(task);
            return runtime->stats(task).worker_lost;
        });
    }
    std::fflush(stdout);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    EXPECT_EQ(std::ftell(capture), 0L) << "the runtime wrote to stdout";
    std::fclose(capture);
}

} // namespace
} // namespace tandem::test
