#include "harness/profile_file.hpp"

#include <system_error>

#include "sched/profile.hpp"
#include "tandem/error.hpp"

namespace tandem::harness {

std::filesystem::path default_profile_path() {
    return detail::default_profile_path();
}

std::string existing_profile_path(const std::string& path_arg, std::string& note) {
    std::filesystem::path path;
    try {
        path = path_arg.empty() ? detail::default_profile_path() : std::filesystem::path(path_arg);
    } catch (const Error& e) {
        note = std::string("no profile path: ") + e.what();
        return {};
    }
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        note = "no calibration profile at " + path.string() + " (run `tandem calibrate`)";
        return {};
    }
    return path.string();
}

void save_synthetic_profile(const std::vector<DeviceInfo>& devices, const SyntheticProfile& costs,
                            const std::filesystem::path& path) {
    detail::Profile profile = detail::profile_skeleton(devices);
    profile.created = costs.created;
    profile.tandem_version = costs.tandem_version;
    for (detail::DeviceProfile& d : profile.devices) {
        d.prepare_us = costs.prepare_us;
        d.reintegrate = {costs.reintegrate_gbps, costs.reintegrate_latency_us};
        for (const SyntheticWorkloadCost& w : costs.workloads) {
            d.workloads.push_back({w.kind, w.width, w.height, w.work, w.ms, {}});
        }
    }
    for (const detail::DeviceProfile& w : profile.devices) {
        for (const detail::DeviceProfile& p : profile.devices) {
            if (w.index == p.index) {
                continue;
            }
            detail::PairProfile pair;
            pair.worker = w.index;
            pair.primary = p.index;
            pair.sync_us = costs.sync_us;
            for (const auto transfer :
                 {TransferPath::ZeroCopy, TransferPath::SharedMemory, TransferPath::CudaPeer,
                  TransferPath::HostImported, TransferPath::HostCopy}) {
                pair.paths.push_back({transfer, {costs.transfer_gbps, costs.transfer_latency_us}});
            }
            profile.pairs.push_back(pair);
        }
    }
    detail::save_profile(profile, path);
}

} // namespace tandem::harness
