// The calibration profile file as the tools see it: where `tandem calibrate` writes it by
// default, which file `tandem run` starts its scheduler from, and synthetic profiles with given
// costs (benchmarks that need the scheduler to decide from known numbers). The profile's
// contents stay the scheduler's (schema: docs/profile-json.md). Plain functions; any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tandem/device_info.hpp"

namespace tandem::harness {

// $XDG_CACHE_HOME/tandem/profile.json, else $HOME/.cache/tandem/profile.json. Throws
// tandem::Error when neither variable is set.
[[nodiscard]] std::filesystem::path default_profile_path();

// The profile a run's scheduler starts from: `path` (empty: the default path) when that file
// exists; else empty, with `note` saying why ("no calibration profile at ... (run `tandem
// calibrate`)", or why there is no default path).
[[nodiscard]] std::string existing_profile_path(const std::string& path, std::string& note);

// One workload's cost in a synthetic profile: `kind` at width x height with `work` units.
struct SyntheticWorkloadCost {
    std::string kind;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint64_t work = 0;
    double ms = 0; // GPU time of one update
};

// The same costs on every device and every ordered pair of them (every transfer path).
struct SyntheticProfile {
    std::string created;
    std::string tandem_version;
    double prepare_us = 0;
    double reintegrate_gbps = 0;
    double reintegrate_latency_us = 0;
    std::vector<SyntheticWorkloadCost> workloads;
    double sync_us = 0;
    double transfer_gbps = 0;
    double transfer_latency_us = 0;
};

// Writes a profile of `devices` with `costs` to `path` (atomically). Throws tandem::Error.
void save_synthetic_profile(const std::vector<DeviceInfo>& devices, const SyntheticProfile& costs,
                            const std::filesystem::path& path);

} // namespace tandem::harness
