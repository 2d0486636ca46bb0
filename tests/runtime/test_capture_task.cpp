// Capture tasks of the application's own scene (tandem/capture.hpp): a scene built from arrays
// and captured on a worker equals, pixel for pixel, the same scene written as glTF, loaded into
// a builder and captured the same way; the worker's capture equals the primary's; 16-bit and
// 32-bit indices, several primitives, the tag filter and an orthographic camera draw what they
// should; a snapshot that cannot be drawn stops the task with its sentence.
#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "gltf_writer.hpp"
#include "runtime_fixture.hpp"
#include "scene_arrays.hpp"
#include "tandem/capture.hpp"
#include "tandem/gltf.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_view_w = 96;
constexpr std::uint32_t k_view_h = 64;

class CaptureTaskTest : public RuntimeTest {
protected:
    TaskId capture_task(Runtime& runtime, const std::shared_ptr<const Scene>& scene,
                        const std::string& name, const std::string& placement) {
        TaskDesc desc = pattern_task(placement, k_view_w, k_view_h);
        desc.name = name;
        desc.factory = capture_workload(scene);
        return runtime.register_task(desc);
    }

    // Submits `shot` and reads the generation it produced back on the primary.
    std::vector<std::uint8_t> capture(Runtime& runtime, harness::LeaseReader& reader, TaskId task,
                                      const CaptureSnapshot& shot) {
        const std::vector<std::byte> bytes = encode_capture(shot);
        std::uint64_t generation = 0;
        EXPECT_TRUE(pump_until(runtime, [&] {
            const SubmitResult r = runtime.submit(task, bytes);
            generation = r.generation;
            return r.accepted();
        }));
        EXPECT_TRUE(pump_until(runtime, [&] {
            return runtime.stats(task).newest_generation >= generation ||
                   !runtime.stats(task).workload_error.empty();
        }));
        EXPECT_EQ(runtime.stats(task).workload_error, "");
        auto lease = runtime.acquire(task);
        EXPECT_TRUE(lease);
        if (!lease) {
            return {};
        }
        EXPECT_EQ(lease->generation, generation);
        std::uint64_t value = 0;
        auto px = read_back(reader, *lease, value);
        runtime.release(*lease, value);
        return px;
    }

    static CaptureSnapshot shot_of(const std::vector<CaptureInstance>& instances) {
        CaptureSnapshot shot;
        shot.camera.fov_y = 1.0f;
        shot.camera.z_near = 0.1f;
        shot.camera.z_far = 50.0f;
        shot.camera.view = look_at({0, 0.3f, 4}, {0, 0.3f, 0}, {0, 1, 0});
        shot.instances = instances;
        return shot;
    }

    // Texels whose red, green or blue channel is clearly the largest: what each material shows.
    struct Dominant {
        std::size_t red = 0, green = 0, blue = 0;
    };
    static Dominant dominant(const std::vector<std::uint8_t>& px) {
        Dominant d;
        for (std::size_t i = 0; i + 3 < px.size(); i += 4) {
            const int r = px[i], g = px[i + 1], b = px[i + 2];
            d.red += r > g + 40 && r > b + 40;
            d.green += g > r + 40 && g > b + 40;
            d.blue += b > r + 40 && b > g + 40;
        }
        return d;
    }

    static std::size_t differing(const std::vector<std::uint8_t>& a,
                                 const std::vector<std::uint8_t>& b) {
        std::size_t n = 0;
        for (std::size_t i = 0; i + 3 < std::min(a.size(), b.size()); i += 4) {
            n += std::memcmp(&a[i], &b[i], 4) != 0;
        }
        return n + (a.size() != b.size() ? 1 : 0);
    }
};

TEST_F(CaptureTaskTest, ArraysOnAWorkerEqualTheGltfLoadedEquivalentPixelForPixel) {
    const ArrayScene arrays = make_array_scene();
    SceneBuilder builder;
    const auto folder = temp_folder("capture-task");
    const GltfContents file =
        load_gltf(write_test_gltf(folder, GltfForm::ExternalBuffer).string(), builder);
    const auto gltf = builder.build();

    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_view_w, k_view_h);
    const TaskId from_arrays = capture_task(*runtime, arrays.scene, "arrays", "worker:0");
    const TaskId from_gltf = capture_task(*runtime, gltf, "gltf", "worker:0");
    EXPECT_NE(runtime->stats(from_arrays).transfer_path, TransferPath::SameDevice);

    CaptureSnapshot shot = shot_of(arrays.instances);
    shot.camera = file.cameras.at(0).camera; // the file's camera for both
    const auto a = capture(*runtime, *reader, from_arrays, shot);
    shot.instances = file.instances;
    const auto g = capture(*runtime, *reader, from_gltf, shot);
    ASSERT_EQ(a.size(), std::size_t{k_view_w} * k_view_h * 4);
    EXPECT_EQ(differing(a, g), 0u);
    // Both primitives of "panels" and the computed normals' triangle are drawn.
    const Dominant d = dominant(a);
    EXPECT_GT(d.red, 200u);
    EXPECT_GT(d.green, 200u);
    EXPECT_GT(d.blue, 20u);
}

TEST_F(CaptureTaskTest, AWorkersCaptureEqualsThePrimarysAndIndexWidthsAgree) {
    const ArrayScene s16 = make_array_scene(false);
    const ArrayScene s32 = make_array_scene(true);
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_view_w, k_view_h);
    const TaskId worker = capture_task(*runtime, s16.scene, "worker", "worker:0");
    const TaskId primary = capture_task(*runtime, s16.scene, "primary", "primary");
    const TaskId wide = capture_task(*runtime, s32.scene, "wide", "worker:0");
    EXPECT_NE(runtime->stats(worker).transfer_path, TransferPath::SameDevice);
    EXPECT_EQ(runtime->stats(primary).transfer_path, TransferPath::SameDevice);

    for (const float x : {0.0f, 0.7f}) {
        CaptureSnapshot shot = shot_of(s16.instances);
        shot.camera.view = look_at({x, 0.3f, 4}, {0, 0.3f, 0}, {0, 1, 0});
        shot.instances.push_back({MeshId{1}, translation(-1.2f, -1.6f, 0.2f), {}});
        const auto on_worker = capture(*runtime, *reader, worker, shot);
        const auto on_primary = capture(*runtime, *reader, primary, shot);
        const auto with_32 = capture(*runtime, *reader, wide, shot);
        EXPECT_EQ(differing(on_worker, on_primary), 0u) << x;
        EXPECT_EQ(differing(on_worker, with_32), 0u) << x;
        EXPECT_GT(dominant(on_worker).green, 200u);
    }
    // The runtime times public capture tasks as it times any workload: one GPU time a capture.
    for (const TaskId t : {worker, primary, wide}) {
        EXPECT_TRUE(pump_until(*runtime, [&] { return runtime->stats(t).gpu_us.count >= 2; }));
        const TaskStats s = runtime->stats(t);
        EXPECT_TRUE(s.gpu_timed);
        EXPECT_EQ(s.gpu_us.count, 2u);
        EXPECT_GT(s.gpu_us.p50_us, 0.0);
        ASSERT_EQ(s.devices.size(), 1u);
        EXPECT_EQ(s.devices[0].gpu_us.count, 2u);
    }
}

TEST_F(CaptureTaskTest, TheTagFilterAndAnOrthographicCameraDrawWhatTheySay) {
    const ArrayScene s = make_array_scene();
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_view_w, k_view_h);
    const TaskId task = capture_task(*runtime, s.scene, "tags", "worker:0");

    CaptureSnapshot tagged = shot_of(
        {{MeshId{0}, k_identity, {"walls"}}, {MeshId{1}, translation(0, -1.5f, 0.3f), {"props"}}});
    tagged.tag_filter = {"props"};
    CaptureSnapshot only_props = shot_of({tagged.instances[1]});
    const auto filtered = capture(*runtime, *reader, task, tagged);
    const auto props = capture(*runtime, *reader, task, only_props);
    EXPECT_EQ(differing(filtered, props), 0u);
    EXPECT_EQ(dominant(filtered).red, 0u);
    EXPECT_GT(dominant(filtered).blue, 20u);

    CaptureSnapshot ortho = shot_of(s.instances);
    ortho.camera.projection = Projection::Orthographic;
    ortho.camera.half_height = 3.0f; // the whole scene, smaller than in perspective
    const auto o = capture(*runtime, *reader, task, ortho);
    const auto p = capture(*runtime, *reader, task, shot_of(s.instances));
    EXPECT_GT(differing(o, p), 100u);
    EXPECT_GT(dominant(o).red, 50u);
    EXPECT_LT(dominant(o).red, dominant(p).red);
}

// A snapshot that cannot be drawn is refused by submit() with its sentence and changes
// nothing: the next good snapshot draws exactly what the same snapshot drew before.
TEST_F(CaptureTaskTest, ASnapshotThatCannotBeDrawnIsRefusedWithItsSentence) {
    const ArrayScene s = make_array_scene();
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_view_w, k_view_h);
    for (const bool garbage : {false, true}) {
        const TaskId task =
            capture_task(*runtime, s.scene, garbage ? "garbage" : "unknown mesh", "worker:0");
        const auto before = capture(*runtime, *reader, task, shot_of(s.instances));
        CaptureSnapshot shot = shot_of(s.instances);
        shot.instances.push_back({MeshId{9}, k_identity, {}});
        std::vector<std::byte> bytes = encode_capture(shot);
        if (garbage) {
            bytes.resize(10);
        }
        const SubmitResult r = runtime->submit(task, bytes);
        EXPECT_EQ(r.status, SubmitStatus::Failed);
        EXPECT_EQ(r.error, TaskError::BadBytes);
        if (garbage) {
            EXPECT_NE(r.reason.find("Capture task 'garbage' was submitted 10 bytes that are not "
                                    "a snapshot (the header is cut short"),
                      std::string::npos)
                << r.reason;
        } else {
            EXPECT_NE(r.reason.find("Capture task 'unknown mesh' cannot draw its snapshot: "
                                    "instance 2 names mesh 9, but the task's scene has 2 mesh(es)"),
                      std::string::npos)
                << r.reason;
        }
        const auto after = capture(*runtime, *reader, task, shot_of(s.instances));
        EXPECT_EQ(differing(before, after), 0u);
        const TaskStats stats = runtime->stats(task);
        EXPECT_EQ(stats.accepted, 2u);
        EXPECT_EQ(stats.failed, 1u);
        EXPECT_EQ(stats.newest_generation, 2u) << "the refused snapshot took no generation";
        EXPECT_TRUE(stats.workload_error.empty()) << stats.workload_error;
    }
    // A factory outside a runtime, and no scene at all, are refused too.
    EXPECT_THROW((void)capture_workload(nullptr), Error);
    WorkerContext context;
    EXPECT_THROW((void)capture_workload(s.scene)(context), Error);
}

} // namespace
} // namespace tandem::test
