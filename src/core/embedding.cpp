#include "core/embedding.hpp"

#include <algorithm>

#include "core/capabilities.hpp"
#include "tandem/error.hpp"

namespace tandem {
namespace {

std::string version_text(std::uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v));
}

bool has_instance_extension(const std::vector<VkExtensionProperties>& all, const char* name) {
    return std::any_of(all.begin(), all.end(), [&](const VkExtensionProperties& e) {
        return std::string_view(e.extensionName) == name;
    });
}

// "a", "a and b", "a, b and c".
std::string listed(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) {
            out += i + 1 == items.size() ? " and " : ", ";
        }
        out += items[i];
    }
    return out;
}

} // namespace

EmbeddingRequirements embedding_requirements(VkPhysicalDevice physical_device) {
    EmbeddingRequirements r;
    if (vkEnumerateInstanceVersion(&r.loader_api_version) != VK_SUCCESS) {
        r.loader_api_version = VK_API_VERSION_1_0;
    }
    std::uint32_t count = 0;
    std::vector<VkExtensionProperties> instance_extensions;
    if (vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr) == VK_SUCCESS) {
        instance_extensions.resize(count);
        if (vkEnumerateInstanceExtensionProperties(nullptr, &count, instance_extensions.data()) !=
            VK_SUCCESS) {
            instance_extensions.clear();
        }
        instance_extensions.resize(std::min<std::size_t>(count, instance_extensions.size()));
    }
    r.instance_extensions.push_back(
        {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, "", false,
         has_instance_extension(instance_extensions, VK_EXT_DEBUG_UTILS_EXTENSION_NAME),
         "names on Tandem's Vulkan objects and labels on its submissions, so a capture in "
         "RenderDoc or Nsight reads like the code (set EmbedInfo::debug_utils)"});

    // What the physical device has; nothing at all without one.
    std::vector<std::string> device_extensions;
    EmbeddingFeatures supported;
    if (physical_device != VK_NULL_HANDLE) {
        VkPhysicalDeviceProperties props{};
        vkGetPhysicalDeviceProperties(physical_device, &props);
        r.device_api_version = props.apiVersion;
        if (vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr) ==
            VK_SUCCESS) {
            std::vector<VkExtensionProperties> all(count);
            if (vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count,
                                                     all.data()) == VK_SUCCESS) {
                for (std::uint32_t i = 0; i < count && i < all.size(); ++i) {
                    device_extensions.emplace_back(all[i].extensionName);
                }
            }
        }
        if (r.device_api_version >= VK_API_VERSION_1_3) {
            // The 1.2 and 1.3 feature structs may only be queried from a 1.3 device.
            VkPhysicalDeviceVulkan13Features f13{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
            VkPhysicalDeviceVulkan12Features f12{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
            f12.pNext = &f13;
            VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
            features2.pNext = &f12;
            vkGetPhysicalDeviceFeatures2(physical_device, &features2);
            supported.timeline_semaphore = f12.timelineSemaphore == VK_TRUE;
            supported.host_query_reset = f12.hostQueryReset == VK_TRUE;
            supported.synchronization2 = f13.synchronization2 == VK_TRUE;
            supported.dynamic_rendering = f13.dynamicRendering == VK_TRUE;
            supported.maintenance4 = f13.maintenance4 == VK_TRUE;
        }
    }
    for (const auto& e : detail::k_device_extension_options) {
        const bool has = std::find(device_extensions.begin(), device_extensions.end(), e.name) !=
                         device_extensions.end();
        r.device_extensions.push_back({e.name, "", e.required, has, e.unlocks});
    }
    EmbeddingFeatures wanted;
    for (const auto& f : detail::k_feature_options) {
        const bool has = supported.*f.member;
        r.features.push_back({f.name, f.structure, f.required, has, f.unlocks});
        wanted.*f.member = f.required || has;
    }
    detail::set_feature_structs(wanted, r.vulkan12, r.vulkan13);

    // The families that can carry Tandem's queue, and whether one has room for a second queue.
    std::vector<QueueFamilyOffer> offers;
    if (physical_device != VK_NULL_HANDLE) {
        std::uint32_t family_count = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
        std::vector<VkQueueFamilyProperties> families(family_count);
        vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, families.data());
        const VkQueueFlags flags = QueueRequirement{}.flags;
        for (std::uint32_t i = 0; i < family_count && i < families.size(); ++i) {
            if ((families[i].queueFlags & flags) == flags) {
                offers.push_back({i, families[i].queueCount});
            }
        }
    }
    auto queue_entry = [&](std::uint32_t queues_needed, bool required, std::string unlocks) {
        QueueRequirement q;
        q.count = queues_needed;
        q.required = required;
        q.families = offers;
        q.supported = std::any_of(offers.begin(), offers.end(), [&](const QueueFamilyOffer& o) {
            return o.queue_count >= queues_needed;
        });
        q.unlocks = std::move(unlocks);
        return q;
    };
    r.queues.push_back(queue_entry(
        1, true,
        "the queue Tandem submits its jobs, copies and lease readbacks to; shared with the engine, "
        "both lock EmbedInfo::queue_mutex around every call on it"));
    r.queues.push_back(queue_entry(
        2, false,
        "a queue of Tandem's own beside the engine's (hand over the second, queue_mutex null): no "
        "shared lock, and Tandem's submissions never wait for the engine's"));
    return r;
}

std::string EmbeddingRequirements::missing() const {
    std::vector<std::string> lacking;
    if (loader_api_version < api_version) {
        lacking.push_back("the Vulkan loader is version " + version_text(loader_api_version) +
                          ", below " + version_text(api_version));
    }
    if (device_api_version != 0 && device_api_version < api_version) {
        lacking.push_back("the device is Vulkan " + version_text(device_api_version) + ", below " +
                          version_text(api_version));
    }
    // A device's items count once there is a device to ask.
    const bool device = device_api_version != 0;
    for (const auto* list : {&instance_extensions, &device_extensions, &features}) {
        if (list != &instance_extensions && !device) {
            continue;
        }
        for (const Requirement& item : *list) {
            if (item.required && !item.supported) {
                lacking.push_back(item.structure.empty() ? item.name
                                                         : item.structure + "::" + item.name);
            }
        }
    }
    for (const QueueRequirement& q : queues) {
        if (device && q.required && !q.supported) {
            lacking.push_back("a queue family with graphics and compute");
        }
    }
    return lacking.empty() ? std::string() : "Tandem needs " + listed(lacking);
}

std::vector<const char*> EmbeddingRequirements::instance_extension_names() const {
    std::vector<const char*> out;
    for (const Requirement& e : instance_extensions) {
        if (e.required || e.supported) {
            out.push_back(e.name.c_str());
        }
    }
    return out;
}

std::vector<const char*> EmbeddingRequirements::device_extension_names() const {
    std::vector<const char*> out;
    for (const Requirement& e : device_extensions) {
        if (e.required || e.supported) {
            out.push_back(e.name.c_str());
        }
    }
    return out;
}

void EmbeddingRequirements::merge_features(
    VkPhysicalDeviceVulkan12Features& engine_vulkan12,
    VkPhysicalDeviceVulkan13Features& engine_vulkan13) const {
    auto merge = [](VkBool32& engine, VkBool32 tandem) {
        engine = (engine == VK_TRUE || tandem == VK_TRUE) ? VK_TRUE : VK_FALSE;
    };
    merge(engine_vulkan12.timelineSemaphore, vulkan12.timelineSemaphore);
    merge(engine_vulkan12.hostQueryReset, vulkan12.hostQueryReset);
    merge(engine_vulkan13.synchronization2, vulkan13.synchronization2);
    merge(engine_vulkan13.dynamicRendering, vulkan13.dynamicRendering);
    merge(engine_vulkan13.maintenance4, vulkan13.maintenance4);
}

void EmbedInfo::set_enabled(const VkDeviceCreateInfo& created_with) {
    enabled_extensions.clear();
    for (std::uint32_t i = 0; i < created_with.enabledExtensionCount; ++i) {
        enabled_extensions.emplace_back(created_with.ppEnabledExtensionNames[i]);
    }
    EmbeddingFeatures f;
    auto on = [](VkBool32 b) { return b == VK_TRUE; };
    for (auto* s = static_cast<const VkBaseInStructure*>(created_with.pNext); s != nullptr;
         s = s->pNext) {
        switch (s->sType) {
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
            const auto* v = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
            f.timeline_semaphore = f.timeline_semaphore || on(v->timelineSemaphore);
            f.host_query_reset = f.host_query_reset || on(v->hostQueryReset);
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES: {
            const auto* v = reinterpret_cast<const VkPhysicalDeviceVulkan13Features*>(s);
            f.synchronization2 = f.synchronization2 || on(v->synchronization2);
            f.dynamic_rendering = f.dynamic_rendering || on(v->dynamicRendering);
            f.maintenance4 = f.maintenance4 || on(v->maintenance4);
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
            f.timeline_semaphore =
                f.timeline_semaphore ||
                on(reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(s)
                       ->timelineSemaphore);
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES:
            f.host_query_reset =
                f.host_query_reset ||
                on(reinterpret_cast<const VkPhysicalDeviceHostQueryResetFeatures*>(s)
                       ->hostQueryReset);
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES:
            f.synchronization2 =
                f.synchronization2 ||
                on(reinterpret_cast<const VkPhysicalDeviceSynchronization2Features*>(s)
                       ->synchronization2);
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES:
            f.dynamic_rendering =
                f.dynamic_rendering ||
                on(reinterpret_cast<const VkPhysicalDeviceDynamicRenderingFeatures*>(s)
                       ->dynamicRendering);
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES:
            f.maintenance4 =
                f.maintenance4 ||
                on(reinterpret_cast<const VkPhysicalDeviceMaintenance4Features*>(s)->maintenance4);
            break;
        default:
            break;
        }
    }
    enabled_features = f;
}

} // namespace tandem

namespace tandem::detail {

EmbeddingFeatures required_features() noexcept {
    EmbeddingFeatures f;
    for (const auto& option : k_feature_options) {
        f.*option.member = option.required;
    }
    return f;
}

EmbeddingFeatures features_to_enable(const DeviceInfo& info) noexcept {
    EmbeddingFeatures f = required_features();
    f.host_query_reset = info.features.host_query_reset;
    return f;
}

std::vector<const char*> extensions_to_enable(const DeviceInfo& info) {
    std::vector<const char*> out;
    for (const auto& e : k_device_extension_options) {
        if (e.required || has_extension(info, e.name)) {
            out.push_back(e.name);
        }
    }
    return out;
}

void set_feature_structs(const EmbeddingFeatures& features,
                         VkPhysicalDeviceVulkan12Features& vulkan12,
                         VkPhysicalDeviceVulkan13Features& vulkan13) noexcept {
    auto set = [](VkBool32& member, bool on) {
        if (on) {
            member = VK_TRUE;
        }
    };
    set(vulkan12.timelineSemaphore, features.timeline_semaphore);
    set(vulkan12.hostQueryReset, features.host_query_reset);
    set(vulkan13.synchronization2, features.synchronization2);
    set(vulkan13.dynamicRendering, features.dynamic_rendering);
    set(vulkan13.maintenance4, features.maintenance4);
}

namespace {

bool listed_in(std::span<const std::string> names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

void check_embedded_device(const DeviceInfo& info, std::uint32_t api_version,
                           std::span<const std::string> enabled_extensions,
                           const EmbeddingFeatures& enabled) {
    const std::string device = "The application's device (" + info.name + ")";
    if (api_version < VK_API_VERSION_1_3) {
        throw Error(VK_ERROR_INCOMPATIBLE_DRIVER,
                    device + " is Vulkan " + std::to_string(VK_API_VERSION_MAJOR(api_version)) +
                        "." + std::to_string(VK_API_VERSION_MINOR(api_version)) +
                        ", and Tandem requires Vulkan 1.3",
                    "Update the driver, or embed Tandem on a Vulkan 1.3 device "
                    "(tandem::embedding_requirements(physical_device).missing() says what a "
                    "device lacks)");
    }
    std::vector<std::string> missing;
    for (const auto& e : k_device_extension_options) {
        if (e.required && !listed_in(enabled_extensions, e.name)) {
            missing.push_back(std::string(e.name) + " (" + e.unlocks + ")");
        }
    }
    for (const auto& f : k_feature_options) {
        if (f.required && !(enabled.*f.member)) {
            missing.push_back(std::string(f.structure) + "::" + f.name + " (" + f.unlocks + ")");
        }
    }
    if (missing.empty()) {
        return;
    }
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i) {
        list += (i == 0 ? "" : i + 1 == missing.size() ? " and " : "; ") + missing[i];
    }
    throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                device + " was created without what Tandem requires: " + list +
                    (missing.size() == 1 ? " is" : " are") + " not enabled",
                "Create the device from tandem::embedding_requirements(physical_device) (merge "
                "its feature structs and device_extension_names() into the VkDeviceCreateInfo), "
                "and say what it was created with in EmbedInfo (EmbedInfo::set_enabled)");
}

DeviceInfo enabled_view(DeviceInfo info, std::span<const std::string> enabled_extensions,
                        const EmbeddingFeatures& enabled) {
    auto on = [&](std::string_view name) { return listed_in(enabled_extensions, name); };
    auto& f = info.features;
    const bool memory_fd = on(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    f.external_memory_fd = f.external_memory_fd && memory_fd;
    f.external_memory_fd_image = f.external_memory_fd_image && memory_fd;
    f.external_memory_host =
        f.external_memory_host && on(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    if (!f.external_memory_host) {
        f.min_imported_host_pointer_alignment = 0;
    }
    f.external_memory_dma_buf =
        f.external_memory_dma_buf && on(VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME);
    const bool semaphore_fd = on(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    f.external_semaphore_fd = f.external_semaphore_fd && semaphore_fd;
    f.external_semaphore_fd_binary = f.external_semaphore_fd_binary && semaphore_fd;
    f.external_semaphore_fd_timeline = f.external_semaphore_fd_timeline && semaphore_fd;
    f.calibrated_timestamps =
        f.calibrated_timestamps && on(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    f.global_priority = f.global_priority && (on(VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME) ||
                                              on(VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME));
    f.memory_budget = f.memory_budget && on(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    if (!f.memory_budget) {
        for (auto& heap : info.memory_heaps) {
            heap.budget.reset();
            heap.usage.reset();
        }
    }
    const bool driver_host_query_reset = f.host_query_reset;
    f.timeline_semaphore = f.timeline_semaphore && enabled.timeline_semaphore;
    f.synchronization2 = f.synchronization2 && enabled.synchronization2;
    f.dynamic_rendering = f.dynamic_rendering && enabled.dynamic_rendering;
    f.host_query_reset = f.host_query_reset && enabled.host_query_reset;

    info.not_enabled.clear();
    for (const auto& e : k_device_extension_options) {
        if (!e.required && has_extension(info, e.name) && !on(e.name)) {
            info.not_enabled.push_back({e.name, e.without});
        }
    }
    // hostQueryReset is the one optional feature, and DeviceFeatures says whether the driver has
    // it.
    for (const auto& option : k_feature_options) {
        if (option.member == &EmbeddingFeatures::host_query_reset && driver_host_query_reset &&
            !enabled.host_query_reset) {
            info.not_enabled.push_back({option.name, option.without});
        }
    }
    return info;
}

const NotEnabled* find_not_enabled(const DeviceInfo& info, std::string_view name) noexcept {
    for (const NotEnabled& n : info.not_enabled) {
        if (n.name == name) {
            return &n;
        }
    }
    return nullptr;
}

} // namespace tandem::detail
