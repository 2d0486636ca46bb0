#include "core/discovery.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "core/capabilities.hpp"
#include "core/instance.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

int type_rank(const std::string& type) {
    if (type == "discrete") {
        return 0;
    }
    if (type == "integrated") {
        return 1;
    }
    if (type == "virtual") {
        return 2;
    }
    if (type == "cpu") {
        return 4;
    }
    return 3;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string strip_dashes(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c != '-') {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

bool is_hex(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(),
                                        [](unsigned char c) { return std::isxdigit(c) != 0; });
}

// "10de:2330", as lspci -nn prints a PCI device's ids; a Khronos vendor id has five digits
// (lavapipe: "10005:0000").
std::string vendor_device_text(const DeviceInfo& info) {
    char text[24];
    std::snprintf(text, sizeof(text), "%04x:%04x", info.vendor_id, info.device_id);
    return text;
}

// "pci:0000:3b:00.0", "0000:3b:00.0" or "3b:00.0" (domain 0): the address, lower case, with its
// domain; empty when `selector` is not one.
std::string pci_selector(std::string_view selector) {
    std::string address = lower(selector);
    if (address.rfind("pci:", 0) == 0) {
        address.erase(0, 4);
    } else if (address.find('.') == std::string::npos) {
        return {};
    }
    if (std::count(address.begin(), address.end(), ':') == 1) {
        address = "0000:" + address;
    }
    const bool shaped = address.size() == 12 && address[4] == ':' && address[7] == ':' &&
                        address[10] == '.' && is_hex(address.substr(0, 4)) &&
                        is_hex(address.substr(5, 2)) && is_hex(address.substr(8, 2)) &&
                        is_hex(address.substr(11, 1));
    return shaped ? address : std::string();
}

// "10de:2330": four (five for a Khronos vendor id) hex digits, a colon, four hex digits.
bool is_vendor_device(std::string_view selector) {
    const std::size_t colon = selector.find(':');
    return (colon == 4 || colon == 5) && selector.size() == colon + 5 &&
           is_hex(selector.substr(0, colon)) && is_hex(selector.substr(colon + 1));
}

std::string adapter_list(const std::vector<Adapter>& adapters) {
    std::string text;
    for (const auto& a : adapters) {
        text += "\n  " + std::to_string(a.info.index) + ": " + a.info.name + " (" +
                tandem::to_string(a.info.device_uuid) + ", " + vendor_device_text(a.info) +
                (a.info.pci_address.empty() ? "" : ", pci:" + a.info.pci_address) + ")";
    }
    return text;
}

// The workers a comma-separated list of selectors names, each once, in the order named;
// none for "none" or an empty list.
std::vector<std::uint32_t> selected_workers(const std::vector<Adapter>& adapters,
                                            std::string_view workers) {
    std::vector<std::uint32_t> out;
    if (workers == "none" || workers.empty()) {
        return out;
    }
    std::size_t start = 0;
    while (start <= workers.size()) {
        const std::size_t comma = std::min(workers.find(',', start), workers.size());
        for (std::uint32_t index : match_adapters(adapters, workers.substr(start, comma - start))) {
            if (std::find(out.begin(), out.end(), index) == out.end()) {
                out.push_back(index);
            }
        }
        start = comma + 1;
    }
    return out;
}

} // namespace

std::uint32_t parse_virtual_devices(std::string_view text) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value < 1 || value > 16) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Virtual device count '" + std::string(text) + "' is not valid",
                    "Give a whole number from 1 to 16 (how many logical devices to open on each "
                    "physical device)");
    }
    return value;
}

std::uint32_t virtual_devices_from_env(std::uint32_t fallback) {
    const char* value = std::getenv("TANDEM_VIRTUAL_DEVICES");
    if (value == nullptr || *value == '\0') {
        return fallback;
    }
    return parse_virtual_devices(value);
}

std::vector<Adapter> discover_adapters(const Instance& instance, std::uint32_t virtual_devices) {
    std::vector<Adapter> adapters;
    const auto physicals = instance.physical_devices();
    std::uint32_t index = 0;
    for (std::uint32_t p = 0; p < physicals.size(); ++p) {
        DeviceInfo info = query_device_info(physicals[p], 0, p, 0);
        for (std::uint32_t v = 0; v < virtual_devices; ++v) {
            Adapter adapter{physicals[p], info};
            adapter.info.index = index++;
            adapter.info.virtual_index = v;
            adapters.push_back(std::move(adapter));
        }
    }
    return adapters;
}

std::vector<PairInfo> pair_matrix(const std::vector<Adapter>& adapters) {
    std::vector<PairInfo> pairs;
    for (const auto& worker : adapters) {
        for (const auto& primary : adapters) {
            pairs.push_back(query_pair_info(worker.info, primary.info));
        }
    }
    return pairs;
}

std::vector<std::uint32_t> match_adapters(const std::vector<Adapter>& adapters,
                                          std::string_view selector) {
    std::vector<std::uint32_t> matches;
    if (selector.empty()) {
        throw Error(ErrorCategory::InvalidArgument, "An empty device selector was given",
                    "Use an index, a UUID, a pci: address, vendor:device or part of a device "
                    "name; `tandem devices` lists them");
    }
    const bool numeric = std::all_of(selector.begin(), selector.end(),
                                     [](unsigned char c) { return std::isdigit(c) != 0; });
    const std::string pci = pci_selector(selector);
    if (lower(selector.substr(0, 4)) == "pci:" && pci.empty()) {
        throw Error(
            ErrorCategory::InvalidArgument,
            "Device selector '" + std::string(selector) + "' is not a PCI address",
            "Write it as lspci -D prints it: pci:0000:3b:00.0 (domain:bus:device.function)");
    }
    if (!pci.empty()) {
        for (const auto& a : adapters) {
            if (a.info.pci_address == pci) {
                matches.push_back(a.info.index);
            }
        }
    } else if (is_vendor_device(selector)) {
        for (const auto& a : adapters) {
            if (vendor_device_text(a.info) == lower(selector)) {
                matches.push_back(a.info.index);
            }
        }
    } else if (numeric && selector.size() < 8) {
        unsigned index = 0;
        std::from_chars(selector.data(), selector.data() + selector.size(), index);
        if (index < adapters.size()) {
            matches.push_back(index);
        }
    } else {
        const std::string hex = strip_dashes(selector);
        const bool uuid_like = is_hex(hex) && hex.size() >= 8;
        const std::string needle = lower(selector);
        for (const auto& a : adapters) {
            const bool by_uuid =
                uuid_like && strip_dashes(tandem::to_string(a.info.device_uuid)).rfind(hex, 0) == 0;
            const bool by_name = lower(a.info.name).find(needle) != std::string::npos;
            if (by_uuid || by_name) {
                matches.push_back(a.info.index);
            }
        }
    }
    if (matches.empty()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "No device matches '" + std::string(selector) +
                        "'. Devices:" + adapter_list(adapters),
                    "Use an index, a UUID, a pci: address, vendor:device or part of a device name "
                    "from this list (devices without a PCI address, such as lavapipe, match "
                    "none)");
    }
    return matches;
}

Selection select_adapters(std::vector<Adapter>& adapters, std::string_view primary,
                          std::string_view workers) {
    if (adapters.empty()) {
        throw Error(ErrorCategory::Unsupported, "No Vulkan device was found",
                    "Install mesa-vulkan-drivers (lavapipe) or your GPU's Vulkan driver");
    }
    Selection selection;
    if (primary == "auto") {
        auto best =
            std::min_element(adapters.begin(), adapters.end(), [](const auto& a, const auto& b) {
                const int ra = type_rank(a.info.type);
                const int rb = type_rank(b.info.type);
                if (ra != rb) {
                    return ra < rb;
                }
                return a.info.device_local_bytes > b.info.device_local_bytes;
            });
        selection.primary = best->info.index;
    } else {
        selection.primary = match_adapters(adapters, primary).front();
    }

    if (workers == "auto") {
        // One adapter: a second opening of it, so that the pipeline still spans two devices
        // (how a machine with one GPU, or lavapipe alone, runs the demo).
        if (adapters.size() == 1) {
            Adapter second = adapters.front();
            second.info.index = 1;
            second.info.virtual_index = adapters.front().info.virtual_index + 1;
            adapters.push_back(std::move(second));
        }
        for (const auto& a : adapters) {
            if (a.info.index != selection.primary) {
                selection.workers.push_back(a.info.index);
            }
        }
    } else {
        selection.workers = selected_workers(adapters, workers);
    }
    return selection;
}

std::vector<std::uint32_t> select_embedded_workers(const std::vector<Adapter>& adapters,
                                                   std::uint32_t primary, std::string_view workers,
                                                   bool cpu_workers) {
    if (workers != "auto") {
        return selected_workers(adapters, workers);
    }
    const Adapter& own = adapters.at(primary);
    std::vector<std::uint32_t> out;
    for (const auto& a : adapters) {
        const bool own_device = a.physical == own.physical;
        if (a.info.index != primary && (own_device || a.info.type != "cpu" || cpu_workers)) {
            out.push_back(a.info.index);
        }
    }
    return out;
}

} // namespace tandem::detail
