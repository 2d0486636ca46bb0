// The path self-test and the path health record on lavapipe opened as several devices: every
// path passes with the known image, a fault in any of its steps or a wrong byte fails it with a
// sentence naming the step and result or the byte, and choose_tested_path drops a failing path
// for its pair and takes the next one, never negotiating the dropped one again.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/capabilities.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/path_health.hpp"
#include "transfer/path_self_test.hpp"
#include "transfer/transfer_path.hpp"
#include "transfer_test_support.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using detail::Device;
using detail::PathHealth;

class PathSelfTest : public VulkanTest, public ::testing::WithParamInterface<TransferPath> {
protected:
    void SetUp() override {
        VulkanTest::SetUp();
        if (HasFatalFailure() || IsSkipped()) {
            return;
        }
        m_primary = &open(0);
        m_worker = same() ? m_primary : &open(1);
        m_pair = detail::query_pair_info(m_worker->info(), m_primary->info());
        // Without CUDA, the cuda-peer path is tested with the host's copy in place of CUDA's, as
        // the bridge's host step: a fault that ends a self-test while the host signals a
        // stream's gate now and then stalls Debian 12's synchronisation validation for 10 s
        // (test_path_fallback.cpp says more). The link tests run the host's stream.
        if (path() == TransferPath::CudaPeer && detail::allow_cuda_stand_in(m_pair)) {
            m_copier = host_staging_copier(false);
        }
        if (!m_pair.allows(path())) {
            GTEST_SKIP() << to_string(path()) << " is not available here";
        }
    }
    void TearDown() override {
        detail::clear_vk_faults();
        detail::clear_self_test_corruption();
        VulkanTest::TearDown();
    }
    [[nodiscard]] TransferPath path() const { return GetParam(); }
    [[nodiscard]] bool same() const { return path() == TransferPath::SameDevice; }
    // The pair's paths after path(), best first.
    [[nodiscard]] std::vector<TransferPath> later_paths() const {
        std::vector<TransferPath> out;
        bool after = false;
        for (const auto& a : m_pair.paths) {
            if (after && a.available) {
                out.push_back(a.path);
            }
            after = after || a.path == path();
        }
        return out;
    }
    // A record in which every path better than path() was dropped, so path() is negotiated.
    void drop_better_paths(PathHealth& health) const {
        for (const auto& a : m_pair.paths) {
            if (a.path == path()) {
                break;
            }
            (void)health.drop(m_pair.worker, m_pair.primary, a.path, "dropped by the test");
        }
    }

    Device* m_primary = nullptr;
    Device* m_worker = nullptr;
    PairInfo m_pair;
    detail::StagingCopierFactory m_copier; // empty: CUDA's
};

TEST(SelfTestPattern, TellsRowsColumnsAndBytesApart) {
    for (std::uint32_t y = 0; y < detail::k_self_test_height; ++y) {
        for (std::uint32_t x = 0; x < detail::k_self_test_width; ++x) {
            for (std::uint32_t b = 0; b < 16; ++b) {
                const auto v = detail::self_test_byte(x, y, b);
                if (x + 1 < detail::k_self_test_width) {
                    EXPECT_NE(v, detail::self_test_byte(x + 1, y, b));
                }
                if (y + 1 < detail::k_self_test_height) {
                    EXPECT_NE(v, detail::self_test_byte(x, y + 1, b));
                }
                if (b + 1 < 16) {
                    EXPECT_NE(v, detail::self_test_byte(x, y, b + 1));
                }
            }
        }
    }
}

TEST(PathHealthRecord, DroppedPathsAreUnavailableWithTheirFirstReasonInOrder) {
    PathHealth health;
    PairInfo pair;
    pair.worker = 1;
    pair.primary = 0;
    for (TransferPath p : k_all_transfer_paths) {
        pair.paths.push_back({p, p != TransferPath::SameDevice, "matrix"});
    }
    health.mark_passed(1, 0, TransferPath::ZeroCopy);
    EXPECT_TRUE(health.passed(1, 0, TransferPath::ZeroCopy));
    EXPECT_FALSE(health.passed(2, 0, TransferPath::ZeroCopy)) << "records are per pair";
    EXPECT_TRUE(health.drop(1, 0, TransferPath::SharedMemory, "first"));
    EXPECT_TRUE(health.drop(1, 0, TransferPath::ZeroCopy, "second"));
    EXPECT_FALSE(health.drop(1, 0, TransferPath::ZeroCopy, "again"));
    EXPECT_FALSE(health.passed(1, 0, TransferPath::ZeroCopy)) << "a dropped path stays dropped";
    health.mark_passed(1, 0, TransferPath::ZeroCopy);
    EXPECT_FALSE(health.passed(1, 0, TransferPath::ZeroCopy));
    const auto dropped = health.dropped(1, 0);
    ASSERT_EQ(dropped.size(), 2u);
    EXPECT_EQ(dropped[0].path, TransferPath::SharedMemory);
    EXPECT_EQ(dropped[1].path, TransferPath::ZeroCopy);
    EXPECT_EQ(dropped[1].reason, "second");
    EXPECT_TRUE(health.dropped(2, 0).empty());

    const PairInfo allowed = health.restrict(pair);
    EXPECT_EQ(allowed.best_path(), TransferPath::CudaPeer); // the next one the pair allows
    EXPECT_EQ(detail::negotiate_path(allowed, std::nullopt), TransferPath::CudaPeer);
    try {
        (void)detail::negotiate_path(allowed, TransferPath::ZeroCopy);
        ADD_FAILURE() << "a dropped path was negotiated when forced";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("second"), std::string::npos) << e.what();
        // The pair lacks the forced path: Unsupported, so a caller can fall back to another.
        EXPECT_EQ(e.category(), ErrorCategory::Unsupported);
    }
}

TEST_P(PathSelfTest, PassesWithTheKnownImage) {
    for (VkFormat format : {VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_R16G16B16A16_SFLOAT}) {
        const auto r =
            detail::self_test_path(*m_worker, *m_primary, m_pair, path(), format, m_copier);
        EXPECT_TRUE(r.ok) << detail::format_name(format) << ": " << r.reason;
    }
}

TEST_P(PathSelfTest, AFaultInAnyStepFailsItWithTheStepAndTheResult) {
    struct Step {
        std::string match;
        std::string says;
    };
    const std::string context = detail::self_test_context(path());
    const std::vector<Step> steps = {
        {context + ": upload submit", "uploading the known image"},
        {context + ": move submit", "submitting the move"},
        {context + ": move wait", "waiting for the move"},
        {context + ": readback wait", "reading the moved image back"},
    };
    for (const Step& step : steps) {
        SCOPED_TRACE(step.match);
        detail::inject_vk_fault(step.match, VK_ERROR_OUT_OF_DEVICE_MEMORY);
        const auto r = detail::self_test_path(*m_worker, *m_primary, m_pair, path(),
                                              VK_FORMAT_R8G8B8A8_UNORM, m_copier);
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.reason.find(step.says), std::string::npos) << r.reason;
        EXPECT_NE(r.reason.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos) << r.reason;
        detail::clear_vk_faults();
    }
    // A fault inside the link's own recording fails the move with the link's sentence.
    detail::inject_vk_fault("vkEndCommandBuffer transfer", VK_ERROR_OUT_OF_HOST_MEMORY);
    const auto r = detail::self_test_path(*m_worker, *m_primary, m_pair, path(),
                                          VK_FORMAT_R8G8B8A8_UNORM, m_copier);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.reason.find("recording"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("VK_ERROR_OUT_OF_HOST_MEMORY"), std::string::npos) << r.reason;
}

TEST_P(PathSelfTest, AWrongByteFailsItWithItsCoordinates) {
    detail::inject_self_test_corruption(path());
    const auto r = detail::self_test_path(*m_worker, *m_primary, m_pair, path(),
                                          VK_FORMAT_R8G8B8A8_UNORM, m_copier);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.reason.find("byte 0 of texel (5, 3)"), std::string::npos) << r.reason;
    const auto again = detail::self_test_path(*m_worker, *m_primary, m_pair, path(),
                                              VK_FORMAT_R8G8B8A8_UNORM, m_copier);
    EXPECT_TRUE(again.ok) << "the hook corrupts one self-test: " << again.reason;
}

// The path fails its self-test (a fault, then a wrong byte): it is dropped with the reason, the
// next path is self-tested and chosen, and the dropped one is never negotiated again, forced
// or not. The last path of a pair leaves nothing: the choice is refused with why.
TEST_P(PathSelfTest, AFailingPathIsDroppedAndTheNextChosen) {
    for (const bool corrupt : {false, true}) {
        SCOPED_TRACE(corrupt ? "wrong byte" : "fault");
        PathHealth health;
        drop_better_paths(health);
        if (corrupt) {
            detail::inject_self_test_corruption(path());
        } else {
            detail::inject_vk_fault(detail::self_test_context(path()),
                                    VK_ERROR_INVALID_EXTERNAL_HANDLE);
        }
        const auto later = later_paths();
        auto choose = [&](std::optional<TransferPath> forced) {
            return detail::choose_tested_path(*m_worker, *m_primary, m_pair, forced,
                                              VK_FORMAT_R8G8B8A8_UNORM, health, m_copier);
        };
        if (later.empty()) {
            EXPECT_THROW((void)choose(std::nullopt), Error);
        } else {
            EXPECT_EQ(choose(std::nullopt), later.front());
            EXPECT_TRUE(health.passed(m_pair.worker, m_pair.primary, later.front()));
            EXPECT_EQ(choose(std::nullopt), later.front()) << "chosen again without a self-test";
        }
        const auto reason = health.dropped_reason(m_pair.worker, m_pair.primary, path());
        ASSERT_TRUE(reason);
        EXPECT_NE(reason->find(corrupt ? "texel (5, 3)" : "VK_ERROR_INVALID_EXTERNAL_HANDLE"),
                  std::string::npos)
            << *reason;
        try {
            (void)choose(path());
            ADD_FAILURE() << "a dropped path was chosen when forced";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(*reason), std::string::npos) << e.what();
        }
        detail::clear_vk_faults();
    }
}

INSTANTIATE_TEST_SUITE_P(EveryPath, PathSelfTest, ::testing::ValuesIn(k_all_transfer_paths),
                         [](const auto& param) {
                             std::string name = to_string(param.param);
                             std::erase(name, '-');
                             return name;
                         });

} // namespace
} // namespace tandem::test
