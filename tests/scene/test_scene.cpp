// Scene model, demo scene, fitted defaults and snapshots.
#include <gtest/gtest.h>

#include "gltf_writer.hpp"
#include "scene/demo_scene.hpp"
#include "scene/gltf_loader.hpp"
#include "scene/snapshot.hpp"

namespace tandem::test {
namespace {

bool same(const glm::mat4& a, const glm::mat4& b) {
    for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r) {
            if (a[c][r] != b[c][r]) {
                return false;
            }
        }
    }
    return true;
}

TEST(DemoScene, HasWhatTheDemoPromises) {
    const detail::Scene s = detail::make_demo_scene();
    for (const char* camera : {"main", "security", "mirror", "minimap"}) {
        EXPECT_TRUE(s.find_camera(camera).has_value()) << camera;
    }
    EXPECT_EQ(s.cameras()[*s.find_camera("minimap")].model.projection,
              detail::Projection::Orthographic);
    for (const char* node : {"floor", "monitor", "mirror", "minimap_screen"}) {
        EXPECT_TRUE(s.find_node(node).has_value()) << node;
    }
}

TEST(DemoScene, AnimationIsAPureFunctionOfTime) {
    detail::Scene a = detail::make_demo_scene();
    detail::Scene b = detail::make_demo_scene();
    a.animate(2.0);
    b.animate(7.0);
    b.animate(0.5);
    b.animate(2.0);
    bool moved = false;
    detail::Scene rest = detail::make_demo_scene();
    for (std::size_t i = 0; i < a.nodes().size(); ++i) {
        EXPECT_TRUE(same(a.nodes()[i].world, b.nodes()[i].world)) << a.nodes()[i].name;
        moved = moved || !same(a.nodes()[i].world, rest.nodes()[i].world);
    }
    EXPECT_TRUE(moved) << "something in the demo moves";
}

TEST(Snapshot, CopiesDrawnNodesAndFiltersByTag) {
    detail::Scene s = detail::make_demo_scene();
    const auto map = *s.find_camera("minimap");
    detail::ViewRequest all{map, 1.0f, {}, {}, {}};
    detail::ViewRequest tagged{map, 1.0f, {"map"}, {}, {}};
    const auto everything = detail::snapshot(s, all);
    const auto only_map = detail::snapshot(s, tagged);
    EXPECT_LT(only_map.instances.size(), everything.instances.size());
    EXPECT_GT(only_map.instances.size(), 5u); // floor and props (inherited tag)
    // A surface binding and a hidden node.
    const auto monitor = *s.find_node("monitor");
    detail::ViewRequest with_surface{*s.find_camera("main"), 1.5f, {}, {{monitor, 0}}, {}};
    const auto snap = detail::snapshot(s, with_surface);
    const auto bound = std::count_if(snap.instances.begin(), snap.instances.end(),
                                     [](auto& i) { return i.surface.has_value(); });
    EXPECT_EQ(bound, 1);
    detail::ViewRequest hidden{*s.find_camera("main"), 1.5f, {}, {}, {monitor}};
    EXPECT_EQ(detail::snapshot(s, hidden).instances.size(), snap.instances.size() - 1);
    // Snapshots are values: animating the scene afterwards changes nothing in them.
    const auto before = detail::snapshot(s, all);
    s.animate(3.0);
    const auto after = detail::snapshot(s, all);
    EXPECT_EQ(before.instances.size(), after.instances.size());
    bool differs = false;
    for (std::size_t i = 0; i < before.instances.size(); ++i) {
        differs = differs || !same(before.instances[i].transform, after.instances[i].transform);
    }
    EXPECT_TRUE(differs);
}

TEST(FittedDefaults, SceneWithoutCamerasOrTasksStillRuns) {
    const auto dir = temp_folder("fitted");
    TestGltf g = make_test_gltf();
    g.doc.erase("cameras");
    g.doc["nodes"][2].erase("camera");
    detail::Scene s = detail::load_gltf(write_test_gltf(dir, GltfForm::EmbeddedBuffer, g).string());
    ASSERT_TRUE(s.cameras().empty());
    detail::add_fitted_main_camera(s);
    ASSERT_EQ(s.cameras().size(), 1u);
    const detail::TasksFile tasks = detail::add_default_tasks(s);
    ASSERT_EQ(tasks.tasks.size(), 2u);
    EXPECT_TRUE(detail::check_tasks(tasks, s).empty());
    s.animate(1.0);
    // Every corner of the scene's bounds projects inside each fitted camera's view.
    const detail::Bounds b = s.world_bounds();
    for (const char* name : {detail::k_fitted_main_camera, "tandem.orbit", "tandem.minimap"}) {
        const auto cam = detail::snapshot_camera(s, *s.find_camera(name), 4.0f / 3.0f);
        for (int i = 0; i < 8; ++i) {
            const glm::vec3 corner{(i & 1) ? b.max.x : b.min.x, (i & 2) ? b.max.y : b.min.y,
                                   (i & 4) ? b.max.z : b.min.z};
            const glm::vec4 clip = cam.projection * cam.view * glm::vec4(corner, 1.0f);
            EXPECT_GT(clip.w, 0.0f) << name;
            EXPECT_LE(std::abs(clip.x / clip.w), 1.0f) << name;
            EXPECT_LE(std::abs(clip.y / clip.w), 1.0f) << name;
            EXPECT_GE(clip.z / clip.w, 0.0f) << name;
            EXPECT_LE(clip.z / clip.w, 1.0f) << name;
        }
    }
    EXPECT_EQ(detail::main_camera(s, tasks), *s.find_camera(detail::k_fitted_main_camera));
}

} // namespace
} // namespace tandem::test
