#include "sched/calibration.hpp"

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/discovery.hpp"
#include "sched/cost_model.hpp"
#include "sched_fixture.hpp"
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
    EXPECT_DOUBLE_EQ(detail::median({4.0, 1.0, 3.0, 2.0}), 2.0); // nearest rank: the lower middle
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
    // Pure bandwidth with a slightly faster small copy: the free fit's latency is negative
    // (-2.8 us), so the fit goes through the origin instead, its slope least squares there.
    const std::vector<detail::TransferSample> samples = {
        {1u << 16, 0.001}, {1u << 20, 0.1}, {1u << 24, 1.6}};
    const auto link = detail::fit_link(samples);
    EXPECT_EQ(link.latency_us, 0.0);
    double sxx = 0.0;
    double sxy = 0.0;
    for (const auto& s : samples) {
        sxx += static_cast<double>(s.bytes) * static_cast<double>(s.bytes);
        sxy += static_cast<double>(s.bytes) * s.ms;
    }
    EXPECT_NEAR(link.gbps, sxx / sxy / 1e6, 1e-9); // 10.49 GB/s
    EXPECT_NEAR(link.ms_for(1u << 24), 1.6, 0.01) << "the large copies still fit";
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

using Calibrations = SchedTest;

// Timings with known answers stand in for the runtime's and the transfer paths' measurements:
// what is checked here is the walk over devices, pairs and paths and what becomes of the numbers.
TEST_F(Calibrations, MeasuresEveryDeviceAndEveryAvailablePath) {
    const auto devices = infos();
    const auto pairs = detail::pair_matrix(adapters());
    std::vector<detail::CalibrationProgress> progress;
    detail::CalibrationHooks hooks;
    hooks.workload = [](const DeviceInfo& d, const detail::ReferenceWorkload& w) {
        const double ms = 1e-6 * static_cast<double>(w.width) * w.height * (d.index + 1) +
                          1e-6 * static_cast<double>(w.work);
        return std::vector<double>{ms, ms, 1000.0, ms, ms}; // one stalled run
    };
    hooks.prepare = [](const DeviceInfo&) { return std::vector<double>{0.02, 0.02, 0.5}; };
    hooks.reintegrate = [](const DeviceInfo&) {
        std::vector<detail::TransferSample> out;
        for (const auto bytes : detail::reference_transfer_sizes()) {
            out.push_back({bytes, 0.01 + static_cast<double>(bytes) / 20e6});
        }
        return out;
    };
    hooks.transfer = [](const PairInfo& pair, TransferPath path) {
        const double gbps = path == TransferPath::HostCopy ? 2.0 : 8.0;
        std::vector<detail::TransferSample> out;
        for (const auto bytes : detail::reference_transfer_sizes()) {
            for (int i = 0; i < 3; ++i) {
                out.push_back({bytes, 0.001 * (30.0 + pair.worker) +
                                          static_cast<double>(bytes) / (gbps * 1e6)});
            }
        }
        return out;
    };
    hooks.sync = [](const PairInfo&) { return std::vector<double>{0.05, 0.04, 0.05}; };
    hooks.progress = [&](const detail::CalibrationProgress& p) { progress.push_back(p); };

    // The application's own task comes after the references, with its content key.
    const std::vector<detail::ReferenceWorkload> tasks = {
        {"capture", 320, 240, 1916, "security@demo#1", "security"}};
    const auto profile = detail::run_calibration(devices, pairs, hooks, tasks);

    // It describes exactly these devices.
    EXPECT_NO_THROW((void)detail::bind_profile(profile, devices));
    EXPECT_FALSE(profile.created.empty());
    auto workloads = detail::reference_workloads();
    workloads.push_back(tasks.front());
    for (const auto& d : profile.devices) {
        ASSERT_EQ(d.workloads.size(), workloads.size());
        EXPECT_EQ(d.workloads.back().content, "security@demo#1");
        EXPECT_TRUE(d.workloads.front().content.empty());
        for (std::size_t i = 0; i < workloads.size(); ++i) {
            const auto& w = workloads[i];
            EXPECT_DOUBLE_EQ(d.workloads[i].ms,
                             1e-6 * static_cast<double>(w.width) * w.height * (d.index + 1) +
                                 1e-6 * static_cast<double>(w.work));
        }
        EXPECT_NEAR(d.prepare_us, 20.0, 1e-9);
        EXPECT_NEAR(d.reintegrate.gbps, 20.0, 1e-6);
        EXPECT_NEAR(d.reintegrate.latency_us, 10.0, 1e-6);
    }
    // Every ordered pair of distinct adapters, each available path and nothing else.
    ASSERT_EQ(profile.pairs.size(), devices.size() * (devices.size() - 1));
    for (const auto& p : profile.pairs) {
        const auto& info = *std::find_if(pairs.begin(), pairs.end(), [&](const PairInfo& i) {
            return i.worker == p.worker && i.primary == p.primary;
        });
        EXPECT_EQ(p.gpu_side_sync, info.gpu_side_sync);
        EXPECT_NEAR(p.sync_us, 50.0, 1e-9);
        for (const auto path : k_all_transfer_paths) {
            const auto* measured = p.find(path);
            EXPECT_EQ(measured != nullptr, info.allows(path)) << to_string(path);
            if (measured != nullptr) {
                EXPECT_NEAR(measured->link.gbps, path == TransferPath::HostCopy ? 2.0 : 8.0, 1e-6);
                EXPECT_NEAR(measured->link.latency_us, 30.0 + p.worker, 1e-6);
            }
        }
    }
    // The progress line counts every measurement, in order, to the total.
    ASSERT_FALSE(progress.empty());
    for (std::size_t i = 0; i < progress.size(); ++i) {
        EXPECT_EQ(progress[i].step, i + 1);
        EXPECT_EQ(progress[i].total, progress.size());
        EXPECT_FALSE(progress[i].what.empty());
    }
    EXPECT_TRUE(std::any_of(progress.begin(), progress.end(), [](const auto& p) {
        return p.what.find("capture security 320x240") != std::string::npos;
    }));
    // And the profile drives the cost model.
    detail::CostModel model(profile, devices);
    EXPECT_TRUE(model.execute("t", {"pattern", 512, 512, 0, 0}, 1).has_value());
    EXPECT_TRUE(model.move("t", {"pattern", 512, 512, 0, 0}, 1, 0).has_value());
}

TEST_F(Calibrations, WhatCannotBeMeasuredIsLeftOut) {
    const auto devices = infos();
    detail::CalibrationHooks hooks;
    hooks.workload = [](const DeviceInfo& d, const detail::ReferenceWorkload& w) {
        // Adapter 1 cannot run captures (say, no graphics queue).
        return d.index == 1 && w.kind == "capture" ? std::vector<double>{}
                                                   : std::vector<double>{1.0};
    };
    const auto profile = detail::run_calibration(devices, detail::pair_matrix(adapters()), hooks);
    // A partial profile still reads back.
    EXPECT_EQ(detail::to_json(detail::profile_from_json(detail::to_json(profile))),
              detail::to_json(profile));
    detail::CostModel model(profile, devices);
    EXPECT_FALSE(model.execute("t", {"capture", 512, 512, 100, 0}, 1).has_value());
    EXPECT_TRUE(model.execute("t", {"capture", 512, 512, 100, 0}, 2).has_value());
    // No transfer hook: pairs are listed without paths, so nothing can move.
    EXPECT_FALSE(model.move("t", {"pattern", 256, 256, 0, 0}, 1, 0).has_value());
}

} // namespace
} // namespace tandem::test
