#include "sched/profile.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>
#include <type_traits>
#include <utility>

#include "core/json_refusal.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

using nlohmann::json;

namespace {

constexpr const char* k_recalibrate = "Run `tandem calibrate` to measure this machine again";

std::string adapter_label(const DeviceInfo& d) {
    return "adapter " + std::to_string(d.index) + " (" + d.name + ")";
}

std::string profile_label(const DeviceProfile& d) {
    return "profile device " + std::to_string(d.index) + " (" + d.name + ")";
}

json link_json(const LinkCost& link) {
    return {{"gbps", link.gbps}, {"latency_us", link.latency_us}};
}

// Reads `key` from `object` as T, naming `where` and the key when it is missing, mistyped or (an
// integer) out of T's range: get<T>() would wrap or truncate it without a word.
template <typename T>
T field(const json& object, const char* key, const std::string& where) {
    const auto it = object.find(key); // end() for an object without it, or a non-object
    if (it == object.end()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile's " + where + " has no \"" + std::string(key) + "\"",
                    k_recalibrate);
    }
    const auto wrong_type = [&] {
        return Error("the profile's " + where + " has a \"" + std::string(key) +
                         "\" of the wrong type (" + it->dump() + ")",
                     k_recalibrate);
    };
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // get<unsigned>() would wrap a negative number; a float is not an index or a count.
        if (std::is_unsigned_v<T> ? !it->is_number_unsigned() : !it->is_number_integer()) {
            throw wrong_type();
        }
        const bool fits = it->is_number_unsigned()
                              ? std::cmp_less_equal(it->template get<std::uint64_t>(),
                                                    std::numeric_limits<T>::max())
                              : std::in_range<T>(it->template get<std::int64_t>());
        if (!fits) {
            throw Error(ErrorCategory::InvalidArgument,
                        "the profile's " + where + " has \"" + std::string(key) +
                            "\" = " + it->dump() + ", out of range (" +
                            std::to_string(std::numeric_limits<T>::min()) + " to " +
                            std::to_string(std::numeric_limits<T>::max()) + ")",
                        k_recalibrate);
        }
        return it->template get<T>();
    } else {
        try {
            return it->template get<T>();
        } catch (const json::exception&) {
            throw wrong_type();
        }
    }
}

// An optional string member: empty when absent, refused when present and not a string.
std::string optional_string(const json& object, const char* key, const std::string& where) {
    return object.contains(key) ? field<std::string>(object, key, where) : std::string{};
}

// A member that must be an array (the elements are read one by one).
const json& array_field(const json& object, const char* key, const std::string& where) {
    const auto it = object.find(key); // end() for an object without it, or a non-object
    if (it == object.end()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile's " + where + " has no \"" + std::string(key) + "\"",
                    k_recalibrate);
    }
    if (!it->is_array()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile's " + where + " has a \"" + std::string(key) +
                        "\" that is not an array",
                    k_recalibrate);
    }
    return *it;
}

double non_negative(double value, const char* key, const std::string& where) {
    if (!(value >= 0.0) || value > 1e12) {
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile's " + where + " has \"" + std::string(key) +
                        "\" = " + std::to_string(value) + ", not a non-negative finite number",
                    k_recalibrate);
    }
    return value;
}

// `require_bandwidth`: a measured transfer path always has one; a device's reintegration may be
// unmeasured (0 GB/s: only its latency counts).
LinkCost link_from_json(const json& object, const std::string& where, bool require_bandwidth) {
    LinkCost link;
    link.gbps = non_negative(field<double>(object, "gbps", where), "gbps", where);
    link.latency_us = non_negative(field<double>(object, "latency_us", where), "latency_us", where);
    if (require_bandwidth && link.gbps <= 0.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile's " + where + " has a bandwidth of 0 GB/s", k_recalibrate);
    }
    return link;
}

} // namespace

double LinkCost::ms_for(std::uint64_t bytes) const noexcept {
    const double transfer_ms = gbps > 0.0 ? static_cast<double>(bytes) / (gbps * 1e6) : 0.0;
    return latency_us / 1000.0 + transfer_ms;
}

const PathProfile* PairProfile::find(TransferPath path) const noexcept {
    const auto it =
        std::find_if(paths.begin(), paths.end(), [&](const auto& p) { return p.path == path; });
    return it == paths.end() ? nullptr : &*it;
}

const DeviceProfile* Profile::device(std::uint32_t index) const noexcept {
    const auto it = std::find_if(devices.begin(), devices.end(),
                                 [&](const auto& d) { return d.index == index; });
    return it == devices.end() ? nullptr : &*it;
}

const PairProfile* Profile::pair(std::uint32_t worker, std::uint32_t primary) const noexcept {
    const auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) {
        return p.worker == worker && p.primary == primary;
    });
    return it == pairs.end() ? nullptr : &*it;
}

Profile profile_skeleton(const std::vector<DeviceInfo>& devices) {
    Profile profile;
    for (const auto& d : devices) {
        DeviceProfile p;
        p.index = d.index;
        p.virtual_index = d.virtual_index;
        p.name = d.name;
        p.device_uuid = to_string(d.device_uuid);
        p.driver_uuid = to_string(d.driver_uuid);
        p.driver_version = d.driver_version;
        profile.devices.push_back(std::move(p));
    }
    return profile;
}

json to_json(const Profile& profile) {
    json devices = json::array();
    for (const auto& d : profile.devices) {
        json workloads = json::array();
        for (const auto& w : d.workloads) {
            json entry = {{"kind", w.kind},
                          {"width", w.width},
                          {"height", w.height},
                          {"work", w.work},
                          {"ms", w.ms}};
            if (!w.content.empty()) {
                entry["content"] = w.content;
            }
            workloads.push_back(std::move(entry));
        }
        json device = {{"index", d.index},
                       {"virtual_index", d.virtual_index},
                       {"name", d.name},
                       {"device_uuid", d.device_uuid},
                       {"driver_uuid", d.driver_uuid},
                       {"driver_version", d.driver_version},
                       {"prepare_us", d.prepare_us},
                       {"reintegrate", link_json(d.reintegrate)},
                       {"workloads", workloads}};
        if (!d.timing.empty()) {
            device["timing"] = d.timing;
        }
        devices.push_back(std::move(device));
    }
    json pairs = json::array();
    for (const auto& p : profile.pairs) {
        json paths = json::array();
        for (const auto& path : p.paths) {
            json entry = link_json(path.link);
            entry["path"] = to_string(path.path);
            paths.push_back(entry);
        }
        pairs.push_back({{"worker", p.worker},
                         {"primary", p.primary},
                         {"gpu_side_sync", p.gpu_side_sync},
                         {"sync_us", p.sync_us},
                         {"paths", paths}});
    }
    return {{"schema_version", k_profile_schema_version},
            {"created", profile.created},
            {"tandem_version", profile.tandem_version},
            {"devices", devices},
            {"pairs", pairs}};
}

namespace {

Profile read_profile(const json& document) {
    if (!document.is_object()) {
        throw Error(ErrorCategory::InvalidArgument, "the profile is not a JSON object",
                    k_recalibrate);
    }
    const int schema = field<int>(document, "schema_version", "document");
    if (schema != k_profile_schema_version) {
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile has schema_version " + std::to_string(schema) +
                        ", this tandem reads version " + std::to_string(k_profile_schema_version),
                    k_recalibrate);
    }
    Profile profile;
    profile.created = optional_string(document, "created", "document");
    profile.tandem_version = optional_string(document, "tandem_version", "document");
    for (const auto& d : array_field(document, "devices", "document")) {
        const std::string where = "device " + std::to_string(profile.devices.size());
        DeviceProfile p;
        p.index = field<std::uint32_t>(d, "index", where);
        p.virtual_index = field<std::uint32_t>(d, "virtual_index", where);
        p.name = field<std::string>(d, "name", where);
        p.device_uuid = field<std::string>(d, "device_uuid", where);
        p.driver_uuid = field<std::string>(d, "driver_uuid", where);
        p.driver_version = field<std::string>(d, "driver_version", where);
        p.prepare_us = non_negative(field<double>(d, "prepare_us", where), "prepare_us", where);
        p.reintegrate = link_from_json(field<json>(d, "reintegrate", where), where, false);
        p.timing = optional_string(d, "timing", where);
        for (const auto& w : array_field(d, "workloads", where)) {
            const std::string at = where + " workload " + std::to_string(p.workloads.size());
            WorkloadSample sample;
            sample.kind = field<std::string>(w, "kind", at);
            sample.width = field<std::uint32_t>(w, "width", at);
            sample.height = field<std::uint32_t>(w, "height", at);
            sample.work = field<std::uint64_t>(w, "work", at);
            sample.ms = non_negative(field<double>(w, "ms", at), "ms", at);
            sample.content = optional_string(w, "content", at);
            if (sample.kind.empty() || sample.width == 0 || sample.height == 0) {
                throw Error(ErrorCategory::InvalidArgument,
                            "the profile's " + at + " needs a kind and a non-zero size",
                            k_recalibrate);
            }
            p.workloads.push_back(std::move(sample));
        }
        if (profile.device(p.index) != nullptr) {
            throw Error(ErrorCategory::InvalidArgument,
                        "the profile lists device index " + std::to_string(p.index) + " twice",
                        k_recalibrate);
        }
        profile.devices.push_back(std::move(p));
    }
    for (const auto& j : array_field(document, "pairs", "document")) {
        const std::string where = "pair " + std::to_string(profile.pairs.size());
        PairProfile p;
        p.worker = field<std::uint32_t>(j, "worker", where);
        p.primary = field<std::uint32_t>(j, "primary", where);
        if (profile.device(p.worker) == nullptr || profile.device(p.primary) == nullptr) {
            throw Error(ErrorCategory::InvalidArgument,
                        "the profile's " + where + " refers to a device it does not list",
                        k_recalibrate);
        }
        p.gpu_side_sync = field<bool>(j, "gpu_side_sync", where);
        p.sync_us = non_negative(field<double>(j, "sync_us", where), "sync_us", where);
        for (const auto& path : array_field(j, "paths", where)) {
            const auto name = field<std::string>(path, "path", where);
            const auto parsed = parse_transfer_path(name);
            if (!parsed) {
                throw Error(ErrorCategory::InvalidArgument,
                            "the profile's " + where + " names an unknown transfer path \"" + name +
                                "\"",
                            k_recalibrate);
            }
            p.paths.push_back({*parsed, link_from_json(path, where + " path " + name, true)});
        }
        profile.pairs.push_back(std::move(p));
    }
    return profile;
}

} // namespace

Profile profile_from_json(const json& document) {
    try {
        return read_profile(document);
    } catch (const json::exception& e) {
        // Every access above is checked; this keeps a missed one a refusal, not a crash.
        throw Error(ErrorCategory::InvalidArgument,
                    std::string("the profile cannot be read: ") + e.what(), k_recalibrate);
    }
}

Profile parse_profile(std::string_view text) {
    json document;
    try {
        document = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile is not valid JSON (byte " + std::to_string(e.byte) + ")",
                    k_recalibrate);
    } catch (const json::exception&) {
        // The parser's one other refusal: a number beyond what a double holds (1e999).
        const JsonRefusal where = locate_json_refusal(text);
        throw Error(ErrorCategory::InvalidArgument,
                    "the profile's " + where.pointer + " is " + where.token +
                        ", a number out of range (byte " + std::to_string(where.byte) + ")",
                    k_recalibrate);
    }
    return profile_from_json(document);
}

std::filesystem::path default_profile_path() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    // The XDG spec: a relative XDG_CACHE_HOME is invalid and must be ignored.
    if (xdg != nullptr && *xdg != '\0' && std::filesystem::path(xdg).is_absolute()) {
        return std::filesystem::path(xdg) / "tandem" / "profile.json";
    }
    const char* home = std::getenv("HOME");
    if (home != nullptr && *home != '\0') {
        return std::filesystem::path(home) / ".cache" / "tandem" / "profile.json";
    }
    throw Error("cannot find the cache folder for the calibration profile: neither "
                "XDG_CACHE_HOME nor HOME is set",
                "Set XDG_CACHE_HOME (or HOME), or pass the profile's path explicitly");
}

Profile load_profile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw Error("no calibration profile at " + path.string(),
                    "Run `tandem calibrate` to measure this machine");
    }
    std::stringstream text;
    text << in.rdbuf();
    try {
        return parse_profile(text.str());
    } catch (const Error& e) {
        throw Error(e.category(), e.result(),
                    "the calibration profile " + path.string() + " is unusable: " + e.context(),
                    e.hint());
    }
}

void save_profile(const Profile& profile, const std::filesystem::path& path) {
    std::error_code ec;
    if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec) {
            throw Error("cannot create " + path.parent_path().string() + " (" + ec.message() + ")",
                        "Check the folder's permissions or choose another profile path");
        }
    }
    auto temporary = path;
    temporary += ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << to_json(profile).dump(2) << '\n';
        if (!out) {
            throw Error("cannot write " + temporary.string(),
                        "Check the folder's permissions and free space");
        }
    }
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary, ec);
        throw Error("cannot replace " + path.string(),
                    "Check the folder's permissions and free space");
    }
}

std::vector<ProfileMismatch> check_profile(const Profile& profile,
                                           const std::vector<DeviceInfo>& devices) {
    std::vector<ProfileMismatch> mismatches;
    std::vector<bool> used(profile.devices.size(), false);
    for (const auto& d : devices) {
        const auto uuid = to_string(d.device_uuid);
        const auto it = std::find_if(
            profile.devices.begin(), profile.devices.end(), [&](const DeviceProfile& p) {
                return p.device_uuid == uuid && p.virtual_index == d.virtual_index;
            });
        if (it == profile.devices.end()) {
            // Say what differs from the profile device that held this adapter's place.
            const auto* same_index = profile.device(d.index);
            std::string reason = adapter_label(d) + " (device UUID " + uuid + ", opening " +
                                 std::to_string(d.virtual_index) + ") is not in the profile";
            if (same_index != nullptr && same_index->device_uuid != uuid) {
                reason += ": the device UUID differs from " + profile_label(*same_index) + "'s " +
                          same_index->device_uuid;
            } else if (same_index != nullptr) {
                reason += ": the profile measured fewer logical openings of this device";
            }
            mismatches.push_back({d.index, reason});
            continue;
        }
        used[static_cast<std::size_t>(it - profile.devices.begin())] = true;
        const auto driver_uuid = to_string(d.driver_uuid);
        if (it->driver_version != d.driver_version) {
            mismatches.push_back({d.index, adapter_label(d) + ": the driver version differs (" +
                                               d.driver_version + " now, " + it->driver_version +
                                               " in the profile)"});
        } else if (it->driver_uuid != driver_uuid) {
            mismatches.push_back({d.index, adapter_label(d) + ": the driver UUID differs (" +
                                               driver_uuid + " now, " + it->driver_uuid +
                                               " in the profile)"});
        } else if (it->name != d.name) {
            mismatches.push_back({d.index, adapter_label(d) + ": the device name differs (\"" +
                                               d.name + "\" now, \"" + it->name +
                                               "\" in the profile)"});
        }
    }
    for (std::size_t i = 0; i < profile.devices.size(); ++i) {
        if (!used[i]) {
            const auto& p = profile.devices[i];
            mismatches.push_back({std::nullopt, profile_label(p) + " (device UUID " +
                                                    p.device_uuid + ", opening " +
                                                    std::to_string(p.virtual_index) +
                                                    ") is missing from this machine"});
        }
    }
    return mismatches;
}

std::vector<std::uint32_t> bind_profile(const Profile& profile,
                                        const std::vector<DeviceInfo>& devices) {
    const auto mismatches = check_profile(profile, devices);
    if (!mismatches.empty()) {
        std::string message = "the calibration profile does not match the devices present: ";
        for (std::size_t i = 0; i < mismatches.size(); ++i) {
            message += (i == 0 ? "" : "; ") + mismatches[i].reason;
        }
        throw Error(ErrorCategory::InvalidArgument, message, k_recalibrate);
    }
    std::uint32_t size = 0;
    for (const auto& d : devices) {
        size = std::max(size, d.index + 1);
    }
    std::vector<std::uint32_t> binding(size, 0);
    for (const auto& d : devices) {
        const auto uuid = to_string(d.device_uuid);
        for (const auto& p : profile.devices) {
            if (p.device_uuid == uuid && p.virtual_index == d.virtual_index) {
                binding[d.index] = p.index;
            }
        }
    }
    return binding;
}

} // namespace tandem::detail
