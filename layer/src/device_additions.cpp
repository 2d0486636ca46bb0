#include "device_additions.hpp"

#include <algorithm>
#include <string_view>

namespace tandem::layer {
namespace {

// The program's chained struct of `type`, or nullptr.
template <typename Struct>
Struct* find_in_chain(const void* chain, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s != nullptr; s = s->pNext) {
        if (s->sType == type) {
            return reinterpret_cast<Struct*>(const_cast<VkBaseInStructure*>(s));
        }
    }
    return nullptr;
}

// The extensions `physical` offers (none when the query fails), read through the next layer.
std::vector<VkExtensionProperties> offered_extensions(const InstanceDispatch& instance,
                                                      VkPhysicalDevice physical) {
    std::uint32_t count = 0;
    std::vector<VkExtensionProperties> offered;
    if (instance.EnumerateDeviceExtensionProperties == nullptr ||
        instance.EnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr) !=
            VK_SUCCESS) {
        return offered;
    }
    offered.resize(count);
    if (instance.EnumerateDeviceExtensionProperties(physical, nullptr, &count, offered.data()) !=
        VK_SUCCESS) {
        offered.clear();
    }
    return offered;
}

bool is_offered(const std::vector<VkExtensionProperties>& offered, std::string_view name) {
    return std::any_of(offered.begin(), offered.end(),
                       [&](const VkExtensionProperties& e) { return name == e.extensionName; });
}

} // namespace

bool worker_swapchain_extensions(const InstanceDispatch& instance, bool surface_enabled,
                                 VkPhysicalDevice physical, const VkDeviceCreateInfo& info,
                                 std::vector<const char*>& extensions) {
    if (!surface_enabled) {
        return false;
    }
    extensions.assign(info.ppEnabledExtensionNames,
                      info.ppEnabledExtensionNames + info.enabledExtensionCount);
    for (const char* name : extensions) {
        if (std::string_view(name) == VK_KHR_SWAPCHAIN_EXTENSION_NAME) {
            return false;
        }
    }
    const std::vector<VkExtensionProperties> offered = offered_extensions(instance, physical);
    if (!is_offered(offered, VK_KHR_SWAPCHAIN_EXTENSION_NAME)) {
        return false;
    }
    extensions.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
    // Its swapchain's images written through an RGBA8 storage view whatever their format (the
    // compute copy of each frame into them).
    if (is_offered(offered, VK_KHR_SWAPCHAIN_MUTABLE_FORMAT_EXTENSION_NAME)) {
        extensions.push_back(VK_KHR_SWAPCHAIN_MUTABLE_FORMAT_EXTENSION_NAME);
    }
    return true;
}

const VkApplicationInfo* raised_application_info(const VkApplicationInfo* program,
                                                 VkApplicationInfo& storage) {
    storage = program != nullptr ? *program : VkApplicationInfo{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    storage.apiVersion = std::max(storage.apiVersion, EmbeddingRequirements{}.api_version);
    return &storage;
}

DeviceAdditions::DeviceAdditions(const InstanceDispatch& instance, VkPhysicalDevice physical,
                                 const VkDeviceCreateInfo& program)
    : m_info(program) {
    if (instance.GetPhysicalDeviceFeatures2 == nullptr ||
        instance.EnumerateDeviceExtensionProperties == nullptr) {
        m_refusal = "the instance lacks vkGetPhysicalDeviceFeatures2";
        return;
    }
    const EmbeddingRequirements need = embedding_requirements();
    VkPhysicalDeviceProperties properties{};
    instance.GetPhysicalDeviceProperties(physical, &properties);
    if (properties.apiVersion < need.api_version) {
        m_refusal = std::string(properties.deviceName) + " has no Vulkan 1.3 driver";
        return;
    }
    const std::vector<VkExtensionProperties> offered = offered_extensions(instance, physical);
    for (std::uint32_t i = 0; i < program.enabledExtensionCount; ++i) {
        m_extension_names.emplace_back(program.ppEnabledExtensionNames[i]);
    }
    // Swapchain images Tandem's RGBA8 views may read (layer_entry.cpp, CreateSwapchainKHR): the
    // runtime then copies a presented frame by a compute dispatch whatever its 8-bit format.
    const auto enabled = [&](std::string_view name) {
        return std::find(m_extension_names.begin(), m_extension_names.end(), name) !=
               m_extension_names.end();
    };
    if (enabled(VK_KHR_SWAPCHAIN_EXTENSION_NAME) &&
        !enabled(VK_KHR_SWAPCHAIN_MUTABLE_FORMAT_EXTENSION_NAME) &&
        is_offered(offered, VK_KHR_SWAPCHAIN_MUTABLE_FORMAT_EXTENSION_NAME)) {
        m_extension_names.emplace_back(VK_KHR_SWAPCHAIN_MUTABLE_FORMAT_EXTENSION_NAME);
    }
    for (const Requirement& r : need.device_extensions) {
        const bool present = std::find(m_extension_names.begin(), m_extension_names.end(),
                                       r.name) != m_extension_names.end();
        if (present) {
            continue;
        }
        if (is_offered(offered, r.name)) {
            m_extension_names.push_back(r.name);
        } else if (r.required) {
            m_refusal = std::string(properties.deviceName) + " lacks " + r.name;
            return;
        }
    }

    VkPhysicalDeviceVulkan12Features supported12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features supported13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    supported12.pNext = &supported13;
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    supported.pNext = &supported12;
    instance.GetPhysicalDeviceFeatures2(physical, &supported);
    if (!supported12.timelineSemaphore || !supported13.synchronization2 ||
        !supported13.dynamicRendering || !supported13.maintenance4) {
        m_refusal = std::string(properties.deviceName) +
                    " lacks timeline semaphores, synchronization2, dynamic rendering or "
                    "maintenance4";
        return;
    }
    m_features.timeline_semaphore = true;
    m_features.synchronization2 = true;
    m_features.dynamic_rendering = true;
    m_features.maintenance4 = true;
    m_features.host_query_reset = supported12.hostQueryReset == VK_TRUE;

    // Each feature goes where the program's chain allows: into its VkPhysicalDeviceVulkan1xFeatures
    // when it has one (the per-feature structs must not be chained beside it), else into its
    // per-feature struct, else into one of ours put in front of its chain.
    const void* chain = program.pNext;
    void* front = const_cast<void*>(program.pNext);
    auto turn_on = [&](VkBool32& member) {
        if (member != VK_TRUE) {
            m_changed.push_back({&member, member});
            member = VK_TRUE;
        }
    };
    auto want = [&]<typename Own>(VkBool32* in_version_struct, Own& own, VkBool32 Own::*member) {
        if (in_version_struct != nullptr) {
            turn_on(*in_version_struct);
        } else if (Own* chained = find_in_chain<Own>(chain, own.sType); chained != nullptr) {
            turn_on(chained->*member);
        } else {
            own.*member = VK_TRUE;
            own.pNext = front;
            front = &own;
        }
    };
    auto* v12 = find_in_chain<VkPhysicalDeviceVulkan12Features>(
        chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    auto* v13 = find_in_chain<VkPhysicalDeviceVulkan13Features>(
        chain, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
    want(v12 != nullptr ? &v12->timelineSemaphore : nullptr, m_timeline,
         &VkPhysicalDeviceTimelineSemaphoreFeatures::timelineSemaphore);
    if (m_features.host_query_reset) {
        want(v12 != nullptr ? &v12->hostQueryReset : nullptr, m_host_query_reset,
             &VkPhysicalDeviceHostQueryResetFeatures::hostQueryReset);
    }
    want(v13 != nullptr ? &v13->synchronization2 : nullptr, m_synchronization2,
         &VkPhysicalDeviceSynchronization2Features::synchronization2);
    want(v13 != nullptr ? &v13->dynamicRendering : nullptr, m_dynamic_rendering,
         &VkPhysicalDeviceDynamicRenderingFeatures::dynamicRendering);
    want(v13 != nullptr ? &v13->maintenance4 : nullptr, m_maintenance4,
         &VkPhysicalDeviceMaintenance4Features::maintenance4);
    m_info.pNext = front;

    for (const std::string& name : m_extension_names) {
        m_extension_pointers.push_back(name.c_str());
    }
    m_info.enabledExtensionCount = static_cast<std::uint32_t>(m_extension_pointers.size());
    m_info.ppEnabledExtensionNames = m_extension_pointers.data();
}

void DeviceAdditions::add_spare_queues(const InstanceDispatch& instance,
                                       VkPhysicalDevice physical) {
    if (!m_refusal.empty() || m_info.queueCreateInfoCount == 0) {
        return;
    }
    const std::vector<VkQueueFamilyProperties> families = queue_families(instance, physical);
    constexpr VkQueueFlags k_flags = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    m_queue_infos.assign(m_info.pQueueCreateInfos,
                         m_info.pQueueCreateInfos + m_info.queueCreateInfoCount);
    m_priorities.resize(m_queue_infos.size());
    for (std::size_t i = 0; i < m_queue_infos.size(); ++i) {
        VkDeviceQueueCreateInfo& q = m_queue_infos[i];
        const bool suits = q.queueFamilyIndex < families.size() && q.flags == 0 &&
                           q.queueCount > 0 &&
                           (families[q.queueFamilyIndex].queueFlags & k_flags) == k_flags &&
                           families[q.queueFamilyIndex].queueCount > q.queueCount &&
                           !m_spare_queues.contains(q.queueFamilyIndex);
        if (!suits) {
            continue;
        }
        // Tandem's queue at the program's first priority: its submits are the program's frames.
        m_priorities[i].assign(q.pQueuePriorities, q.pQueuePriorities + q.queueCount);
        m_priorities[i].push_back(q.pQueuePriorities[0]);
        m_spare_queues[q.queueFamilyIndex] = q.queueCount;
        q.queueCount += 1;
        q.pQueuePriorities = m_priorities[i].data();
    }
    if (!m_spare_queues.empty()) {
        m_info.pQueueCreateInfos = m_queue_infos.data();
    }
}

DeviceAdditions::~DeviceAdditions() {
    restore();
}

void DeviceAdditions::restore() noexcept {
    for (const Changed& c : m_changed) {
        *c.member = c.before;
    }
    m_changed.clear();
}

} // namespace tandem::layer
