// Trace export (tandem/trace.hpp): Chrome trace-event JSON with queue and thread tracks.
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime_fixture.hpp"
#include "tandem/trace.hpp"

namespace tandem::test {
namespace {

class TraceExport : public RuntimeTest {};

TEST_F(TraceExport, IsChromeTraceJsonWithQueueAndThreadTracks) {
    RuntimeOptions options;
    options.trace = true;
    auto runtime = make_runtime("none", options);
    const TaskId task = runtime->register_task(pattern_task());
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(task).accepted(); }));
    }
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).in_flight == 0; }));
    const std::string path = ::testing::TempDir() + "tandem-trace-test.json";
    write_trace(*runtime, path);
    std::ifstream in(path);
    const auto json = nlohmann::json::parse(in);
    std::set<std::string> tracks;
    int spans = 0;
    for (const auto& e : json.at("traceEvents")) {
        if (e.at("ph") == "M" && e.at("name") == "thread_name") {
            tracks.insert(e.at("args").at("name").get<std::string>());
        }
        if (e.at("ph") == "X") {
            ++spans;
            EXPECT_TRUE(e.at("ts").is_number_integer());
            EXPECT_GE(e.at("dur").get<std::int64_t>(), 1);
        }
    }
    EXPECT_TRUE(tracks.count("app thread"));
    EXPECT_TRUE(tracks.count("primary main queue"));
    EXPECT_TRUE(tracks.count("primary submit thread"));
    EXPECT_GE(spans, 30);
    std::remove(path.c_str());
}

// A task on a worker over a host-bridged path: the pair's bridge track notes each band it hands
// on, one slot and band at a time, at least one for each output that arrived.
TEST_F(TraceExport, HostBridgedTransfersShowEachBandTheBridgeHandsOn) {
    RuntimeOptions options;
    options.trace = true;
    options.transfer_path = "host-copy";
    auto runtime = make_runtime("1", options);
    const TaskId task = runtime->register_task(pattern_task("worker"));
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(task).accepted(); }));
    }
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).in_flight == 0; }));
    ASSERT_EQ(runtime->stats(task).transfer_path, TransferPath::HostCopy);
    const std::uint64_t ready = runtime->stats(task).ready;
    const std::string path = ::testing::TempDir() + "tandem-trace-bridge-test.json";
    write_trace(*runtime, path);
    std::ifstream in(path);
    const auto json = nlohmann::json::parse(in);
    std::map<std::int64_t, std::string> tracks;
    for (const auto& e : json.at("traceEvents")) {
        if (e.at("ph") == "M" && e.at("name") == "thread_name") {
            tracks[e.at("tid").get<std::int64_t>()] = e.at("args").at("name").get<std::string>();
        }
    }
    std::uint64_t handed = 0;
    for (const auto& e : json.at("traceEvents")) {
        if (e.at("ph") == "X" && e.at("name").get<std::string>().rfind("handed slot ", 0) == 0) {
            EXPECT_EQ(tracks[e.at("tid").get<std::int64_t>()], "worker1->primary bridge");
            ++handed;
        }
    }
    EXPECT_GE(handed, ready);
    EXPECT_GE(ready, 1u);
    std::remove(path.c_str());
}

} // namespace
} // namespace tandem::test
