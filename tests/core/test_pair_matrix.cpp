#include <algorithm>

#include "core/capabilities.hpp"
#include "core/cuda_driver.hpp"
#include "core/discovery.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using Pairs = VulkanTest;

const PathAvailability& path(const PairInfo& pair, TransferPath p) {
    return *std::find_if(pair.paths.begin(), pair.paths.end(),
                         [&](const auto& a) { return a.path == p; });
}

TEST_F(Pairs, CoversEveryOrderedPairWithAReasonForEachPath) {
    const auto pairs = detail::pair_matrix(adapters());
    ASSERT_EQ(pairs.size(), adapters().size() * adapters().size());
    for (const auto& p : pairs) {
        ASSERT_EQ(p.paths.size(), k_all_transfer_paths.size());
        for (std::size_t i = 0; i < p.paths.size(); ++i) {
            EXPECT_EQ(p.paths[i].path, k_all_transfer_paths[i]); // best first
            EXPECT_FALSE(p.paths[i].reason.empty()) << to_string(p.paths[i].path);
        }
        EXPECT_FALSE(p.sync_reason.empty());
        EXPECT_FALSE(p.cuda_peer.reason.empty());
    }
}

TEST_F(Pairs, OneDeviceOpenedTwiceOffersHostPathsAndExplainsSync) {
    // Adapters 0 and 1 are two openings of the same physical device.
    const auto pair = detail::query_pair_info(adapters()[1].info, adapters()[0].info);
    const auto& info = adapters()[0].info;
    EXPECT_FALSE(pair.allows(TransferPath::SameDevice));
    EXPECT_TRUE(pair.allows(TransferPath::HostCopy));
    EXPECT_EQ(pair.allows(TransferPath::HostImported), info.features.external_memory_host);
    // Same UUIDs: shared memory is possible exactly when opaque-fd memory is, zero copy exactly
    // when opaque-fd images are, and negotiation prefers zero copy.
    EXPECT_EQ(pair.allows(TransferPath::SharedMemory), info.features.external_memory_fd);
    EXPECT_EQ(pair.allows(TransferPath::ZeroCopy), info.features.external_memory_fd_image);
    if (info.features.external_memory_fd_image) {
        EXPECT_EQ(pair.best_path(), TransferPath::ZeroCopy);
        EXPECT_NE(path(pair, TransferPath::ZeroCopy).reason.find("no copy"), std::string::npos);
    }
    EXPECT_EQ(pair.gpu_side_sync, info.features.external_semaphore_fd_timeline);
    if (!pair.gpu_side_sync) {
        EXPECT_NE(pair.sync_reason.find("host bridge"), std::string::npos) << pair.sync_reason;
    }
    if (info.features.external_memory_host) {
        EXPECT_NE(path(pair, TransferPath::HostImported).reason.find("alignment"),
                  std::string::npos);
    }
}

TEST_F(Pairs, DifferentUuidsRuleOutOpaqueFdSharingWithTheReason) {
    DeviceInfo worker = adapters()[1].info;
    worker.device_uuid[0] ^= 0xff;
    worker.features.external_memory_fd = true;
    worker.features.external_memory_fd_image = true;
    worker.features.external_semaphore_fd_timeline = true;
    DeviceInfo primary = adapters()[0].info;
    primary.features.external_memory_fd = true;
    primary.features.external_memory_fd_image = true;
    primary.features.external_semaphore_fd_timeline = true;
    const auto pair = detail::query_pair_info(worker, primary);
    EXPECT_FALSE(pair.allows(TransferPath::SharedMemory));
    EXPECT_NE(path(pair, TransferPath::SharedMemory).reason.find("UUIDs"), std::string::npos);
    EXPECT_FALSE(pair.allows(TransferPath::ZeroCopy));
    EXPECT_NE(path(pair, TransferPath::ZeroCopy).reason.find("UUIDs"), std::string::npos);
    EXPECT_FALSE(pair.gpu_side_sync);
    EXPECT_NE(pair.sync_reason.find("UUIDs"), std::string::npos);
}

TEST_F(Pairs, ZeroCopyNeedsOpaqueFdImagesOnBothSides) {
    DeviceInfo worker = adapters()[1].info;
    DeviceInfo primary = adapters()[0].info;
    worker.features.external_memory_fd_image = true;
    primary.features.external_memory_fd_image = false;
    const auto pair = detail::query_pair_info(worker, primary);
    EXPECT_FALSE(pair.allows(TransferPath::ZeroCopy));
    EXPECT_NE(path(pair, TransferPath::ZeroCopy).reason.find("missing on the primary"),
              std::string::npos)
        << path(pair, TransferPath::ZeroCopy).reason;
    EXPECT_NE(pair.best_path(), TransferPath::ZeroCopy);
}

// Without libcuda.so.1 (no NVIDIA driver here) every adapter and pair says so; with it, a CPU
// device is not an NVIDIA GPU. Either way the CUDA peer entry is absent with its reason.
TEST_F(Pairs, CudaPeerIsAbsentWithItsReasonWithoutAnNvidiaPair) {
    const auto& cuda = detail::cuda_driver();
    for (const auto& a : adapters()) {
        if (a.info.vendor_id == 0x10DE) {
            GTEST_SKIP() << "[expected-skip:nvidia-present] an NVIDIA adapter is present";
        }
        EXPECT_FALSE(a.info.cuda.present);
        EXPECT_EQ(a.info.cuda.ordinal, -1);
        if (!cuda.ready) {
            EXPECT_EQ(a.info.cuda.reason, cuda.error);
        } else {
            EXPECT_NE(a.info.cuda.reason.find("not an NVIDIA GPU"), std::string::npos);
        }
    }
    const auto pair = detail::query_pair_info(adapters()[1].info, adapters()[0].info);
    EXPECT_FALSE(pair.cuda_peer.present);
    if (!cuda.ready) {
        EXPECT_NE(pair.cuda_peer.reason.find("libcuda.so.1"), std::string::npos)
            << pair.cuda_peer.reason;
    }
    // The cuda-peer path is absent with the same words (test_transfer_paths: forcing it).
    const PathAvailability& cuda_path = path(pair, TransferPath::CudaPeer);
    EXPECT_FALSE(cuda_path.available);
    EXPECT_EQ(cuda_path.reason, pair.cuda_peer.reason);
    EXPECT_NE(pair.best_path(), TransferPath::CudaPeer);
    const auto self = detail::query_pair_info(adapters()[0].info, adapters()[0].info);
    EXPECT_FALSE(self.cuda_peer.present);
    EXPECT_NE(self.cuda_peer.reason.find("one VkDevice"), std::string::npos);
    EXPECT_FALSE(self.allows(TransferPath::CudaPeer));
}

// The pair rules over made-up CUDA rows: one GPU needs no peer copy, a missing peer link is
// named, and two GPUs with peer access have the entry.
TEST(CudaPeer, FollowsTheCudaRowsOfBothAdapters) {
    DeviceInfo a;
    a.index = 0;
    a.device_uuid[0] = 1;
    a.cuda = {true, 0, "CUDA device 0", {}};
    a.features.external_memory_fd = true;
    DeviceInfo b = a;
    b.index = 1;
    // One GPU opened twice: no peer, but the path copies within the GPU, after zero-copy and
    // shared memory.
    auto pair = detail::query_pair_info(b, a);
    EXPECT_NE(pair.cuda_peer.reason.find("one GPU"), std::string::npos);
    EXPECT_TRUE(pair.allows(TransferPath::CudaPeer)) << path(pair, TransferPath::CudaPeer).reason;
    EXPECT_NE(path(pair, TransferPath::CudaPeer).reason.find("within it"), std::string::npos);
    EXPECT_EQ(pair.best_path(), TransferPath::SharedMemory);
    b.device_uuid[0] = 2;
    b.cuda.ordinal = 1;
    pair = detail::query_pair_info(b, a);
    EXPECT_FALSE(pair.cuda_peer.present);
    EXPECT_NE(pair.cuda_peer.reason.find("no peer access"), std::string::npos)
        << pair.cuda_peer.reason;
    EXPECT_FALSE(pair.allows(TransferPath::CudaPeer));
    b.cuda.peers = {a.device_uuid};
    pair = detail::query_pair_info(b, a);
    EXPECT_TRUE(pair.cuda_peer.present) << pair.cuda_peer.reason;
    // Two GPUs with peer access: the CUDA path comes before the host paths.
    EXPECT_EQ(pair.best_path(), TransferPath::CudaPeer);
    b.features.external_memory_fd = false;
    pair = detail::query_pair_info(b, a);
    EXPECT_FALSE(pair.allows(TransferPath::CudaPeer));
    EXPECT_NE(path(pair, TransferPath::CudaPeer).reason.find("worker"), std::string::npos);
    b.features.external_memory_fd = true;
    b.cuda = {false, -1, "not an NVIDIA GPU: CUDA does not drive it", {}};
    pair = detail::query_pair_info(b, a);
    EXPECT_FALSE(pair.cuda_peer.present);
    EXPECT_EQ(pair.cuda_peer.reason, "the worker: not an NVIDIA GPU: CUDA does not drive it");
    EXPECT_EQ(path(pair, TransferPath::CudaPeer).reason, pair.cuda_peer.reason);
}

TEST_F(Pairs, TheDiagonalIsTheSameDevicePath) {
    const auto pair = detail::query_pair_info(adapters()[0].info, adapters()[0].info);
    EXPECT_EQ(pair.best_path(), TransferPath::SameDevice);
    EXPECT_TRUE(pair.gpu_side_sync);
}

TEST(TransferPathNames, RoundTrip) {
    for (auto p : k_all_transfer_paths) {
        EXPECT_EQ(parse_transfer_path(to_string(p)), p);
    }
    EXPECT_FALSE(parse_transfer_path("teleport"));
    EXPECT_EQ(transfer_path_names(), "same-device, zero-copy, shared-memory, cuda-peer, "
                                     "host-imported or host-copy");
}

} // namespace
} // namespace tandem::test
