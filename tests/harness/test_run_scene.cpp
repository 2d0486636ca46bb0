// The harness's CPU-side facades (no GPU): the run scene and its tasks, the demo's tasks
// document, and the report pieces the tools share.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/stats.hpp"
#include "harness/demo_tasks.hpp"
#include "harness/run_report.hpp"
#include "harness/run_scene.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

TEST(RunScene, TheDemoHasTheDemoTasksWithStableContentKeys) {
    harness::RunSceneRequest request;
    request.size = "320x200";
    const harness::RunScene a(request);
    const harness::RunScene b(request);
    EXPECT_TRUE(a.demo());
    EXPECT_EQ(a.width(), 320u);
    EXPECT_EQ(a.height(), 200u);
    const std::vector<std::string> names = harness::demo_task_names();
    ASSERT_EQ(a.tasks().size(), names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(a.tasks()[i].name, names[i]);
        EXPECT_FALSE(a.tasks()[i].content_key.empty());
        EXPECT_EQ(a.tasks()[i].content_key, b.tasks()[i].content_key) << names[i];
        EXPECT_EQ(a.task_snapshot(i), b.task_snapshot(i)) << names[i];
    }
    EXPECT_GT(a.triangles(), 0u);
}

TEST(RunScene, APlacementOverrideReachesEveryTask) {
    harness::RunSceneRequest request;
    request.placement = "auto";
    const harness::RunScene scene(request);
    for (const harness::RunTaskInfo& t : scene.tasks()) {
        EXPECT_EQ(t.placement, Placement::automatic());
        EXPECT_TRUE(t.automatic);
    }
}

TEST(RunScene, RefusesABadSizeBeforeAnyDevice) {
    harness::RunSceneRequest request;
    request.size = "0x0";
    EXPECT_THROW(harness::RunScene{request}, Error);
}

TEST(DemoTasks, TheDocumentPlacesEachTaskAsGiven) {
    const std::vector<std::string> names = harness::demo_task_names();
    std::vector<std::string> placements;
    for (std::size_t i = 0; i < names.size(); ++i) {
        placements.push_back("worker:" + std::to_string(i));
    }
    const auto doc = harness::demo_tasks_document(placements);
    ASSERT_EQ(doc.at("tasks").size(), names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(doc["tasks"][i]["name"], names[i]);
        EXPECT_EQ(doc["tasks"][i]["placement"], placements[i]);
    }
    placements.pop_back();
    EXPECT_THROW((void)harness::demo_tasks_document(placements), Error);
}

TEST(RunReport, FileStemsKeepOnlySafeCharacters) {
    EXPECT_EQ(harness::file_stem("mirror"), "mirror");
    EXPECT_EQ(harness::file_stem("a b/c.d-e_f"), "a_b_c_d-e_f");
    EXPECT_EQ(harness::file_stem(""), "task");
}

TEST(RunReport, FrameTimesAreNearestRankPercentiles) {
    const auto j = harness::frame_time_json({4.0, 1.0, 3.0, 2.0}, "test");
    EXPECT_EQ(j["n"], 4);
    EXPECT_DOUBLE_EQ(j["p50"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(j["p99"].get<double>(), 4.0);
    EXPECT_DOUBLE_EQ(j["mean"].get<double>(), 2.5);
    EXPECT_EQ(j["source"], "test");
    EXPECT_EQ(harness::frame_time_json({}, "none")["n"], 0);
    EXPECT_DOUBLE_EQ(detail::percentile({5.0, 1.0, 3.0}, 0.5), 3.0);
    EXPECT_EQ(harness::fixed(12.3456, 1), "12.3");
}

} // namespace
} // namespace tandem::test
