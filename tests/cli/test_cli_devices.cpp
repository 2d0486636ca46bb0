#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace tandem::test {
namespace {

const std::string k_tandem = TANDEM_CLI_PATH;

TEST(CliDevices, TablesNameTheDeviceAndThePairs) {
    auto r = run_command(k_tandem + " devices");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Pairs (worker -> primary)"), std::string::npos);
    EXPECT_NE(r.out.find("host-copy"), std::string::npos);
    EXPECT_NE(r.out.find("zero-copy"), std::string::npos);
    EXPECT_NE(r.out.find("cuda-peer"), std::string::npos);
    EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
}

TEST(CliDevices, JsonHasEveryDocumentedField) {
    auto r = run_command(k_tandem + " --virtual-devices 3 devices --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc.at("schema_version"), 1);
    ASSERT_GE(doc.at("devices").size(), 3u);
    for (const char* key : {"index",
                            "physical_index",
                            "virtual_index",
                            "name",
                            "vendor",
                            "vendor_id",
                            "device_id",
                            "type",
                            "driver_name",
                            "driver_info",
                            "driver_version",
                            "api_version",
                            "device_uuid",
                            "driver_uuid",
                            "uma",
                            "cache_coherent_uma",
                            "device_local_bytes",
                            "optimal_buffer_copy_row_pitch_alignment",
                            "optimal_buffer_copy_offset_alignment",
                            "non_coherent_atom_size",
                            "timestamp_period_ns",
                            "memory_heaps",
                            "memory_types",
                            "queue_families",
                            "formats",
                            "features",
                            "extensions",
                            "cuda"}) {
        EXPECT_TRUE(doc["devices"][0].contains(key)) << key;
    }
    for (const char* key :
         {"timeline_semaphore", "synchronization2", "dynamic_rendering", "external_memory_host",
          "min_imported_host_pointer_alignment", "external_memory_fd", "external_memory_fd_image",
          "external_memory_dma_buf", "external_semaphore_fd", "external_semaphore_fd_binary",
          "external_semaphore_fd_timeline", "calibrated_timestamps", "host_query_reset",
          "global_priority", "memory_budget"}) {
        EXPECT_TRUE(doc["devices"][0]["features"].contains(key)) << key;
    }
    for (const char* key : {"present", "ordinal", "reason", "peers"}) {
        EXPECT_TRUE(doc["devices"][0]["cuda"].contains(key)) << key;
    }
    for (const char* key : {"size", "device_local", "budget", "usage"}) {
        EXPECT_TRUE(doc["devices"][0]["memory_heaps"][0].contains(key)) << key;
    }
    for (const char* key :
         {"index", "count", "graphics", "compute", "transfer", "timestamp_valid_bits"}) {
        EXPECT_TRUE(doc["devices"][0]["queue_families"][0].contains(key)) << key;
    }
    for (const char* key : {"name", "vk_format", "color_attachment", "depth_attachment", "storage",
                            "sampled", "transfer_src", "transfer_dst"}) {
        EXPECT_TRUE(doc["devices"][0]["formats"][0].contains(key)) << key;
    }
    const std::size_t n = doc["devices"].size();
    ASSERT_EQ(doc.at("pairs").size(), n * n);
    for (const auto& pair : doc["pairs"]) {
        for (const char* key : {"worker", "primary", "paths", "best_path", "gpu_side_sync", "sync",
                                "sync_reason", "cuda_peer"}) {
            EXPECT_TRUE(pair.contains(key)) << key;
        }
        EXPECT_TRUE(pair["cuda_peer"].contains("present") && pair["cuda_peer"].contains("reason"));
        ASSERT_EQ(pair["paths"].size(), 6u);
        for (const auto& path : pair["paths"]) {
            EXPECT_TRUE(path.contains("path") && path.contains("available") &&
                        path.contains("reason"));
        }
        EXPECT_EQ(pair["paths"][3]["path"], "cuda-peer");
    }
    // Two openings of one device: zero copy (where opaque-fd images are), host-imported and
    // host-copy are offered, zero copy first.
    const auto& p10 = doc["pairs"][1 * n + 0];
    const auto& features = doc["devices"][0]["features"];
    EXPECT_EQ(p10["worker"], 1);
    EXPECT_EQ(p10["primary"], 0);
    EXPECT_EQ(p10["paths"][1]["path"], "zero-copy");
    EXPECT_EQ(p10["paths"][1]["available"], features["external_memory_fd_image"]);
    if (features["external_memory_fd_image"]) {
        EXPECT_EQ(p10["best_path"], "zero-copy");
    }
    EXPECT_EQ(p10["paths"][5]["path"], "host-copy");
    EXPECT_TRUE(p10["paths"][5]["available"]);
    EXPECT_EQ(p10["paths"][4]["path"], "host-imported");
    EXPECT_EQ(p10["paths"][4]["available"], features["external_memory_host"]);
    EXPECT_TRUE(doc["selection"].contains("primary"));
    EXPECT_TRUE(doc["selection"].contains("workers"));
}

// TANDEM_NO_CUDA=1 keeps libcuda.so.1 unloaded: every adapter and pair says so.
TEST(CliDevices, CudaTurnedOffIsReportedAsTheReason) {
    auto r = run_command("TANDEM_NO_CUDA=1 " + k_tandem + " --virtual-devices 2 devices --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& device : doc.at("devices")) {
        EXPECT_FALSE(device["cuda"]["present"]);
        EXPECT_TRUE(device["cuda"]["ordinal"].is_null());
        EXPECT_NE(device["cuda"]["reason"].get<std::string>().find("TANDEM_NO_CUDA"),
                  std::string::npos);
    }
    const auto& p10 = doc["pairs"][1 * doc["devices"].size() + 0];
    EXPECT_FALSE(p10["cuda_peer"]["present"]);
    EXPECT_NE(p10["cuda_peer"]["reason"].get<std::string>().find("no libcuda.so.1"),
              std::string::npos)
        << p10["cuda_peer"]["reason"];
}

TEST(CliDevices, CopyQueuesNameTheQueueOfEveryDeviceAndWhy) {
    auto r = run_command(k_tandem + " --virtual-devices 2 devices --json --copy-queues");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& device : doc.at("devices")) {
        const std::string reason = device.at("copy_queue").get<std::string>();
        EXPECT_TRUE(reason.rfind("the main queue", 0) == 0 ||
                    reason.rfind("the transfer queue", 0) == 0)
            << reason;
        EXPECT_NE(reason.find("family"), std::string::npos) << reason;
    }
    auto plain = run_command(k_tandem + " devices --json");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_FALSE(nlohmann::json::parse(plain.out).at("devices").at(0).contains("copy_queue"));

    // Forced: the reason says so.
    auto forced = run_command("TANDEM_COPY_QUEUE=main " + k_tandem + " devices --copy-queues");
    ASSERT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_NE(forced.out.find("set by TANDEM_COPY_QUEUE"), std::string::npos) << forced.out;
}

TEST(CliDevices, MissingDriverGivesAClearError) {
    auto r = run_command(
        "VK_DRIVER_FILES=/nonexistent/none.json VK_ICD_FILENAMES=/nonexistent/none.json " +
        k_tandem + " devices");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("No Vulkan"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("mesa-vulkan-drivers"), std::string::npos) << r.err;
}

TEST(CliDevices, SelectorThatMatchesNothingFails) {
    auto r = run_command(k_tandem + " --primary no-such-gpu devices");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("No device matches 'no-such-gpu'"), std::string::npos) << r.err;
}

TEST(CliDevices, UnknownFlagIsBadUsage) {
    auto r = run_command(k_tandem + " devices --frobnicate");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

TEST(CliDevices, BadVirtualDeviceCountIsBadUsage) {
    auto r = run_command(k_tandem + " --virtual-devices 0 devices");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(
        r.err.find("--virtual-devices: '0' is out of range; give a whole number from 1 to 16"),
        std::string::npos)
        << r.err;
}

TEST(CliDevices, BadVirtualDeviceCountInTheEnvironmentFails) {
    auto r = run_command("TANDEM_VIRTUAL_DEVICES=0 " + k_tandem + " devices");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("Virtual device count '0'"), std::string::npos) << r.err;
}

} // namespace
} // namespace tandem::test
