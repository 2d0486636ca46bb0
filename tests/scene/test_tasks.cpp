// Tasks file: a good file parses; every bad input is refused with its path in the file; names
// are checked against the scene before any GPU work.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "scene/demo_scene.hpp"
#include "scene/tasks.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

using detail::parse_tasks;

std::string parse_error(const std::string& json) {
    try {
        (void)parse_tasks(json, "tasks.json");
    } catch (const Error& e) {
        return e.what();
    }
    return "(parsed without error)";
}

std::string one_task(const std::string& fields) {
    return R"({"tasks": [{"name": "cam1", "camera": "security", )" + fields + "}]}";
}

TEST(Tasks, ParsesAGoodFile) {
    const auto t = parse_tasks(R"({
        "main": {"camera": "main"},
        "tasks": [
          {"name": "security", "camera": "security", "resolution": "320x240", "rate": 30,
           "placement": "worker", "surface": "monitor"},
          {"name": "map", "camera": "minimap", "resolution": [128, 64], "rate": 7.5,
           "placement": "device:lavapipe", "tags": ["map"]},
          {"name": "p", "camera": "main", "resolution": "8x8", "rate": 1, "placement": "primary"},
          {"name": "a", "camera": "main", "resolution": "8x8", "rate": 1, "placement": "auto"},
          {"name": "i", "camera": "main", "resolution": "8x8", "rate": 1, "placement": "1"}
        ]})",
                               "tasks.json");
    ASSERT_EQ(t.tasks.size(), 5u);
    EXPECT_EQ(*t.main_camera, "main");
    EXPECT_EQ(t.tasks[0].width, 320u);
    EXPECT_EQ(t.tasks[0].height, 240u);
    EXPECT_EQ(*t.tasks[0].surface, "monitor");
    EXPECT_EQ(t.tasks[1].width, 128u);
    EXPECT_DOUBLE_EQ(t.tasks[1].rate_hz, 7.5);
    EXPECT_EQ(t.tasks[1].placement.kind, detail::PlacementKind::Device);
    EXPECT_EQ(t.tasks[1].placement.device, "lavapipe");
    EXPECT_EQ(t.tasks[1].tags, std::vector<std::string>{"map"});
    EXPECT_EQ(t.tasks[2].placement.kind, detail::PlacementKind::Primary);
    EXPECT_EQ(t.tasks[3].placement.kind, detail::PlacementKind::Auto);
    EXPECT_EQ(t.tasks[4].placement.kind, detail::PlacementKind::Device);
    EXPECT_EQ(t.tasks[4].placement.device, "1");
    const detail::Scene demo = detail::make_demo_scene();
    EXPECT_TRUE(detail::check_tasks(t, demo).empty());
}

TEST(Tasks, NamesEveryProblemWithItsPath) {
    struct Case {
        std::string json;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {"{", "not valid JSON"},
        {"[]", "/: the document must be an object"},
        {"{}", "/tasks: is missing"},
        {one_task(R"("resolution": "0x0", "rate": 30)"), "/tasks/0/resolution: '0x0'"},
        {one_task(R"("resolution": [0, 10], "rate": 30)"), "/tasks/0/resolution: 0x10"},
        {one_task(R"("resolution": "100000x100", "rate": 30)"), "/tasks/0/resolution"},
        {one_task(R"("resolution": [65536, 65536], "rate": 30)"), "is not a usable size"},
        {one_task(R"("resolution": "64x64", "rate": 0)"), "/tasks/0/rate: must be a number"},
        {one_task(R"("resolution": "64x64", "rate": -3)"), "/tasks/0/rate"},
        {one_task(R"("resolution": "64x64", "rate": "fast")"), "/tasks/0/rate"},
        {one_task(R"("resolution": "64x64", "rate": 30, "placement": "gpu7")"),
         "/tasks/0/placement: 'gpu7' is not a placement"},
        {one_task(R"("resolution": "64x64", "rate": 30, "placment": "worker")"),
         "/tasks/0/placment: is not a known key"},
        {one_task(R"("resolution": "64x64", "rate": 30, "tags": "map")"),
         "/tasks/0/tags: must be an array"},
        {R"({"tasks": [{"camera": "c", "resolution": "8x8", "rate": 1}]})",
         "/tasks/0/name: is missing"},
        {R"({"tasks": [{"name": "../x", "camera": "c", "resolution": "8x8", "rate": 1}]})",
         "/tasks/0/name: '../x' must be"},
        {R"({"tasks": [{"name": "a", "camera": "c", "resolution": "8x8", "rate": 1},
                       {"name": "a", "camera": "c", "resolution": "8x8", "rate": 1}]})",
         "/tasks/1/name: 'a' is used by another task"},
    };
    for (const Case& c : cases) {
        const std::string message = parse_error(c.json);
        EXPECT_NE(message.find(c.expected), std::string::npos)
            << "input: " << c.json << "\nmessage: " << message;
        EXPECT_NE(message.find("tasks.json"), std::string::npos) << message;
    }
}

TEST(Tasks, RefusesNumbersOutOfRangeNamingTheirPath) {
    std::string message = parse_error(one_task(R"("resolution": "8x8", "rate": 1e999)"));
    EXPECT_NE(message.find("Tasks file tasks.json has 1 problem:\n  /tasks/0/rate: 1e999 is a "
                           "number out of range (byte "),
              std::string::npos)
        << message;
    message = parse_error(R"({"tasks": [{}, {"resolution": [8, -1e999]}]})");
    EXPECT_NE(message.find("/tasks/1/resolution/1: -1e999 is a number out of range"),
              std::string::npos)
        << message;
    // An integer beyond 64 bits is read as a (finite) double, then refused as a size.
    message = parse_error(one_task(R"("resolution": [99999999999999999999999, 8], "rate": 1)"));
    EXPECT_NE(message.find("/tasks/0/resolution: must be \"WIDTHxHEIGHT\" or [width, height]"),
              std::string::npos)
        << message;
}

// The fuzzer's find: a document that is one number too large for a double; the JSON library
// threw out_of_range, which ended the program ("internal error" in the CLI).
TEST(Tasks, RefusesTheNumberOverflowReproducer) {
    std::ifstream in(std::filesystem::path(TANDEM_FUZZ_CORPUS) / "tasks" /
                     "tasks-number-overflow.json");
    ASSERT_TRUE(in);
    std::stringstream text;
    text << in.rdbuf();
    const std::string message = parse_error(text.str());
    EXPECT_NE(message.find("tasks.json has 1 problem:\n  /: 1105555555E555000000 is a number out "
                           "of range (byte 20)"),
              std::string::npos)
        << message;
}

TEST(Tasks, ReportsAllProblemsAtOnce) {
    const std::string message = parse_error(R"({"tasks": [{"name": "a", "camera": "c",
        "resolution": "0x0", "rate": 0, "placement": "nowhere"}]})");
    EXPECT_NE(message.find("3 problems"), std::string::npos) << message;
}

TEST(Tasks, ChecksNamesAgainstTheScene) {
    const detail::Scene demo = detail::make_demo_scene();
    const auto t = parse_tasks(R"({"main": {"camera": "nope"}, "tasks": [
        {"name": "a", "camera": "no such camera", "resolution": "8x8", "rate": 1,
         "surface": "no such surface", "tags": ["no such tag"]},
        {"name": "b", "camera": "main", "resolution": "8x8", "rate": 1, "surface": "props"}]})",
                               "tasks.json");
    const auto problems = detail::check_tasks(t, demo);
    ASSERT_EQ(problems.size(), 5u);
    EXPECT_NE(problems[0].find("/main/camera: the scene has no camera 'nope'"), std::string::npos);
    EXPECT_NE(problems[1].find("/tasks/0/camera: the scene has no camera 'no such camera'"),
              std::string::npos);
    EXPECT_NE(problems[1].find("security"), std::string::npos) << "lists the cameras there are";
    EXPECT_NE(problems[2].find("/tasks/0/surface: the scene has no node 'no such surface'"),
              std::string::npos);
    EXPECT_NE(problems[3].find("/tasks/0/tags/0: no node carries tag 'no such tag'"),
              std::string::npos);
    EXPECT_NE(problems[4].find("/tasks/1/surface: node 'props' has no mesh"), std::string::npos);
    EXPECT_THROW(detail::require_valid_tasks(t, demo, "tasks.json"), Error);
}

TEST(Tasks, DemoTasksFitTheDemoScene) {
    const detail::Scene demo = detail::make_demo_scene();
    EXPECT_TRUE(detail::check_tasks(detail::demo_tasks(), demo).empty());
}

} // namespace
} // namespace tandem::test
