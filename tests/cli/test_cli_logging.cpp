// The CLI's --log-level: Tandem's messages go to stderr at that level, never to stdout, so a
// command's --json output stays a JSON document whatever the level.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace tandem::test {
namespace {

const std::string k_tandem = TANDEM_CLI_PATH;

// Whether `tandem devices` says the pair of adapters `primary` and `worker` (two openings each)
// syncs through a host bridge thread rather than on the GPUs.
bool pair_syncs_through_the_host(int primary, int worker) {
    const auto r = run_command(k_tandem + " --virtual-devices 2 devices --json");
    const auto json = nlohmann::json::parse(r.out, nullptr, false);
    if (json.is_discarded() || !json.contains("pairs")) {
        ADD_FAILURE() << "tandem devices --json: " << r.out << r.err;
        return false;
    }
    for (const auto& pair : json["pairs"]) {
        if (pair.value("primary", -1) == primary && pair.value("worker", -1) == worker) {
            return pair.value("sync", "") == "host-bridge";
        }
    }
    ADD_FAILURE() << "tandem devices --json lists no pair " << primary << " -> " << worker;
    return false;
}

TEST(CliLogging, DebugMessagesGoToStderrAndTheJsonStaysClean) {
    auto r = run_command(k_tandem + " --log-level debug --virtual-devices 2 stream --json "
                                    "--placement worker:0 --duration 1 --limit 10");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
    EXPECT_NE(r.err.find("tandem debug device: "), std::string::npos) << r.err;
    // The worker's link, started for the runtime, and its bridge thread where the pair syncs
    // through the host (lavapipe: no shared timelines; two openings of a GPU share them).
    EXPECT_NE(r.err.find("tandem debug transfer: "), std::string::npos) << r.err;
    if (pair_syncs_through_the_host(0, 1)) {
        EXPECT_NE(r.err.find("tandem debug sync: "), std::string::npos) << r.err;
    }
}

TEST(CliLogging, TheDefaultLevelSaysNothingOnASuccessfulRun) {
    auto r = run_command(k_tandem + " --virtual-devices 2 devices --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
    EXPECT_EQ(r.err, "");
}

TEST(CliLogging, AnUnknownLevelIsRefusedWithTheLevelsThereAre) {
    auto r = run_command(k_tandem + " --log-level loud devices");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("Log level 'loud' is not known"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("trace, debug, info, warn, error or off"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

} // namespace
} // namespace tandem::test
