// Adapters and calibration profiles for the scheduler's tests. SyntheticSchedTest: adapters
// whose identities are made up (no Vulkan; which of them are openings of one physical device is
// the test's choice). SchedTest: three logical openings of each physical device (lavapipe: one
// primary, two workers) with their real DeviceInfo. Both make synthetic calibration profiles
// whose numbers each test chooses; scheduling itself never touches Vulkan.
#pragma once

#include <string>
#include <vector>

#include "sched/profile.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {

// What a synthetic profile says about one device.
struct SyntheticDevice {
    double pattern_256_ms = 1.0; // pattern 256x256; 1024x1024 costs 16x (pixel-bound)
    double prepare_us = 20.0;
};

// What it says about every worker -> primary pair.
struct SyntheticLink {
    double gbps = 8.0;
    double latency_us = 30.0;
    double sync_us = 40.0;
    bool gpu_side_sync = false;
};

// A profile of `adapters`: devices[i] (default SyntheticDevice{} past the end) and `link` for
// every ordered pair, over host-imported and (slower) host-copy.
[[nodiscard]] inline detail::Profile synthetic_profile(const std::vector<DeviceInfo>& adapters,
                                                       const std::vector<SyntheticDevice>& devices,
                                                       const SyntheticLink& link = {}) {
    auto profile = detail::profile_skeleton(adapters);
    profile.created = "2026-11-30T00:00:00Z";
    profile.tandem_version = "test";
    for (std::size_t i = 0; i < profile.devices.size(); ++i) {
        const auto d = i < devices.size() ? devices[i] : SyntheticDevice{};
        auto& p = profile.devices[i];
        p.prepare_us = d.prepare_us;
        p.reintegrate = {20.0, 10.0};
        p.workloads = {
            {"pattern", 256, 256, 0, d.pattern_256_ms},
            {"pattern", 1024, 1024, 0, 16.0 * d.pattern_256_ms},
            {"capture", 512, 512, 1000, 2.0 * d.pattern_256_ms},
            {"capture", 512, 512, 100000, 6.0 * d.pattern_256_ms},
            {"capture", 1024, 1024, 1000, 8.0 * d.pattern_256_ms},
            {"capture", 1024, 1024, 100000, 12.0 * d.pattern_256_ms},
        };
    }
    for (const auto& w : profile.devices) {
        for (const auto& p : profile.devices) {
            if (w.index == p.index) {
                continue;
            }
            detail::PairProfile pair;
            pair.worker = w.index;
            pair.primary = p.index;
            pair.gpu_side_sync = link.gpu_side_sync;
            pair.sync_us = link.sync_us;
            pair.paths = {{TransferPath::HostImported, {link.gbps, link.latency_us}},
                          {TransferPath::HostCopy, {link.gbps / 2.0, 2.0 * link.latency_us}}};
            profile.pairs.push_back(pair);
        }
    }
    return profile;
}

// Adapter i is an opening of physical device physical[i]: adapters of one physical device share
// its device UUID and count their openings in virtual_index. Identities only, no Vulkan.
[[nodiscard]] inline std::vector<DeviceInfo>
synthetic_adapters(const std::vector<std::uint32_t>& physical) {
    std::vector<DeviceInfo> out;
    for (std::size_t i = 0; i < physical.size(); ++i) {
        DeviceInfo d;
        d.index = static_cast<std::uint32_t>(i);
        d.physical_index = physical[i];
        for (std::size_t k = 0; k < i; ++k) {
            d.virtual_index += physical[k] == physical[i] ? 1 : 0;
        }
        d.name = "Synthetic GPU " + std::to_string(physical[i]);
        d.type = "discrete";
        d.device_uuid.fill(0x5a);
        d.device_uuid[0] = static_cast<std::uint8_t>(physical[i]);
        d.driver_uuid.fill(0xd7);
        d.driver_version = "1.0.0";
        out.push_back(d);
    }
    return out;
}

// Three adapters, each a device of its own unless a test says otherwise (set `physical`).
class SyntheticSchedTest : public ::testing::Test {
protected:
    std::vector<std::uint32_t> physical = {0, 1, 2};

    [[nodiscard]] std::vector<DeviceInfo> infos() const { return synthetic_adapters(physical); }

    [[nodiscard]] detail::Profile synthetic(const std::vector<SyntheticDevice>& devices,
                                            const SyntheticLink& link = {}) const {
        return synthetic_profile(infos(), devices, link);
    }
};

class SchedTest : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 3; }

    [[nodiscard]] std::vector<DeviceInfo> infos() {
        std::vector<DeviceInfo> out;
        for (const auto& a : adapters()) {
            out.push_back(a.info);
        }
        return out;
    }

    // A profile of every adapter present: devices[i] (default SyntheticDevice{} past the end)
    // and `link` for every ordered pair, over host-imported and (slower) host-copy.
    [[nodiscard]] detail::Profile synthetic(const std::vector<SyntheticDevice>& devices,
                                            const SyntheticLink& link = {}) {
        return synthetic_profile(infos(), devices, link);
    }
};

} // namespace tandem::test
