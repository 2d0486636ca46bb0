// Inputs of a run: every bad input (broken or truncated glTF, missing buffer or image, unknown
// camera or surface, zero or absurd size, unknown placement) is refused with a message before
// any GPU work; good inputs give tasks ready to snapshot. Also the snapshot byte codec.
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "gltf_writer.hpp"
#include "scene/demo_scene.hpp"
#include "scene/run_inputs.hpp"
#include "scene/snapshot_codec.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

using detail::RunRequest;

std::string refusal(const RunRequest& r) {
    try {
        (void)detail::prepare_run(r);
    } catch (const Error& e) {
        return e.what();
    }
    return "(accepted)";
}

std::filesystem::path tasks_file(const std::filesystem::path& dir, const std::string& json) {
    static int count = 0;
    const auto path = dir / ("tasks" + std::to_string(count++) + ".json");
    std::ofstream(path) << json;
    return path;
}

TEST(RunInputs, DemoRunsWithNoArguments) {
    const detail::RunInputs in = detail::prepare_run({});
    EXPECT_TRUE(in.demo);
    ASSERT_EQ(in.prepared.size(), 3u);
    EXPECT_EQ(in.width, 1280u);
    for (std::size_t i = 0; i < in.prepared.size(); ++i) {
        // The demo's captures run on a worker (the tasks file's default), not "auto".
        EXPECT_EQ(in.prepared[i].spec.placement.kind, detail::PlacementKind::Worker);
        EXPECT_EQ(detail::to_string(in.prepared[i].spec.placement), "worker");
        EXPECT_TRUE(in.prepared[i].surface_node.has_value());
        const auto snap = detail::task_snapshot(in, i);
        EXPECT_FALSE(snap.instances.empty());
        for (const auto& inst : snap.instances) {
            EXPECT_FALSE(inst.surface.has_value()) << "tasks never show other outputs";
        }
    }
    const std::vector<std::optional<std::uint32_t>> shown = {0u, std::nullopt, 1u};
    const auto main = detail::main_snapshot(in, shown);
    std::size_t bound = 0;
    for (const auto& inst : main.instances) {
        bound += inst.surface.has_value() ? 1 : 0;
    }
    EXPECT_EQ(bound, 2u);
}

TEST(RunInputs, ContentKeysNameWhatEachTaskDraws) {
    const detail::RunInputs a = detail::prepare_run({});
    const detail::RunInputs b = detail::prepare_run({});
    RunRequest crowded;
    crowded.demo_crowd = 3;
    const detail::RunInputs c = detail::prepare_run(crowded);
    EXPECT_EQ(a.scene_name, "demo");
    EXPECT_EQ(c.scene_name, "demo+3");
    for (std::size_t i = 0; i < a.prepared.size(); ++i) {
        const std::string key = detail::task_content_key(a, i);
        EXPECT_EQ(key.rfind(a.prepared[i].spec.name + "@demo#", 0), 0u) << key;
        EXPECT_EQ(key, detail::task_content_key(b, i)) << "the same inputs, the same key";
        EXPECT_NE(key, detail::task_content_key(c, i)) << "more spheres, other work";
        for (std::size_t j = 0; j < i; ++j) {
            EXPECT_NE(key, detail::task_content_key(a, j));
        }
    }
    // Another size is other work, even for the same camera and scene.
    detail::RunInputs resized = detail::prepare_run({});
    resized.prepared[0].spec.width *= 2;
    EXPECT_NE(detail::task_content_key(resized, 0), detail::task_content_key(a, 0));
    EXPECT_GT(detail::scene_triangles(a.scene), 0u);
    EXPECT_GT(detail::scene_triangles(c.scene), detail::scene_triangles(a.scene));
}

TEST(RunInputs, UserSceneWithoutCamerasOrTasksGetsFittedDefaults) {
    const auto dir = temp_folder("run-fitted");
    TestGltf g = make_test_gltf();
    g.doc.erase("cameras");
    g.doc["nodes"][2].erase("camera");
    RunRequest r;
    r.scene_path = write_test_gltf(dir, GltfForm::Binary, g).string();
    RunRequest unplaced = r;
    for (const auto& p : detail::prepare_run(unplaced).prepared) {
        EXPECT_EQ(p.spec.placement.kind, detail::PlacementKind::Worker) << p.spec.name;
    }
    r.placement = "primary";
    const detail::RunInputs in = detail::prepare_run(r);
    ASSERT_EQ(in.prepared.size(), 2u);
    EXPECT_EQ(in.prepared[0].spec.placement.kind, detail::PlacementKind::Primary);
    EXPECT_EQ(in.scene.cameras()[in.main_camera].name, detail::k_fitted_main_camera);
}

TEST(RunInputs, EveryBadInputIsNamed) {
    const auto dir = temp_folder("run-bad");
    const auto scene = write_test_gltf(dir / "ok", GltfForm::ExternalBuffer);
    std::filesystem::create_directories(dir / "broken");
    std::ofstream(dir / "broken" / "scene.gltf") << "{\"asset\": {\"version\": \"2.0\"";
    const auto truncated = write_test_gltf(dir / "truncated", GltfForm::Binary);
    std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 2);
    const auto no_buffer = write_test_gltf(dir / "nobin", GltfForm::ExternalBuffer);
    std::filesystem::remove(dir / "nobin" / "scene.bin");
    const auto no_image = write_test_gltf(dir / "noimg", GltfForm::ExternalBuffer);
    std::filesystem::remove(dir / "noimg" / "green.png");

    struct Case {
        RunRequest request;
        std::string expected;
    };
    auto with_tasks = [&](const std::string& json) {
        RunRequest r;
        r.scene_path = scene.string();
        r.tasks_path = tasks_file(dir, json).string();
        return r;
    };
    const std::vector<Case> cases = {
        {{(dir / "broken" / "scene.gltf").string()}, "cannot be loaded"},
        {{truncated.string()}, "cannot be loaded"},
        {{no_buffer.string()}, "'scene.bin': no such file"},
        {{no_image.string()}, "'green.png') could not be loaded"},
        {{(dir / "absent.gltf").string()}, "Cannot open scene file"},
        {with_tasks(R"({"tasks": [{"name": "t", "camera": "nope", "resolution": "8x8",
                        "rate": 5}]})"),
         "/tasks/0/camera: the scene has no camera 'nope'"},
        {with_tasks(R"({"tasks": [{"name": "t", "camera": "cam", "resolution": "8x8",
                        "rate": 5, "surface": "wall"}]})"),
         "/tasks/0/surface: the scene has no node 'wall'"},
        {with_tasks(R"({"tasks": [{"name": "t", "camera": "cam", "resolution": "0x0",
                        "rate": 5}]})"),
         "/tasks/0/resolution"},
        {with_tasks(R"({"tasks": [{"name": "t", "camera": "cam", "resolution": "99999x99999",
                        "rate": 5}]})"),
         "/tasks/0/resolution"},
        {with_tasks(R"({"tasks": [{"name": "t", "camera": "cam", "resolution": "8x8",
                        "rate": 5, "placement": "elsewhere"}]})"),
         "/tasks/0/placement: 'elsewhere' is not a placement"},
        {{"", "", "0x0"}, "--size '0x0' is not a usable size"},
        {{"", "", "100000x100000"}, "--size '100000x100000'"},
        {{"", "", "big"}, "--size 'big'"},
        {{"", "", "1280x720", "sideways"}, "--placement 'sideways' is not a placement"},
        {{"", (dir / "no-tasks.json").string()}, "Cannot open tasks file"},
    };
    for (const Case& c : cases) {
        const std::string message = refusal(c.request);
        EXPECT_NE(message.find(c.expected), std::string::npos)
            << "expected '" << c.expected << "' in: " << message;
    }
}

TEST(SnapshotCodec, RoundTripsAndRefusesBadBytes) {
    const detail::RunInputs in = detail::prepare_run({});
    std::vector<std::optional<std::uint32_t>> shown = {0u, 1u, 2u};
    const detail::FrameSnapshot s = detail::main_snapshot(in, shown);
    const auto bytes = detail::encode_snapshot(s);
    const auto back = detail::decode_snapshot(bytes);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(detail::encode_snapshot(*back), bytes);
    ASSERT_EQ(back->instances.size(), s.instances.size());
    EXPECT_EQ(back->instances[3].surface, s.instances[3].surface);
    detail::SnapshotRefusal why;
    auto cut = bytes;
    cut.pop_back();
    EXPECT_FALSE(detail::decode_snapshot(cut, &why).has_value());
    EXPECT_STREQ(why.reason, "instance count does not match the bytes that follow");
    EXPECT_EQ(why.byte, 196u); // the count follows the magic, camera, light and clear colour
    auto wrong = bytes;
    wrong[0] = std::byte{0};
    EXPECT_FALSE(detail::decode_snapshot(wrong, &why).has_value());
    EXPECT_EQ(why.byte, 0u);
    EXPECT_NE(std::string(why.reason).find("not a Tandem snapshot"), std::string::npos);
    EXPECT_FALSE(detail::decode_snapshot({}).has_value());
    // A surface below -1 (the one "none") is a number out of range: refused, naming its byte.
    auto surface = bytes;
    const std::int32_t bad = -7;
    const std::size_t instance_2 = 200 + 2 * 72;
    std::memcpy(surface.data() + instance_2 + 4, &bad, 4);
    EXPECT_FALSE(detail::decode_snapshot(surface, &why).has_value());
    EXPECT_STREQ(why.reason, "an instance's surface is out of range");
    EXPECT_EQ(why.byte, instance_2 + 4);
    // A count that would need more bytes than there are.
    auto count = bytes;
    const std::uint32_t huge = 0xffffffffu;
    std::memcpy(count.data() + 196, &huge, 4);
    EXPECT_FALSE(detail::decode_snapshot(count, &why).has_value());
    EXPECT_EQ(why.byte, 196u);
}

} // namespace
} // namespace tandem::test
