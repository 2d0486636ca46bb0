// The embedding contract: what an engine that creates its own Vulkan instance and device gives
// Tandem, stated the way OpenXR states its graphics requirements (xrGetVulkanDeviceExtensionsKHR,
// xrGetVulkanGraphicsRequirements2KHR). embedding_requirements() lists the Vulkan version, the
// instance and device extensions and the features Tandem uses, each required or optional, with
// whether this physical device has it and what it unlocks; its feature structs merge into the
// engine's VkDeviceCreateInfo. EmbedInfo then says what the engine enabled: Runtime(EmbedInfo)
// refuses a device without a required item with a tandem::Error naming it, and an optional one
// left out is reported once, in DeviceInfo::not_enabled and the pair reasons (never as a path
// that failed), and Tandem does without what it unlocks.
//
// clang-format off
//
//     // Before the instance: its API version and extensions.
//     tandem::EmbeddingRequirements need = tandem::embedding_requirements();
//     app_info.apiVersion = std::max(app_info.apiVersion, need.api_version);
//     for (const char* e : need.instance_extension_names()) instance_extensions.push_back(e);
//     // ... vkCreateInstance, pick `physical` ...
//     need = tandem::embedding_requirements(physical);      // throws nothing; need.missing()
//     // need.queues: a graphics+compute family; one more queue there gives Tandem its own.
//     for (const char* e : need.device_extension_names()) device_extensions.push_back(e);
//     need.merge_features(engine_vulkan12, engine_vulkan13); // the engine's own feature structs
//     // ... vkCreateDevice(physical, &create_info, ...) ...
//     tandem::EmbedInfo embed{instance, physical, device, family, queue_index};
//     embed.set_enabled(create_info);                       // extensions and features it enabled
//     tandem::Runtime runtime(embed);
//
// clang-format on
//
// Threads: any; the functions only query the physical device. Plain data otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/export.hpp"

namespace tandem {

// One thing Tandem asks of the engine's instance or device: an extension, or a feature (a member
// of a Vulkan 1.2 or 1.3 feature struct).
struct Requirement {
    std::string name;      // "VK_KHR_external_semaphore_fd", or a member: "synchronization2"
    std::string structure; // for a feature, its struct: "VkPhysicalDeviceVulkan13Features"
    // Required: Tandem refuses a device without it. Optional: Tandem does without what it
    // unlocks, and says so once in the device and pair information.
    bool required = false;
    // The physical device has it (the Vulkan loader, for an instance extension); false for a
    // device item when no physical device was given.
    bool supported = false;
    std::string unlocks; // what it gives, one sentence
};

// The features Tandem uses, as booleans: what the engine enabled (EmbedInfo::enabled_features).
// Required: timeline_semaphore, synchronization2, dynamic_rendering, maintenance4.
// Optional: host_query_reset.
struct EmbeddingFeatures {
    bool timeline_semaphore = false; // VkPhysicalDeviceVulkan12Features::timelineSemaphore
    bool host_query_reset = false;   // VkPhysicalDeviceVulkan12Features::hostQueryReset
    bool synchronization2 = false;   // VkPhysicalDeviceVulkan13Features::synchronization2
    bool dynamic_rendering = false;  // VkPhysicalDeviceVulkan13Features::dynamicRendering
    bool maintenance4 = false;       // VkPhysicalDeviceVulkan13Features::maintenance4
};

// A queue family of the physical device that can carry Tandem's queue.
struct QueueFamilyOffer {
    std::uint32_t family = 0;      // its index, for VkDeviceQueueCreateInfo::queueFamilyIndex
    std::uint32_t queue_count = 0; // VkQueueFamilyProperties::queueCount: how many it offers
};

// The queues Tandem submits to, stated like a Requirement: queues of one family with every bit of
// `flags`. Tandem uses one queue (EmbedInfo::queue_family, queue_index) whatever the entry.
struct QueueRequirement {
    VkQueueFlags flags = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    // Queues of that family the engine creates (VkDeviceQueueCreateInfo::queueCount): 1 when
    // Tandem shares the engine's queue, 2 when it has one of its own beside the engine's.
    std::uint32_t count = 1;
    bool required = false;
    // Some family of the physical device has `flags` and at least `count` queues; false when no
    // physical device was given.
    bool supported = false;
    std::vector<QueueFamilyOffer> families; // those with `flags`, lowest index first
    std::string unlocks;                    // what it gives, one sentence
};

struct TANDEM_API EmbeddingRequirements {
    // The least Vulkan version: VkApplicationInfo::apiVersion of the engine's instance and the
    // physical device's apiVersion must both be at least this.
    std::uint32_t api_version = VK_API_VERSION_1_3;
    std::uint32_t loader_api_version = 0; // vkEnumerateInstanceVersion
    std::uint32_t device_api_version = 0; // the physical device's; 0 when none was given
    std::vector<Requirement> instance_extensions;
    std::vector<Requirement> device_extensions;
    std::vector<Requirement> features;
    // Two entries: queues[0], required, one queue of a graphics+compute family (the engine's own,
    // shared under EmbedInfo::queue_mutex); queues[1], optional, two queues of such a family, the
    // second Tandem's alone (hand it over with no queue_mutex).
    std::vector<QueueRequirement> queues;
    // The feature structs with every required member set, and each optional one the physical
    // device supports; pNext null. Chain them into VkDeviceCreateInfo::pNext, or merge_features()
    // into the engine's own.
    VkPhysicalDeviceVulkan12Features vulkan12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features vulkan13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};

    // True when the loader, the physical device and its driver have every required item (the
    // loader's alone when no physical device was given).
    [[nodiscard]] bool satisfied() const { return missing().empty(); }
    // What they lack of the required items, one sentence; empty when satisfied().
    [[nodiscard]] std::string missing() const;
    // The names to add to VkInstanceCreateInfo / VkDeviceCreateInfo::ppEnabledExtensionNames:
    // every required extension and each supported optional one. They point into this object.
    [[nodiscard]] std::vector<const char*> instance_extension_names() const;
    [[nodiscard]] std::vector<const char*> device_extension_names() const;
    // ORs vulkan12's and vulkan13's members into the engine's own structs (their sType, pNext
    // and every other member untouched).
    void merge_features(VkPhysicalDeviceVulkan12Features& engine_vulkan12,
                        VkPhysicalDeviceVulkan13Features& engine_vulkan13) const;
};

// Without a physical device (before the instance exists): the API version, the instance
// extensions and the device items Tandem asks for, device items unsupported. With one: the same,
// with what that device supports. Throws nothing.
[[nodiscard]] TANDEM_API EmbeddingRequirements
embedding_requirements(VkPhysicalDevice physical_device = VK_NULL_HANDLE);

// An application's Vulkan objects handed to Tandem (Runtime(EmbedInfo) in tandem/runtime.hpp).
// Create the instance with at least Vulkan 1.3 and the device from embedding_requirements(),
// and say here what the device was created with. Tandem submits only to queue (queue_family,
// queue_index) of a graphics+compute family; leases are readable by that family.
//
// Tandem's externally synchronised use of that queue, all of it, each under queue_mutex:
//   - vkQueueSubmit2 from the application's thread: Runtime::submit() and lend_inputs() (a
//     task's copied inputs; from Tandem's input thread instead when the queue is Tandem's
//     alone) and LeaseReadback::read();
//   - vkQueueSubmit2 from Tandem's threads: job threads (a primary task's job), the transfer and
//     bridge threads (a worker's image copied onto the primary), whichever thread collects
//     retired resources (an empty signal), and at set-up path self-tests and one-shot uploads.
// It never calls vkQueueWaitIdle, vkQueuePresentKHR, vkQueueBindSparse or the queue debug-label
// functions on it, nor vkDeviceWaitIdle on the engine's device (it waits on its own fences and
// timeline semaphores). So the mutex covers every call the Vulkan specification makes the
// engine and Tandem serialise on that queue; the engine holds it around its own calls of these
// (its submits and presents to that queue, its vkQueueWaitIdle, vkDeviceWaitIdle).
// Best: a queue of Tandem's own (EmbeddingRequirements::queues[1]: create two queues of the
// family and hand over the second with queue_mutex null). Then no lock is shared and Tandem's
// submissions never wait for the engine's; only the engine's vkDeviceWaitIdle, which covers
// every queue, holds Tandem's lock (Runtime::primary_vulkan().queue_mutex) or runs once the
// Runtime is destroyed. With its own queue, Tandem also takes the copies of a submit's inputs
// off the application's thread: submit() and lend_inputs() queue their batch, and Tandem's
// input thread records and submits it (SubmitResult::inputs_released is the value it will
// signal). The engine's own batches may then wait for that value on its queues at once; and
// since that queue is Tandem's, an input's writes are ordered before Tandem's copy only by
// InputImage::wait_semaphore.
struct TANDEM_API EmbedInfo {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE; // the one `device` was created from
    VkDevice device = VK_NULL_HANDLE;
    std::uint32_t queue_family = 0;
    std::uint32_t queue_index = 0;
    // When the application also uses that queue, both sides lock this mutex around every call
    // listed above; null when the queue is Tandem's alone (Tandem then locks one of its own).
    std::shared_ptr<std::mutex> queue_mutex;
    // The device extensions `device` was created with (ppEnabledExtensionNames). Tandem uses
    // only these: an optional one missing here is reported in DeviceInfo::not_enabled.
    std::vector<std::string> enabled_extensions;
    // The features `device` was created with. A required one missing here is refused.
    EmbeddingFeatures enabled_features;
    bool debug_utils = false; // the instance has VK_EXT_debug_utils enabled
    // Where Tandem looks up the entry points it calls on `device` and its queue, for a caller
    // that is itself in the device's call chain: a Vulkan layer passes the next layer's
    // vkGetInstanceProcAddr and vkGetDeviceProcAddr from its link info (as OpenXR's
    // XrVulkanInstanceCreateInfoKHR takes pfnGetInstanceProcAddr), so that Tandem's queue calls
    // reach the layers below it instead of the top of the chain (the layer itself, which may
    // hold the queue's lock) and extensions the layer enabled resolve. Looked up through them:
    // vkGetDeviceQueue for the queue (a layer that keeps the program's queues never sees Tandem
    // get one: a layer that hands over a queue the program never got sets its loader data
    // first, as for any queue it gets below the loader), vkQueueSubmit2 on it
    // (PrimaryVulkan::queue_submit2) and the device's extension functions
    // (get_device_proc_addr), and the debug-utils functions, which take the device's handles
    // (get_instance_proc_addr). Physical-device queries and Tandem's other calls go
    // through the loader's exported functions, which take the application's handles and enter
    // the chain at its top: a layer passes them down unchanged. Null: the loader's.
    PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
    PFN_vkGetDeviceProcAddr get_device_proc_addr = nullptr;

    // Sets enabled_extensions and enabled_features from the create info `device` was made with:
    // its extension names, and in its pNext chain VkPhysicalDeviceVulkan12Features and
    // VkPhysicalDeviceVulkan13Features or the per-feature structs (timeline semaphore, host query
    // reset, synchronization2, dynamic rendering, maintenance4).
    void set_enabled(const VkDeviceCreateInfo& created_with);
};

} // namespace tandem
