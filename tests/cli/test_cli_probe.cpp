#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace tandem::test {
namespace {

const std::string k_tandem = TANDEM_CLI_PATH;

class CliProbe : public ::testing::TestWithParam<const char*> {};

TEST_P(CliProbe, EveryJobCompletesAndEveryStageIsTimed) {
    auto r = run_command(k_tandem + " probe --mode " + GetParam() +
                         " --jobs 40 --rate 500 --in-flight 2 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["mode"], GetParam());
    EXPECT_EQ(doc["accepted"], 40);
    EXPECT_EQ(doc["completed"], 40);
    EXPECT_EQ(doc["timer_ticks"].get<int>(), doc["accepted"].get<int>() + doc["busy"].get<int>());
    EXPECT_GT(doc["ready_rate_hz"].get<double>(), 0.0);
    for (const char* stage : {"submit", "worker_done", "primary_done", "total"}) {
        const auto& s = doc["latency_us"][stage];
        EXPECT_EQ(s["n"], 40) << stage;
        EXPECT_LE(s["p50"].get<double>(), s["p99"].get<double>()) << stage;
        EXPECT_GE(s["min"].get<double>(), 0.0) << stage;
    }
    if (doc["sync"] == "host-bridge") {
        EXPECT_EQ(doc["latency_us"]["bridge"]["n"], 40);
    }
}

INSTANTIATE_TEST_SUITE_P(Modes, CliProbe, ::testing::Values("signal", "empty", "copy"));

// Each stage ends at a time taken after the one it starts from, on one clock, so none can be
// negative. Many jobs at a high rate with several in flight: a submit can return after the work
// it submitted is done (and seen by another thread), which once made a stage negative. Without
// validation: the layer's work in every call hides that timing on lavapipe.
TEST(CliProbeStages, NoStageIsNegative) {
    for (const char* mode : {"signal", "copy"}) {
        auto r = run_command(k_tandem + " --validation off probe --mode " + mode +
                             " --jobs 400 --rate 4000 --in-flight 4 --json");
        ASSERT_EQ(r.exit_code, 0) << mode << ": " << r.err;
        const auto doc = nlohmann::json::parse(r.out);
        ASSERT_EQ(doc["completed"], 400) << mode;
        for (const char* stage : {"submit", "worker_done", "bridge", "primary_done", "total"}) {
            const auto& s = doc["latency_us"][stage];
            if (s["n"].get<int>() > 0) {
                EXPECT_GE(s["min"].get<double>(), 0.0) << mode << " " << stage << ": " << s;
            }
        }
    }
}

TEST(CliProbeInput, RatesAcceptEitherDecimalMark) {
    for (const char* rate : {"37.5", "37,5"}) {
        auto r = run_command(k_tandem + " probe --mode signal --jobs 3 --rate " + rate + " --json");
        ASSERT_EQ(r.exit_code, 0) << rate << ": " << r.err;
        EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["target_rate_hz"].get<double>(), 37.5);
    }
}

TEST(CliProbeInput, BadInputIsRefusedWithTheReason) {
    for (const char* rate : {"0", "-1", "nan", "inf", "abc"}) {
        auto r = run_command(k_tandem + " probe --rate " + rate);
        EXPECT_EQ(r.exit_code, 1) << rate;
        EXPECT_NE(r.err.find("is not a positive finite number of Hz"), std::string::npos) << r.err;
    }
    auto mode = run_command(k_tandem + " probe --mode warp");
    EXPECT_EQ(mode.exit_code, 1);
    EXPECT_NE(mode.err.find("Probe mode 'warp' is not known"), std::string::npos) << mode.err;
    auto queue = run_command(k_tandem + " probe --queue video");
    EXPECT_EQ(queue.exit_code, 1);
    EXPECT_NE(queue.err.find("Queue 'video' is not known"), std::string::npos) << queue.err;
}

} // namespace
} // namespace tandem::test
