// The calibration profile: what `tandem calibrate` measured on this machine, as plain data.
// Per device: its identity (device UUID, driver UUID, driver version, name, which logical
// opening), the cost of reference workloads by kind and size (and of the application's own
// tasks when calibration was given them), the fixed cost of preparing one
// job, and the primary-side cost of reintegrating a result. Per ordered (worker, primary) pair:
// each measured transfer path's bandwidth and fixed latency, and the synchronisation latency.
// JSON form (schema: docs/profile-json.md) is loaded and saved here; validation against the
// adapters present refuses a profile measured on other hardware or drivers.
// Plain values: copy freely, any thread; nothing here touches Vulkan.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tandem/device_info.hpp"

namespace tandem::detail {

inline constexpr int k_profile_schema_version = 1;

// One measured workload: `kind` ("pattern", "capture", ...) at `width` x `height` with `work`
// units (triangles for captures, 0 where the kind has no such dimension). `content` is empty for
// the generated reference workloads; for an application's own task it names what was drawn
// (run_inputs.hpp, task_content_key), and the cost model uses it only for that same content.
struct WorkloadSample {
    std::string kind;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint64_t work = 0;
    double ms = 0.0; // median GPU time of one update
    std::string content;
};

// A fixed latency plus a bandwidth: time(bytes) = latency_us + bytes / bandwidth.
struct LinkCost {
    double gbps = 0.0; // GB/s (1e9 bytes per second)
    double latency_us = 0.0;
    [[nodiscard]] double ms_for(std::uint64_t bytes) const noexcept;
};

struct DeviceProfile {
    // Identity: what validation compares with the adapters present.
    std::uint32_t index = 0; // adapter index at calibration time (pairs refer to it)
    std::uint32_t virtual_index = 0;
    std::string name;
    std::string device_uuid; // 8-4-4-4-12 hex, as tandem::to_string(Uuid) writes it
    std::string driver_uuid;
    std::string driver_version;
    // Costs.
    double prepare_us = 0.0; // recording and submitting one job, CPU side
    LinkCost reintegrate;    // as a primary: copying a result into its image (0 GB/s: unmeasured)
    std::vector<WorkloadSample> workloads;
    // How the workload and reintegration times were taken: "gpu-timestamps", or "cpu-wall"
    // (submit to fence, where the queue has no timestamps); empty when unknown (optional in JSON).
    std::string timing;
};

struct PathProfile {
    TransferPath path = TransferPath::HostCopy;
    LinkCost link;
};

// Results move worker -> primary; `worker` and `primary` are DeviceProfile::index values.
struct PairProfile {
    std::uint32_t worker = 0;
    std::uint32_t primary = 0;
    bool gpu_side_sync = false; // false: the host bridge signals the primary
    double sync_us = 0.0;       // completion on the worker -> primary may start
    std::vector<PathProfile> paths;
    [[nodiscard]] const PathProfile* find(TransferPath path) const noexcept;
};

struct Profile {
    std::string created; // ISO 8601 UTC, informational
    std::string tandem_version;
    std::vector<DeviceProfile> devices;
    std::vector<PairProfile> pairs;

    [[nodiscard]] const DeviceProfile* device(std::uint32_t index) const noexcept;
    [[nodiscard]] const PairProfile* pair(std::uint32_t worker,
                                          std::uint32_t primary) const noexcept;
};

// A profile with the identity of every device in `devices` and no measurements: the starting
// point of `tandem calibrate` (and of synthetic profiles in tests).
[[nodiscard]] Profile profile_skeleton(const std::vector<DeviceInfo>& devices);

[[nodiscard]] nlohmann::json to_json(const Profile& profile);
// Throws Error naming the field when the document is not a profile of this schema.
[[nodiscard]] Profile profile_from_json(const nlohmann::json& document);
// Parses a profile's JSON text (untrusted: any bytes) and reads it as profile_from_json does;
// throws Error for anything else, naming the byte of a syntax error and the JSON pointer of a
// number out of range.
[[nodiscard]] Profile parse_profile(std::string_view text);

// $XDG_CACHE_HOME/tandem/profile.json, else $HOME/.cache/tandem/profile.json. Throws Error when
// neither variable is set (or XDG_CACHE_HOME is relative and HOME is unset).
[[nodiscard]] std::filesystem::path default_profile_path();
// Throws Error when the file cannot be read or is not a profile (the message names the file).
[[nodiscard]] Profile load_profile(const std::filesystem::path& path);
// Writes atomically (temporary file, then rename), creating the folder. Throws Error on failure.
void save_profile(const Profile& profile, const std::filesystem::path& path);

// One reason the profile does not describe the adapters present.
struct ProfileMismatch {
    std::optional<std::uint32_t> adapter; // the present adapter concerned, if any
    std::string reason;                   // one sentence
};

// Every way `profile` fails to describe `devices` (empty when it matches). A present adapter
// matches the profile device with equal device UUID and logical opening; then driver UUID,
// driver version and name must be equal too. Every present adapter needs a profile device and
// every profile device must be present.
[[nodiscard]] std::vector<ProfileMismatch> check_profile(const Profile& profile,
                                                         const std::vector<DeviceInfo>& devices);

// For each present adapter (by DeviceInfo::index), the DeviceProfile::index it matches. Throws
// Error listing every mismatch and telling the user to run `tandem calibrate` when the profile
// does not describe exactly the adapters present.
[[nodiscard]] std::vector<std::uint32_t> bind_profile(const Profile& profile,
                                                      const std::vector<DeviceInfo>& devices);

} // namespace tandem::detail
