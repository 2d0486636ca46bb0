// Adapter discovery and selection. Every physical device is listed, CPU devices included, and
// each may be opened as several logical devices ("virtual devices"); every opening is its own
// adapter with its own index, so one lavapipe can act as a primary and two workers for real.
// Plain functions over plain data; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/device_info.hpp"

namespace tandem::detail {

class Instance;

struct Adapter {
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    DeviceInfo info;
};

// How many logical devices each physical device is opened as: TANDEM_VIRTUAL_DEVICES, or
// `fallback` when unset. Throws Error for anything but a whole number from 1 to 16. One of the
// debug variables (tandem/runtime.hpp): a standalone runtime reads it, an embedded one never.
[[nodiscard]] std::uint32_t virtual_devices_from_env(std::uint32_t fallback);
[[nodiscard]] std::uint32_t parse_virtual_devices(std::string_view text);

// Lists every physical device `virtual_devices` times. Adapter indices run physical-major:
// physical 0 opening 0, physical 0 opening 1, ..., physical 1 opening 0, ...
[[nodiscard]] std::vector<Adapter> discover_adapters(const Instance& instance,
                                                     std::uint32_t virtual_devices);

// The pair matrix over every ordered (worker, primary) pair of `adapters`, diagonal included.
[[nodiscard]] std::vector<PairInfo> pair_matrix(const std::vector<Adapter>& adapters);

// Which adapter is the primary and which are workers.
struct Selection {
    std::uint32_t primary = 0;
    std::vector<std::uint32_t> workers;
};

// Resolves one selector against `adapters`: an index ("2"), a UUID (as `tandem devices` prints
// it, full or a prefix of at least 8 hex digits), a PCI address ("pci:0000:3b:00.0", or without
// "pci:" or the domain: "3b:00.0"), vendor:device in hex ("10de:2330"), or a case-insensitive
// name substring ("h200"). Only indices change between boots. Returns every match, in index
// order; throws Error naming the selector and listing the adapters when nothing matches.
[[nodiscard]] std::vector<std::uint32_t> match_adapters(const std::vector<Adapter>& adapters,
                                                        std::string_view selector);

// `primary`: "auto" or a selector. `workers`: "auto" (every other adapter) or a comma-separated
// list of selectors. With "auto" the primary is the fastest discrete GPU (then integrated,
// virtual, CPU; more device-local memory first). When only one adapter exists and workers are
// "auto", `adapters` gains a second opening of it, so the pipeline still spans two devices.
[[nodiscard]] Selection select_adapters(std::vector<Adapter>& adapters, std::string_view primary,
                                        std::string_view workers);

// The workers of a runtime embedded on adapter `primary` (the application's device). `workers`
// "auto": every other GPU, that is every adapter but the primary that is not a CPU device
// (lavapipe) unless `cpu_workers`; the other openings of the primary's physical device are
// among them only where `adapters` holds them (virtual devices asked for). Nothing is added.
// Else as select_adapters.
[[nodiscard]] std::vector<std::uint32_t>
select_embedded_workers(const std::vector<Adapter>& adapters, std::uint32_t primary,
                        std::string_view workers, bool cpu_workers);

} // namespace tandem::detail
