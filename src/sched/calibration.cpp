#include "sched/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>

#include "core/stats.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

std::vector<ReferenceWorkload> reference_workloads() {
    std::vector<ReferenceWorkload> out = {{"pattern", 256, 256, 0}, {"pattern", 1024, 1024, 0}};
    for (const std::uint32_t size : {256u, 512u, 1024u}) {
        for (const std::uint64_t triangles : {1000u, 100000u}) {
            out.push_back({"capture", size, size, triangles});
        }
    }
    return out;
}

std::vector<std::uint64_t> reference_transfer_sizes() {
    return {64u << 10, 1u << 20, 16u << 20};
}

LinkCost fit_link(const std::vector<TransferSample>& samples) {
    std::map<std::uint64_t, std::vector<double>> by_size;
    for (const auto& s : samples) {
        by_size[s.bytes].push_back(s.ms);
    }
    if (by_size.size() < 2) {
        throw Error("a transfer path needs timings at two sizes or more to separate its latency "
                    "from its bandwidth",
                    "Measure each path at every reference size");
    }
    // Least squares of ms = a + b * bytes over the per-size medians.
    double n = 0.0;
    double sx = 0.0;
    double sy = 0.0;
    double sxx = 0.0;
    double sxy = 0.0;
    double largest = 0.0;
    double largest_ms = 0.0;
    for (auto& [bytes, times] : by_size) {
        const double x = static_cast<double>(bytes);
        const double y = median(times);
        n += 1.0;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        if (x > largest) {
            largest = x;
            largest_ms = y;
        }
    }
    const double denominator = n * sxx - sx * sx;
    double slope = (n * sxy - sx * sy) / denominator;
    double intercept = (sy - slope * sx) / n;
    if (intercept < 0.0) {
        // Refit through the origin: no negative latency.
        intercept = 0.0;
        slope = sxy / sxx;
    }
    LinkCost link;
    link.latency_us = intercept * 1000.0;
    if (slope > 0.0) {
        link.gbps = 1.0 / (slope * 1e6);
    } else {
        // Every size took about as long: the bandwidth is at least what the largest one shows.
        link.gbps = largest / (std::max(largest_ms, 1e-6) * 1e6);
    }
    return link;
}

namespace {

std::string utc_now() {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

std::string workload_text(const ReferenceWorkload& w) {
    std::string text = (w.label.empty() ? w.kind : w.kind + " " + w.label) + " " +
                       std::to_string(w.width) + "x" + std::to_string(w.height);
    if (w.work != 0) {
        text += " (" + std::to_string(w.work) + " triangles)";
    }
    return text;
}

} // namespace

Profile run_calibration(const std::vector<DeviceInfo>& devices, const std::vector<PairInfo>& pairs,
                        const CalibrationHooks& hooks,
                        const std::vector<ReferenceWorkload>& tasks) {
    Profile profile = profile_skeleton(devices);
    profile.created = utc_now();
    auto workloads = reference_workloads();
    workloads.insert(workloads.end(), tasks.begin(), tasks.end());

    // Count first, so the progress line can say "n of total".
    std::vector<const PairInfo*> measured_pairs;
    std::size_t total = 0;
    for (const auto& p : pairs) {
        const bool present =
            std::any_of(devices.begin(), devices.end(),
                        [&](const DeviceInfo& d) { return d.index == p.worker; }) &&
            std::any_of(devices.begin(), devices.end(),
                        [&](const DeviceInfo& d) { return d.index == p.primary; });
        if (p.worker != p.primary && present) {
            measured_pairs.push_back(&p);
            if (hooks.transfer) {
                total += static_cast<std::size_t>(std::count_if(
                    p.paths.begin(), p.paths.end(), [](const auto& a) { return a.available; }));
            }
            total += hooks.sync ? 1 : 0;
        }
    }
    total += devices.size() * ((hooks.workload ? workloads.size() : 0) + (hooks.prepare ? 1 : 0) +
                               (hooks.reintegrate ? 1 : 0));
    std::size_t step = 0;
    auto report = [&](std::string what) {
        if (hooks.progress) {
            hooks.progress({++step, total, std::move(what)});
        }
    };

    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto& device = devices[i];
        auto& entry = profile.devices[i];
        const auto on = " on adapter " + std::to_string(device.index);
        if (hooks.workload) {
            for (const auto& w : workloads) {
                report(workload_text(w) + on);
                const auto times = hooks.workload(device, w);
                if (!times.empty()) {
                    entry.workloads.push_back(
                        {w.kind, w.width, w.height, w.work, median(times), w.content});
                }
            }
        }
        if (hooks.prepare) {
            report("job preparation" + on);
            entry.prepare_us = median(hooks.prepare(device)) * 1000.0;
        }
        if (hooks.reintegrate) {
            report("reintegration" + on);
            const auto samples = hooks.reintegrate(device);
            if (!samples.empty()) {
                entry.reintegrate = fit_link(samples);
            }
        }
    }
    for (const auto* pair : measured_pairs) {
        PairProfile entry;
        entry.worker = pair->worker;
        entry.primary = pair->primary;
        entry.gpu_side_sync = pair->gpu_side_sync;
        const auto between = std::to_string(pair->worker) + " -> " + std::to_string(pair->primary);
        if (hooks.transfer) {
            for (const auto& path : pair->paths) {
                if (!path.available) {
                    continue;
                }
                report(std::string(to_string(path.path)) + " transfer " + between);
                const auto samples = hooks.transfer(*pair, path.path);
                if (!samples.empty()) {
                    entry.paths.push_back({path.path, fit_link(samples)});
                }
            }
        }
        if (hooks.sync) {
            report(std::string(pair->gpu_side_sync ? "GPU-side" : "host-bridge") +
                   " synchronisation " + between);
            entry.sync_us = median(hooks.sync(*pair)) * 1000.0;
        }
        profile.pairs.push_back(std::move(entry));
    }
    return profile;
}

std::string profile_summary(const Profile& profile) {
    std::string text;
    char line[256];
    for (const auto& d : profile.devices) {
        std::snprintf(line, sizeof line, "adapter %u: %s (driver %s)%s\n", d.index, d.name.c_str(),
                      d.driver_version.c_str(),
                      d.timing == "cpu-wall"
                          ? ", no GPU timestamps: times are CPU wall time of submit + wait"
                          : "");
        text += line;
        std::snprintf(line, sizeof line, "  prepare %.3f ms, reintegrate %.2f GB/s + %.1f us\n",
                      d.prepare_us / 1000.0, d.reintegrate.gbps, d.reintegrate.latency_us);
        text += line;
        for (const auto& w : d.workloads) {
            std::snprintf(line, sizeof line, "  %-8s %5ux%-5u work %-7llu %10.3f ms%s%s\n",
                          w.kind.c_str(), w.width, w.height,
                          static_cast<unsigned long long>(w.work), w.ms,
                          w.content.empty() ? "" : "  task ", w.content.c_str());
            text += line;
        }
    }
    for (const auto& p : profile.pairs) {
        std::snprintf(line, sizeof line, "adapter %u -> adapter %u: sync %.1f us (%s)\n", p.worker,
                      p.primary, p.sync_us, p.gpu_side_sync ? "GPU-side" : "host bridge");
        text += line;
        for (const auto& path : p.paths) {
            std::snprintf(line, sizeof line, "  %-14s %8.2f GB/s + %8.1f us\n",
                          to_string(path.path), path.link.gbps, path.link.latency_us);
            text += line;
        }
    }
    return text;
}

} // namespace tandem::detail
