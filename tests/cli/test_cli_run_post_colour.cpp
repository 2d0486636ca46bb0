// `tandem run --post interpolate --motion engine|colour` end to end on lavapipe (the primary and
// a worker, one device opened twice): with `colour` the task takes the frame's colour alone and
// estimates the motion itself; report.json and the summary say which motion the generated frames
// followed, and both are measured against the true middle frame beside the blend. The frames
// clock makes the figures the same every run. Bad --motion values are refused before any device
// is opened.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "run_refusal.hpp"
#include "temp_folder.hpp"

namespace tandem::test {
namespace {

const std::string k_tandem = TANDEM_CLI_PATH;

struct MotionRun {
    CommandResult result;
    nlohmann::json report;
};

MotionRun post_run(const std::string& motion) {
    MotionRun run;
    const auto out = temp_folder("cli-run-post-motion-" + motion);
    run.result = run_command("TANDEM_VIRTUAL_DEVICES=2 " + k_tandem + " run --post interpolate" +
                             (motion.empty() ? std::string() : " --motion " + motion) +
                             " --size 320x180 --frames 12 --fps 10 --png-every 5 --json --out " +
                             out.string());
    if (run.result.exit_code == 0) {
        run.report = nlohmann::json::parse(run.result.out);
    }
    return run;
}

TEST(CliRunPostMotion, ColourMotionTakesTheColourAloneAndIsMeasuredAgainstTheTruth) {
    const MotionRun run = post_run("colour");
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    const nlohmann::json& post = run.report["post"];
    EXPECT_EQ(post["motion"], "colour");
    EXPECT_EQ(post["inputs"], nlohmann::json::array({"colour"}));
    EXPECT_EQ(post["failed_jobs"], 0);
    const nlohmann::json& q = post["quality"];
    ASSERT_GT(q["samples"].get<int>(), 0);
    EXPECT_TRUE(q["psnr_db"]["mean"].is_number());
    EXPECT_TRUE(q["baseline_psnr_db"]["mean"].is_number());
    EXPECT_NE(run.result.err.find("interpolate (motion from colour alone)"), std::string::npos)
        << run.result.err;
    EXPECT_NE(run.result.err.find("with colour motion"), std::string::npos) << run.result.err;
}

TEST(CliRunPostMotion, TheEngineMotionIsTheDefault) {
    const MotionRun run = post_run("");
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    EXPECT_EQ(run.report["post"]["motion"], "engine");
    EXPECT_EQ(run.report["post"]["inputs"], nlohmann::json::array({"colour", "depth", "motion"}));
    EXPECT_NE(run.result.err.find("interpolate (motion from the engine)"), std::string::npos)
        << run.result.err;
}

TEST(CliRunPostMotion, BadMotionOptionsAreRefusedBeforeAnyDevice) {
    expect_refused("--motion colour", "--motion applies to --post interpolate only");
    expect_refused("--post blur --motion colour", "--motion applies to --post interpolate only");
    expect_refused("--post interpolate --motion optical",
                   "--motion 'optical' is not a source of motion. Use engine");
}

} // namespace
} // namespace tandem::test
