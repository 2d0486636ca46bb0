#include "sched/calibration.hpp"

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sched/cost_model.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

TEST(Calibration, ReferenceWorkloadsLetTheCostModelInterpolate) {
    std::map<std::string, std::set<std::uint64_t>> pixels;
    std::map<std::string, std::set<std::uint64_t>> work;
    detail::DeviceProfile device;
    for (const auto& w : detail::reference_workloads()) {
        pixels[w.kind].insert(static_cast<std::uint64_t>(w.width) * w.height);
        work[w.kind].insert(w.work);
        device.workloads.push_back(
            {w.kind, w.width, w.height, w.work, 1e-6 * static_cast<double>(w.width * w.height)});
    }
    ASSERT_EQ(pixels.count("pattern"), 1u);
    ASSERT_EQ(pixels.count("capture"), 1u);
    EXPECT_GE(pixels["pattern"].size(), 2u);
    EXPECT_GE(pixels["capture"].size(), 2u);
    EXPECT_GE(work["capture"].size(), 2u);
    // Every calibrated kind predicts sizes between its reference points.
    EXPECT_TRUE(detail::predict_workload_ms(device, {"pattern", 640, 480, 0, 0}).has_value());
    EXPECT_TRUE(detail::predict_workload_ms(device, {"capture", 640, 480, 20000, 0}).has_value());
    const auto sizes = detail::reference_transfer_sizes();
    EXPECT_GE(std::set<std::uint64_t>(sizes.begin(), sizes.end()).size(), 2u);
}

TEST(Calibration, MedianIgnoresAStall) {
    EXPECT_DOUBLE_EQ(detail::median({}), 0.0);
    EXPECT_DOUBLE_EQ(detail::median({3.0}), 3.0);
    EXPECT_DOUBLE_EQ(detail::median({4.0, 1.0, 3.0, 2.0}), 2.5);
    EXPECT_DOUBLE_EQ(detail::median({1.0, 1.1, 900.0, 0.9, 1.0}), 1.0);
}

TEST(Calibration, FitsLatencyAndBandwidthDespiteStalls) {
    const double latency_ms = 0.040;
    const double gbps = 12.0;
    std::vector<detail::TransferSample> samples;
    for (const auto bytes : detail::reference_transfer_sizes()) {
        const double ms = latency_ms + static_cast<double>(bytes) / (gbps * 1e6);
        for (int i = 0; i < 4; ++i) {
            samples.push_back({bytes, ms});
        }
        samples.push_back({bytes, ms + 250.0}); // one stalled copy per size
    }
    const auto link = detail::fit_link(samples);
    EXPECT_NEAR(link.latency_us, 40.0, 1e-6);
    EXPECT_NEAR(link.gbps, gbps, 1e-6);
    EXPECT_NEAR(link.ms_for(1u << 20), latency_ms + 1048576.0 / 12e6, 1e-9);
}

TEST(Calibration, NeverFitsANegativeLatency) {
    // Pure bandwidth with a slightly faster small copy: the fit goes through the origin.
    const auto link = detail::fit_link({{1u << 16, 0.001}, {1u << 20, 0.1}, {1u << 24, 1.6}});
    EXPECT_GE(link.latency_us, 0.0);
    EXPECT_GT(link.gbps, 0.0);
    EXPECT_THROW((void)detail::fit_link({{1u << 20, 0.1}, {1u << 20, 0.2}}), Error);
}

TEST(Calibration, SummaryNamesDevicesPathsAndCosts) {
    detail::Profile profile;
    detail::DeviceProfile d;
    d.index = 0;
    d.name = "llvmpipe";
    d.driver_version = "0.0.1";
    d.workloads = {{"pattern", 256, 256, 0, 1.25}};
    profile.devices = {d, d};
    profile.devices[1].index = 1;
    detail::PairProfile pair;
    pair.worker = 1;
    pair.primary = 0;
    pair.sync_us = 35.0;
    pair.paths = {{TransferPath::HostImported, {6.5, 20.0}}};
    profile.pairs = {pair};
    const auto text = detail::profile_summary(profile);
    EXPECT_NE(text.find("adapter 1: llvmpipe (driver 0.0.1)"), std::string::npos) << text;
    EXPECT_NE(text.find("1.250 ms"), std::string::npos) << text;
    EXPECT_NE(text.find("adapter 1 -> adapter 0: sync 35.0 us (host bridge)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("host-imported"), std::string::npos) << text;
    EXPECT_NE(text.find("6.50 GB/s"), std::string::npos) << text;
}

} // namespace
} // namespace tandem::test
