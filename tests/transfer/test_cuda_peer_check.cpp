// The CUDA peer check (transfer/cuda_peer_check.hpp) on whatever pair has the CUDA peer entry:
// a known image moved worker GPU -> primary GPU through CUDA arrives byte for byte. Without one
// (no libcuda.so.1, no NVIDIA pair, as on lavapipe) the check does not run and says why, in the
// pair matrix's words, and the test skips with that reason. On NVIDIA run it with
// TANDEM_VALIDATION=off: the validation layer cannot see the semaphore values CUDA signals.
#include "core/capabilities.hpp"
#include "transfer/cuda_peer_check.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using CudaPeer = VulkanTest;

TEST_F(CudaPeer, MovesAKnownImageByteForByteOrSaysWhyNot) {
    // The first ordered pair of adapters with the entry, else adapters 1 -> 0 for the reason.
    std::uint32_t worker = 1;
    std::uint32_t primary = 0;
    bool found = false;
    for (std::uint32_t w = 0; w < adapters().size() && !found; ++w) {
        for (std::uint32_t p = 0; p < adapters().size() && !found; ++p) {
            if (detail::query_pair_info(adapters()[w].info, adapters()[p].info).cuda_peer.present) {
                worker = w;
                primary = p;
                found = true;
            }
        }
    }
    const auto pair = detail::query_pair_info(adapters()[worker].info, adapters()[primary].info);
    const detail::Device& p = open(primary);
    const detail::Device& w = open(worker);
    auto check = detail::run_cuda_peer_check(w, p, pair, 1920, 1080, 3);
    if (!found && !check.ran) {
        // Two openings of one NVIDIA GPU still check every step but the peer copy.
        check = detail::run_cuda_peer_check(w, p, pair, 1920, 1080, 3, true);
    }
    if (!found && !check.ran) {
        EXPECT_FALSE(check.ran);
        EXPECT_EQ(check.reason, pair.cuda_peer.reason);
        EXPECT_FALSE(check.reason.empty());
        GTEST_SKIP() << "no CUDA peer pair here: " << check.reason;
    }
    ASSERT_TRUE(check.ran) << check.reason;
    EXPECT_TRUE(check.verified) << check.reason;
    ASSERT_EQ(check.chain_us.size(), 3u);
    ASSERT_EQ(check.peer_gbps.size(), 3u);
    for (double gbps : check.peer_gbps) {
        EXPECT_GT(gbps, 0.0);
    }
    std::printf("CUDA peer %u -> %u, 1920x1080 RGBA8: chain %.1f us, peer copy %.1f GB/s\n", worker,
                primary, check.chain_us.back(), check.peer_gbps.back());
}

} // namespace
} // namespace tandem::test
