// Builds the capability matrix (one DeviceInfo per adapter) and the pair matrix (one PairInfo
// per ordered worker -> primary pair) from what the Vulkan driver reports. Pure queries: nothing
// here creates a logical device. Any thread; no state.
#pragma once

#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/device_info.hpp"

namespace tandem::detail {

// The formats the matrix reports, with their short names, in report order.
struct NamedFormat {
    VkFormat format;
    const char* name;
};
inline constexpr NamedFormat k_reported_formats[] = {
    {VK_FORMAT_R8G8B8A8_UNORM, "RGBA8"},
    {VK_FORMAT_B8G8R8A8_UNORM, "BGRA8"},
    {VK_FORMAT_R16G16B16A16_SFLOAT, "RGBA16F"},
    {VK_FORMAT_R32_SFLOAT, "R32F"},
    {VK_FORMAT_D32_SFLOAT, "D32"},
};

// Everything the capability matrix reports for `physical`. `index`, `physical_index` and
// `virtual_index` are copied into the result.
[[nodiscard]] DeviceInfo query_device_info(VkPhysicalDevice physical, std::uint32_t index,
                                           std::uint32_t physical_index,
                                           std::uint32_t virtual_index);

// The pair cell for moving results from `worker` to `primary`. When both are the same adapter
// (same index) only the same-device path applies. An application's device answers for what it
// enabled (core/embedding.hpp's enabled_view): a reason names an extension it was created
// without.
[[nodiscard]] PairInfo query_pair_info(const DeviceInfo& worker, const DeviceInfo& primary);

// True when both devices export and import timeline semaphores as opaque fds (what CUDA's
// ordering of the cuda-peer path's copies on the GPUs needs).
[[nodiscard]] inline bool both_export_timelines(const DeviceInfo& a, const DeviceInfo& b) noexcept {
    return a.features.external_semaphore_fd_timeline && b.features.external_semaphore_fd_timeline;
}

// True when the physical device reports `extension`.
[[nodiscard]] bool has_extension(const DeviceInfo& info, std::string_view extension);

} // namespace tandem::detail
