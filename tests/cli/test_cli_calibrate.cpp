// `tandem calibrate --quick` on lavapipe (three logical devices) writes a profile into the XDG
// cache that describes every adapter and ordered pair, and `tandem run --placement auto
// --explain` then uses it: the explanations are printed and the report's scheduler section names
// the profile and carries the decisions. A profile of other devices is refused with the reason
// (the run falls back to measured timings and says so); manual placements ignore the profile.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "run_command.hpp"

namespace tandem::test {
namespace {

const std::string k_tandem = TANDEM_CLI_PATH;

std::filesystem::path temp_folder(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("tandem-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

struct Calibrated {
    CommandResult result;
    std::filesystem::path cache;
    std::filesystem::path profile;
    nlohmann::json json;
};

const Calibrated& calibrated() {
    static Calibrated c = [] {
        Calibrated out;
        out.cache = temp_folder("cli-calibrate-cache");
        out.result = run_command("XDG_CACHE_HOME=" + out.cache.string() +
                                 " TANDEM_VIRTUAL_DEVICES=3 " + k_tandem + " calibrate --quick");
        out.profile = out.cache / "tandem" / "profile.json";
        if (std::filesystem::exists(out.profile)) {
            out.json = nlohmann::json::parse(std::ifstream(out.profile));
        }
        return out;
    }();
    return c;
}

CommandResult run_with(const std::filesystem::path& cache, const std::string& args,
                       const std::filesystem::path& out) {
    return run_command("XDG_CACHE_HOME=" + cache.string() + " TANDEM_VIRTUAL_DEVICES=3 " +
                       k_tandem + " run --size 160x90 --frames 12 --fps 0 --png-every 0 --out " +
                       out.string() + " " + args);
}

nlohmann::json report_of(const std::filesystem::path& out) {
    return nlohmann::json::parse(std::ifstream(out / "report.json"));
}

TEST(CliCalibrate, QuickWritesAProfileOfEveryAdapterAndPair) {
    const Calibrated& c = calibrated();
    ASSERT_EQ(c.result.exit_code, 0) << c.result.err;
    ASSERT_TRUE(std::filesystem::exists(c.profile)) << c.result.out;
    EXPECT_NE(c.result.out.find("wrote " + c.profile.string()), std::string::npos) << c.result.out;
    EXPECT_EQ(c.json["schema_version"], 1);
    ASSERT_EQ(c.json["devices"].size(), 3u);
    for (const auto& d : c.json["devices"]) {
        // Two pattern sizes and six captures (three sizes, two triangle counts), then the demo's
        // three capture tasks, each named by its content key.
        ASSERT_EQ(d["workloads"].size(), 11u) << d.dump();
        for (const auto& w : d["workloads"]) {
            EXPECT_GT(w["ms"].get<double>(), 0.0) << w.dump();
        }
        const std::vector<std::string> tasks = {"security@demo#", "mirror@demo#", "minimap@demo#"};
        for (std::size_t i = 0; i < 11; ++i) {
            const auto& w = d["workloads"][i];
            if (i < 8) {
                EXPECT_FALSE(w.contains("content")) << w.dump();
            } else {
                EXPECT_EQ(w["content"].get<std::string>().rfind(tasks[i - 8], 0), 0u) << w.dump();
            }
        }
        EXPECT_GT(d["prepare_us"].get<double>(), 0.0);
        EXPECT_GT(d["reintegrate"]["gbps"].get<double>(), 0.0);
        const std::string timing = d["timing"];
        EXPECT_TRUE(timing == "gpu-timestamps" || timing == "cpu-wall") << timing;
    }
    ASSERT_EQ(c.json["pairs"].size(), 6u) << "every ordered pair of three adapters";
    for (const auto& p : c.json["pairs"]) {
        EXPECT_FALSE(p["paths"].empty()) << p.dump();
        for (const auto& path : p["paths"]) {
            EXPECT_GT(path["gbps"].get<double>(), 0.0) << p.dump();
        }
    }
}

TEST(CliCalibrate, NoTasksMeasuresOnlyTheReferencesAndTheRunPredictsFromThem) {
    const auto dir = temp_folder("cli-calibrate-no-tasks");
    const auto r = run_command("TANDEM_VIRTUAL_DEVICES=2 XDG_CACHE_HOME=" + dir.string() + " " +
                               k_tandem + " calibrate --quick --no-tasks --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& d : nlohmann::json::parse(r.out)["devices"]) {
        EXPECT_EQ(d["workloads"].size(), 8u) << d.dump();
    }
    const auto out = temp_folder("cli-calibrate-no-tasks-run");
    const auto run =
        run_command("XDG_CACHE_HOME=" + dir.string() + " TANDEM_VIRTUAL_DEVICES=2 " + k_tandem +
                    " run --size 160x90 --frames 2 --fps 0 --png-every 0 "
                    "--placement auto --out " +
                    out.string());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    for (const auto& t : report_of(out)["scheduler"]["decisions"][0]["tasks"]) {
        for (const auto& d : t["devices"]) {
            EXPECT_EQ(d["execute"]["calibrated"], "reference") << d.dump();
        }
    }
    // A scene to measure, yet no tasks: refused before any device opens.
    const auto bad = run_command(k_tandem + " calibrate --no-tasks --demo-crowd 5");
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("--no-tasks"), std::string::npos) << bad.err;
}

TEST(CliCalibrate, JsonPrintsTheProfileAndOutOverridesThePath) {
    const auto dir = temp_folder("cli-calibrate-out");
    const auto file = dir / "mine.json";
    const auto r = run_command("TANDEM_VIRTUAL_DEVICES=3 XDG_CACHE_HOME=" + dir.string() + " " +
                               k_tandem + " calibrate --quick --json --out " + file.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto printed = nlohmann::json::parse(r.out);
    const auto written = nlohmann::json::parse(std::ifstream(file));
    EXPECT_EQ(printed, written);
    EXPECT_FALSE(std::filesystem::exists(dir / "tandem" / "profile.json"));
}

TEST(CliCalibrate, RunAutoExplainUsesTheProfile) {
    const Calibrated& c = calibrated();
    ASSERT_EQ(c.result.exit_code, 0) << c.result.err;
    const auto out = temp_folder("cli-calibrate-run");
    const auto r = run_with(c.cache, "--placement auto --explain", out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("placement decision "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("why: "), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("profile"), std::string::npos) << "no complaint about it: " << r.err;
    const auto report = report_of(out);
    const auto& sched = report["scheduler"];
    EXPECT_EQ(sched["profile"], c.profile.string());
    ASSERT_GE(sched["decisions"].size(), 1u);
    // The first kept decision is the one after the three tasks were registered.
    EXPECT_GE(sched["decisions"][0]["decision"], 1);
    EXPECT_EQ(sched["decisions"].back()["decision"], sched["decisions_total"]);
    for (const auto& d : sched["decisions"]) {
        ASSERT_EQ(d["tasks"].size(), 3u);
        for (const auto& t : d["tasks"]) {
            EXPECT_FALSE(t["reason"].get<std::string>().empty());
        }
    }
    // Before any measurement, every task is predicted from its own calibration.
    for (const auto& t : sched["decisions"][0]["tasks"]) {
        for (const auto& d : t["devices"]) {
            EXPECT_EQ(d["execute"]["source"], "profile") << d.dump();
            EXPECT_EQ(d["execute"]["calibrated"], "task") << d.dump();
            EXPECT_GT(d["execute"]["reference_ms"].get<double>(), 0.0) << d.dump();
        }
    }
    for (const auto& t : report["tasks"]) {
        EXPECT_GT(t["ready"].get<int>(), 0) << t["name"];
        const auto& f = sched["final"][t["name"].get<std::string>()];
        EXPECT_EQ(f["decided_by"], "scheduler");
        EXPECT_EQ(f["adapter"], t["device"]["index"]);
    }
}

TEST(CliCalibrate, AProfileOfOtherDevicesIsRefusedWithTheReason) {
    const Calibrated& c = calibrated();
    ASSERT_EQ(c.result.exit_code, 0) << c.result.err;
    const auto dir = temp_folder("cli-calibrate-mismatch");
    nlohmann::json other = c.json;
    other["devices"][1]["driver_version"] = "0.0.0-other";
    const auto file = dir / "other.json";
    std::ofstream(file) << other.dump(2);
    const auto r = run_with(dir, "--placement auto --profile " + file.string(), dir / "out");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("does not match"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("driver"), std::string::npos) << r.err;
    const auto report = report_of(dir / "out");
    EXPECT_TRUE(report["scheduler"]["profile"].is_null());
    EXPECT_NE(report["scheduler"]["profile_note"].get<std::string>().find("does not match"),
              std::string::npos);
}

TEST(CliCalibrate, ManualPlacementsIgnoreTheProfile) {
    const Calibrated& c = calibrated();
    ASSERT_EQ(c.result.exit_code, 0) << c.result.err;
    const auto out = temp_folder("cli-calibrate-manual");
    const auto r = run_with(c.cache, "--placement primary --explain", out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto report = report_of(out);
    for (const auto& t : report["tasks"]) {
        EXPECT_EQ(t["on_primary"], true) << t["name"];
        EXPECT_EQ(report["scheduler"]["final"][t["name"].get<std::string>()]["decided_by"],
                  "manual");
    }
    EXPECT_EQ(report["scheduler"]["decisions_changed"], 1) << "only the first";
}

} // namespace
} // namespace tandem::test
