// `tandem run` end to end: a short run of the built-in demo writes its PNGs and a report whose
// tasks all delivered; each task's PNG (its leased image in the last frame) equals the same
// task camera rendered on the primary for the snapshot of the generation the lease reported,
// and the last main view PNG equals the primary's composition of those outputs on their
// surfaces. Placements: worker, primary, auto without a profile (measured timings only: the tasks
// stay on the primary, and the run says why) and auto with a profile that favours the workers.
// Bad input is refused with its message, exit 1, and before any device is opened
// (the runs see no Vulkan driver at all); test_cli_usage has the numbers refused as bad usage.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <stb_image.h>

#include "gltf_writer.hpp"
#include "render/headless.hpp"
#include "render/mesh_cache.hpp"
#include "run_command.hpp"
#include "run_refusal.hpp"
#include "scene/run_inputs.hpp"
#include "sched/profile.hpp"
#include "sched_fixture.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

const std::string k_tandem = TANDEM_CLI_PATH;
constexpr std::uint32_t k_width = 320;
constexpr std::uint32_t k_height = 180;

struct Png {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::vector<std::uint8_t> rgba;
};

Png load_png(const std::string& path) {
    int w = 0;
    int h = 0;
    int n = 0;
    stbi_uc* data = stbi_load(path.c_str(), &w, &h, &n, 4);
    Png png;
    if (data != nullptr) {
        png.width = static_cast<std::uint32_t>(w);
        png.height = static_cast<std::uint32_t>(h);
        png.rgba.assign(data, data + static_cast<std::size_t>(w) * h * 4);
        stbi_image_free(data);
    }
    return png;
}

struct DemoRun {
    CommandResult result;
    nlohmann::json report;
    std::filesystem::path out;
};

// "auto-profile": auto placement with a profile in the cache that makes the primary far slower
// than the workers, so the scheduler puts the tasks on workers (and may move them between the
// two as measurements come in). The three adapters are openings of lavapipe, between which
// moving frees nothing: that run asks for them to be treated as separate devices.
std::string placement_of(const std::string& param) {
    return param == "auto-profile" ? "auto" : param;
}

// One short run per placement, shared by the tests that look at it. `adapters`: the three
// logical devices the run will see.
const DemoRun& demo_run(const std::string& param, const std::vector<DeviceInfo>& adapters) {
    static std::map<std::string, DemoRun> runs;
    auto it = runs.find(param);
    if (it != runs.end()) {
        return it->second;
    }
    DemoRun run;
    run.out = temp_folder("cli-run-" + param);
    // Three logical devices: the primary and two workers (lavapipe opened three times).
    // An empty cache: no calibration profile, so auto placement has measured timings only.
    const auto cache = temp_folder("cli-run-cache-" + param);
    if (param == "auto-profile") {
        std::vector<SyntheticDevice> costs(adapters.size(), SyntheticDevice{1.0});
        costs[0].pattern_256_ms = 1000.0; // the primary (adapter 0)
        auto profile = synthetic_profile(adapters, costs);
        for (auto& pair : profile.pairs) { // the paths the runtime negotiates on lavapipe
            pair.paths.push_back({TransferPath::ZeroCopy, pair.paths[0].link});
            pair.paths.push_back({TransferPath::SharedMemory, pair.paths[0].link});
        }
        detail::save_profile(profile, cache / "tandem" / "profile.json");
    }
    run.result = run_command(
        "XDG_CACHE_HOME=" + cache.string() + " TANDEM_VIRTUAL_DEVICES=3 " + k_tandem +
        " run --size 320x180 --frames 8 --fps 0 --png-every 4 --json"
        " --placement " +
        placement_of(param) + (param == "auto-profile" ? " --openings-are-separate" : "") +
        " --out " + run.out.string());
    if (run.result.exit_code == 0) {
        run.report = nlohmann::json::parse(run.result.out);
    }
    return runs.emplace(param, std::move(run)).first->second;
}

class CliRun : public VulkanTest, public ::testing::WithParamInterface<const char*> {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }

    const DemoRun& demo() {
        std::vector<DeviceInfo> infos;
        for (const auto& a : detail::discover_adapters(instance(), 3)) {
            infos.push_back(a.info);
        }
        return demo_run(GetParam(), infos);
    }
};

TEST_P(CliRun, WritesPngsAndAReportWhereEveryTaskDelivered) {
    const DemoRun& run = demo();
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    for (const char* name : {"main_00000.png", "main_00004.png", "main_00007.png", "report.json"}) {
        EXPECT_TRUE(std::filesystem::exists(run.out / name)) << name;
    }
    const auto on_disk = nlohmann::json::parse(std::ifstream(run.out / "report.json"));
    EXPECT_EQ(on_disk, run.report) << "--json prints the report written to report.json";
    EXPECT_EQ(run.report["frames"], 8);
    const auto& tasks = run.report["tasks"];
    ASSERT_EQ(tasks.size(), 3u) << "the demo's security, mirror and minimap";
    for (const auto& t : tasks) {
        EXPECT_GT(t["ready"].get<int>(), 0) << t["name"];
        EXPECT_GT(t["ready_rate_hz"].get<double>(), 0.0) << t["name"];
        EXPECT_EQ(t["failed"], 0) << t["name"];
        EXPECT_EQ(t["worker_lost"], false) << t["name"];
        EXPECT_TRUE(std::filesystem::exists(t["png"].get<std::string>())) << t["name"];
        EXPECT_FALSE(t["transfer_path"].get<std::string>().empty());
        const auto& l = t["latency_us"]["ready_observed"];
        EXPECT_LE(l["p50_us"].get<double>(), l["p99_us"].get<double>());
        // A stage with no samples has null figures, never a latency of 0.
        for (const auto& [stage, latency] : t["latency_us"].items()) {
            const bool none = latency["count"].get<std::uint64_t>() == 0;
            for (const char* key : {"p50_us", "p90_us", "p99_us", "max_us"}) {
                EXPECT_EQ(latency[key].is_null(), none) << t["name"] << " " << stage << " " << key;
            }
        }
        const std::string param = GetParam();
        if (param == "worker" || param == "auto-profile") {
            EXPECT_EQ(t["on_primary"], false) << "three devices: every task on a worker";
        } else {
            // auto without a profile: no worker's costs are known, so nothing leaves the primary.
            EXPECT_EQ(t["on_primary"], true);
        }
    }
    ASSERT_EQ(run.report["devices"].size(), 3u);
    EXPECT_EQ(run.report["devices"][0]["role"], "primary");
    // Each task's GPU time per capture on its device, where that device has timestamps.
    for (const auto& t : tasks) {
        for (const auto& d : run.report["devices"]) {
            if (d["index"] != t["device"]["index"] || d["busy_ms"].is_null()) {
                continue;
            }
            bool found = false;
            for (const auto& r : t["registrations"]) {
                if (r["adapter"] == d["index"]) {
                    found = true;
                    if (r["ready"] == 0) {
                        // Moved there after its last submission: nothing ran there yet.
                        EXPECT_TRUE(r["gpu_ms_per_update"].is_null()) << r.dump();
                        continue;
                    }
                    ASSERT_TRUE(r["gpu_ms_per_update"].is_number()) << r.dump();
                    const double mean = r["gpu_ms_per_update"].get<double>();
                    EXPECT_GT(mean, 0.0) << r.dump();
                    // The first update apart, and the later ones: the mean lies between them.
                    ASSERT_TRUE(r["gpu_ms_first_update"].is_number()) << r.dump();
                    const double first = r["gpu_ms_first_update"].get<double>();
                    EXPECT_GT(first, 0.0) << r.dump();
                    if (r["gpu_ms_per_later_update"].is_number()) {
                        const double later = r["gpu_ms_per_later_update"].get<double>();
                        EXPECT_GT(later, 0.0) << r.dump();
                        EXPECT_LE(std::min(first, later), mean * (1 + 1e-9)) << r.dump();
                        EXPECT_GE(std::max(first, later), mean * (1 - 1e-9)) << r.dump();
                    } else {
                        EXPECT_DOUBLE_EQ(first, mean) << "one update: it is the first";
                    }
                }
            }
            EXPECT_TRUE(found) << t.dump();
        }
    }
    const auto& sched = run.report["scheduler"];
    ASSERT_TRUE(sched.is_object());
    EXPECT_EQ(sched["profile"].is_null(), std::string(GetParam()) != "auto-profile");
    EXPECT_GE(sched["decisions"].size(), 1u) << "the first decision at least";
    for (const auto& t : tasks) {
        const auto& f = sched["final"][t["name"].get<std::string>()];
        EXPECT_EQ(f["adapter"], t["device"]["index"]);
        EXPECT_EQ(f["decided_by"], placement_of(GetParam()) == "auto" ? "scheduler" : "manual");
    }
    for (const auto& d : sched["decisions"]) {
        // The three adapters are one device, and every decision says how it treated them.
        ASSERT_EQ(d["openings"].size(), 1u) << d.dump();
        EXPECT_EQ(d["openings_are_separate"], std::string(GetParam()) == "auto-profile");
    }
    if (std::string(GetParam()) == "auto") {
        EXPECT_NE(sched["profile_note"].get<std::string>().find("no calibration profile"),
                  std::string::npos);
        EXPECT_NE(run.result.err.find("no calibration profile"), std::string::npos)
            << run.result.err;
    }
}

TEST_P(CliRun, ShownOutputsAreTheLeasedGenerationsOfTheirSnapshots) {
    const DemoRun& run = demo();
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    detail::RunInputs in = detail::prepare_run({"", "", "320x180", placement_of(GetParam())});
    detail::Device& primary = open(0, {true, "reference"});
    detail::MeshCache cache(primary);
    cache.upload(in.scene.shared_assets());
    detail::Renderer renderer(cache, VK_FORMAT_R8G8B8A8_UNORM);

    const auto& tasks = run.report["tasks"];
    ASSERT_EQ(tasks.size(), in.prepared.size());
    std::vector<std::unique_ptr<detail::HeadlessView>> views;
    std::vector<detail::ExternalTexture> external;
    std::vector<std::optional<std::uint32_t>> shown;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const auto& t = tasks[i];
        ASSERT_EQ(t["name"], in.prepared[i].spec.name);
        // Everything accepted on the device the shown output came from was delivered before
        // the last frame, which shows the newest. That is the task's last device, unless the
        // scheduler moved the task after its last submission (nothing accepted there).
        nlohmann::json shown_from;
        nlohmann::json active;
        for (const auto& r : t["registrations"]) {
            if (r["adapter"] == t["shown_adapter"]) {
                shown_from = r;
            }
            if (r["adapter"] == t["device"]["index"]) {
                active = r;
            }
        }
        ASSERT_TRUE(shown_from.is_object()) << t.dump();
        ASSERT_TRUE(active.is_object()) << t.dump();
        EXPECT_EQ(t["shown_generation"], shown_from["accepted"]) << t["name"];
        EXPECT_EQ(t["shown_generation"], shown_from["newest_generation"]) << t["name"];
        if (t["shown_adapter"] != t["device"]["index"]) {
            EXPECT_EQ(active["accepted"], 0) << t.dump();
        } else {
            EXPECT_EQ(t["shown_generation"], t["newest_generation"]) << t["name"];
        }
        in.scene.animate(t["shown_time_s"].get<double>());
        const VkExtent2D extent{in.prepared[i].spec.width, in.prepared[i].spec.height};
        views.push_back(std::make_unique<detail::HeadlessView>(renderer, extent));
        const auto expected = views.back()->render(detail::task_snapshot(in, i));
        const Png png = load_png(t["png"].get<std::string>());
        ASSERT_EQ(png.width, extent.width) << t["name"];
        ASSERT_EQ(png.height, extent.height) << t["name"];
        EXPECT_TRUE(png.rgba == expected)
            << t["name"] << ": the leased image differs from "
            << "the primary's render of generation " << t["shown_generation"];
        external.push_back(views.back()->external());
        shown.emplace_back(static_cast<std::uint32_t>(i));
    }
    in.scene.animate(run.report["main_view"]["last_time_s"].get<double>());
    detail::HeadlessView main(renderer, {k_width, k_height});
    const auto expected = main.render(detail::main_snapshot(in, shown), external);
    const Png png = load_png((run.out / "main_00007.png").string());
    ASSERT_EQ(png.width, k_width);
    ASSERT_EQ(png.height, k_height);
    EXPECT_TRUE(png.rgba == expected)
        << "the last main view differs from the composition of the leased generations";
}

INSTANTIATE_TEST_SUITE_P(Placements, CliRun,
                         ::testing::Values("worker", "primary", "auto", "auto-profile"));

TEST(CliRunScene, AGltfSceneWithoutTasksGetsFittedCaptures) {
    const auto dir = temp_folder("cli-run-gltf");
    const auto scene = write_test_gltf(dir / "scene", GltfForm::Binary);
    const auto trace = dir / "trace.json";
    const CommandResult r = run_command(
        k_tandem + " run --size 160x90 --frames 4 --fps 0 --png-every 0 --json --scene " +
        scene.string() + " --out " + (dir / "out").string() + " --trace " + trace.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto report = nlohmann::json::parse(r.out);
    ASSERT_EQ(report["tasks"].size(), 2u) << "an orbiting camera and a top-down minimap";
    for (const auto& t : report["tasks"]) {
        EXPECT_GT(t["ready"].get<int>(), 0) << t["name"];
        EXPECT_TRUE(std::filesystem::exists(t["png"].get<std::string>())) << t["name"];
    }
    EXPECT_EQ(report["main_view"]["pngs"].size(), 1u) << "--png-every 0: only the last frame";
    EXPECT_TRUE(std::filesystem::exists(dir / "out" / "main_00003.png"));
    const auto events = nlohmann::json::parse(std::ifstream(trace));
    EXPECT_FALSE(events.empty()) << "--trace writes the run's events";
}

TEST(CliRunInput, BadScenesAreRefusedBeforeAnyDevice) {
    const auto dir = temp_folder("cli-run-scenes");
    std::ofstream(dir / "broken.gltf") << "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [";
    expect_refused("--scene " + (dir / "broken.gltf").string(), "cannot be loaded");
    expect_refused("--scene " + (dir / "absent.gltf").string(), "Cannot open scene file");

    const auto no_bin = write_test_gltf(dir / "no-bin", GltfForm::ExternalBuffer);
    std::filesystem::remove(dir / "no-bin" / "scene.bin");
    expect_refused("--scene " + no_bin.string(), "scene.bin");

    const auto no_png = write_test_gltf(dir / "no-png", GltfForm::ExternalBuffer);
    std::filesystem::remove(dir / "no-png" / "green.png");
    expect_refused("--scene " + no_png.string(), "green.png");

    std::ofstream(dir / "v1.gltf") << R"({"asset": {"version": "1.0"}, "scene": "s",
                                          "scenes": {"s": {"nodes": []}}})";
    expect_refused("--scene " + (dir / "v1.gltf").string(),
                   "is a glTF 1.0 file (asset.version \"1.0\"); Tandem reads glTF 2.0 only");
    std::ofstream(dir / "empty.gltf") << R"({"asset": {"version": "2.0"}, "scene": 0,
                                             "scenes": [{"nodes": [0]}], "nodes": [{}]})";
    expect_refused("--scene " + (dir / "empty.gltf").string(), "has nothing to draw");
    // The reproducer that once read past its buffer while decoding the image.
    expect_refused(std::string("--scene ") + TANDEM_FUZZ_CORPUS + "/gltf/gltf-image-overflow.glb",
                   "image 0 reads outside its buffer");
}

TEST(CliRunInput, BadTasksAreRefusedBeforeAnyDevice) {
    const auto dir = temp_folder("cli-run-tasks");
    const auto scene = write_test_gltf(dir / "scene", GltfForm::ExternalBuffer);
    auto tasks = [&](const std::string& name, const std::string& task) {
        std::ofstream(dir / name) << R"({"tasks": [{"name": "a", )" << task << "}]}";
        return "--scene " + scene.string() + " --tasks " + (dir / name).string();
    };
    expect_refused(tasks("camera.json", R"("camera": "nope", "resolution": "8x8", "rate": 1)"),
                   "/tasks/0/camera: the scene has no camera 'nope'");
    expect_refused(tasks("surface.json", R"("camera": "cam", "resolution": "8x8", "rate": 1,
                                            "surface": "nowhere")"),
                   "/tasks/0/surface: the scene has no node 'nowhere'");
    expect_refused(tasks("zero.json", R"("camera": "cam", "resolution": "0x0", "rate": 1)"),
                   "/tasks/0/resolution");
    expect_refused(tasks("huge.json", R"("camera": "cam", "resolution": "100000x100", "rate": 1)"),
                   "/tasks/0/resolution");
    expect_refused("--tasks " + (dir / "absent.json").string(), "absent.json");
    // A number past a double's range is a refusal naming its place, not an internal error.
    expect_refused(tasks("overflow.json", R"("camera": "cam", "resolution": "8x8", "rate": 1e999)"),
                   "/tasks/0/rate: 1e999 is a number out of range");
    expect_refused(std::string("--scene ") + scene.string() + " --tasks " + TANDEM_FUZZ_CORPUS +
                       "/tasks/tasks-number-overflow.json",
                   "is a number out of range");
}

TEST(CliRunInput, BadOptionsAreRefusedBeforeAnyDevice) {
    expect_refused("--size 0x0", "--size '0x0' is not a usable size");
    expect_refused("--size 100000x100000", "is not a usable size");
    expect_refused("--size wide", "is not a usable size");
    expect_refused("--placement warp", "--placement 'warp' is not a placement");
    expect_refused("--fps fast", "--fps 'fast' is not a frame rate");
}

} // namespace
} // namespace tandem::test
