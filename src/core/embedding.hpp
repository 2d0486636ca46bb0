// The embedding contract inside Tandem: the one list of the device extensions and features
// Tandem uses (what Device enables on the devices it opens, what embedding_requirements() asks
// an engine for), the check an application's device must pass, and the device information as
// the application enabled it. Plain functions over plain data; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/device_info.hpp"
#include "tandem/embedding.hpp"

namespace tandem::detail {

// One device extension Tandem uses. All of them are optional today: Tandem does without what
// each unlocks.
struct DeviceExtensionOption {
    const char* name;
    bool required;
    const char* unlocks; // what it gives, one sentence
    const char* without; // what is lost without it, one sentence
};
inline constexpr DeviceExtensionOption k_device_extension_options[] = {
    {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, false,
     "the zero-copy, shared-memory and cuda-peer transfer paths: memory exported as an opaque fd "
     "and imported by the other device (or by CUDA), between openings of one GPU or GPUs with "
     "equal UUIDs, and CUDA interop between GPUs",
     "rules out the zero-copy, shared-memory and cuda-peer transfer paths"},
    {VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME, false,
     "GPU-side synchronisation: the primary waits for a worker's results on its GPU through an "
     "opaque-fd timeline semaphore instead of a host bridge thread, and CUDA orders the "
     "cuda-peer path's copies on the GPUs",
     "rules out GPU-side synchronisation with other devices: every transfer path hands results "
     "over through a host bridge thread, and the cuda-peer path's copies are run by that thread "
     "(no path is ruled out)"},
    {VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME, false,
     "the host-imported transfer path: both devices import one pinned host allocation, a copy "
     "fewer than host-copy",
     "rules out the host-imported transfer path"},
    {VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME, false,
     "GPU timestamps on the host's timeline (with hostQueryReset): transfers timed band by band "
     "on both GPUs",
     "rules out placing GPU timestamps on the host's timeline (transfers timed on the GPUs)"},
    {VK_EXT_MEMORY_BUDGET_EXTENSION_NAME, false,
     "each memory heap's budget and usage in the device information",
     "leaves the memory heaps' budget and usage unreported"},
};

// One feature Tandem uses: a member of VkPhysicalDeviceVulkan12Features or 13Features, and
// its boolean in EmbeddingFeatures.
struct FeatureOption {
    const char* name;
    const char* structure;
    bool required;
    bool EmbeddingFeatures::*member;
    const char* unlocks;
    const char* without;
};
inline constexpr FeatureOption k_feature_options[] = {
    {"timelineSemaphore", "VkPhysicalDeviceVulkan12Features", true,
     &EmbeddingFeatures::timeline_semaphore,
     "timeline semaphores: every hand-off between Tandem's queues, its workers and the "
     "application's frames",
     ""},
    {"synchronization2", "VkPhysicalDeviceVulkan13Features", true,
     &EmbeddingFeatures::synchronization2,
     "vkQueueSubmit2 and vkCmdPipelineBarrier2, which every submission and barrier of Tandem "
     "uses",
     ""},
    {"dynamicRendering", "VkPhysicalDeviceVulkan13Features", true,
     &EmbeddingFeatures::dynamic_rendering,
     "rendering without render pass objects: the capture and demo workloads' graphics pipelines",
     ""},
    {"maintenance4", "VkPhysicalDeviceVulkan13Features", true, &EmbeddingFeatures::maintenance4,
     "SPIR-V that declares workgroup sizes with LocalSizeId (glslc's vulkan1.3 target): Tandem's "
     "compute shaders",
     ""},
    {"hostQueryReset", "VkPhysicalDeviceVulkan12Features", false,
     &EmbeddingFeatures::host_query_reset,
     "timestamp queries reset from the host: with VK_EXT_calibrated_timestamps, transfers timed "
     "band by band on both GPUs",
     "rules out placing GPU timestamps on the host's timeline (transfers timed on the GPUs)"},
};

// The required features, all set.
[[nodiscard]] EmbeddingFeatures required_features() noexcept;
// What Tandem enables on a device it opens itself: every required feature, each optional one
// `info`'s driver has; every extension of the list the driver has.
[[nodiscard]] EmbeddingFeatures features_to_enable(const DeviceInfo& info) noexcept;
[[nodiscard]] std::vector<const char*> extensions_to_enable(const DeviceInfo& info);
// Sets the members of `vulkan12` and `vulkan13` that `features` has (others untouched).
void set_feature_structs(const EmbeddingFeatures& features,
                         VkPhysicalDeviceVulkan12Features& vulkan12,
                         VkPhysicalDeviceVulkan13Features& vulkan13) noexcept;

// Throws Error (VK_ERROR_FEATURE_NOT_PRESENT) when an application's device, of Vulkan version
// `api_version` with `info` as its driver describes it, lacks a required item: the sentence names
// each one and says to create the device from embedding_requirements().
void check_embedded_device(const DeviceInfo& info, std::uint32_t api_version,
                           std::span<const std::string> enabled_extensions,
                           const EmbeddingFeatures& enabled);

// `info` (what the driver has) as an application's device enabled it: each feature only where
// its extension or feature was enabled, and `not_enabled` naming each optional item the driver
// has that the device was created without, with what that rules out.
[[nodiscard]] DeviceInfo enabled_view(DeviceInfo info,
                                      std::span<const std::string> enabled_extensions,
                                      const EmbeddingFeatures& enabled);

// The entry of `info.not_enabled` for `name`, or null when the device does not lack it that way.
[[nodiscard]] const NotEnabled* find_not_enabled(const DeviceInfo& info,
                                                 std::string_view name) noexcept;

} // namespace tandem::detail
