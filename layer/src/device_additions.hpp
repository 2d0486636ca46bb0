// What the layer adds to the program's instance and device so that a Tandem Runtime can be
// embedded on them (tandem/embedding.hpp): the instance's Vulkan version, and the device
// extensions and features embedding_requirements() lists. Everything is decided from the next
// layer's functions: the loader holds its own lock around vkCreateInstance and vkCreateDevice,
// so nothing here may call back into the loader's exported functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "tandem/embedding.hpp"

#include "dispatch_table.hpp"

namespace tandem::layer {

// The instance's VkApplicationInfo with apiVersion raised to what Tandem needs (the program's
// own when higher). Points into `storage`.
[[nodiscard]] const VkApplicationInfo* raised_application_info(const VkApplicationInfo* program,
                                                               VkApplicationInfo& storage);

// A Tandem worker's device extensions with VK_KHR_swapchain added, and
// VK_KHR_swapchain_mutable_format where offered (display = worker: the worker presents to the
// program's surface). False, `extensions` then meaningless, where the program's instance has no
// VK_KHR_surface (`surface_enabled`), the device does not offer VK_KHR_swapchain, or it is there
// already.
[[nodiscard]] bool worker_swapchain_extensions(const InstanceDispatch& instance,
                                               bool surface_enabled, VkPhysicalDevice physical,
                                               const VkDeviceCreateInfo& info,
                                               std::vector<const char*>& extensions);

// The program's device create info with Tandem's device extensions and features added, or the
// reason it cannot have them (then the device is created as the program asked).
class DeviceAdditions {
public:
    // Reads what `physical` supports through `instance` (the next layer's functions) and, when
    // it has everything Tandem requires, prepares the additions to `program`.
    DeviceAdditions(const InstanceDispatch& instance, VkPhysicalDevice physical,
                    const VkDeviceCreateInfo& program);
    ~DeviceAdditions();
    DeviceAdditions(const DeviceAdditions&) = delete;
    DeviceAdditions& operator=(const DeviceAdditions&) = delete;

    // Empty when the additions apply; otherwise why not, one sentence.
    [[nodiscard]] const std::string& refusal() const noexcept { return m_refusal; }
    // The create info to pass down: the program's with the additions. The program's own feature
    // structs that needed a bit more are changed in place until restore() (they are the
    // program's const memory, put back exactly as they were once the call returned).
    [[nodiscard]] const VkDeviceCreateInfo& create_info() const noexcept { return m_info; }
    void restore() noexcept;

    // What the device was created with, for tandem::EmbedInfo.
    [[nodiscard]] const std::vector<std::string>& enabled_extensions() const noexcept {
        return m_extension_names;
    }
    [[nodiscard]] const EmbeddingFeatures& enabled_features() const noexcept { return m_features; }

    // Gives Tandem a queue of its own (EmbeddingRequirements::queues[1]): one more queue in each
    // graphics+compute family the program asks queues of, where the family has one to spare and
    // the program's entry has no flags. The program never sees it (its indices stay below the
    // count it asked for). Where each went: family -> queue index.
    void add_spare_queues(const InstanceDispatch& instance, VkPhysicalDevice physical);
    [[nodiscard]] const std::map<std::uint32_t, std::uint32_t>& spare_queues() const noexcept {
        return m_spare_queues;
    }

private:
    std::string m_refusal;
    VkDeviceCreateInfo m_info{};
    std::vector<std::string> m_extension_names;
    std::vector<const char*> m_extension_pointers;
    EmbeddingFeatures m_features;
    // Feature structs the program did not chain, put in front of its chain.
    VkPhysicalDeviceTimelineSemaphoreFeatures m_timeline{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    VkPhysicalDeviceHostQueryResetFeatures m_host_query_reset{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES};
    VkPhysicalDeviceSynchronization2Features m_synchronization2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
    VkPhysicalDeviceDynamicRenderingFeatures m_dynamic_rendering{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES};
    VkPhysicalDeviceMaintenance4Features m_maintenance4{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES};
    // The program's feature members changed in place, and their values before.
    struct Changed {
        VkBool32* member;
        VkBool32 before;
    };
    std::vector<Changed> m_changed;
    // The program's queue entries with the spare queues added, and their priorities.
    std::vector<VkDeviceQueueCreateInfo> m_queue_infos;
    std::vector<std::vector<float>> m_priorities;
    std::map<std::uint32_t, std::uint32_t> m_spare_queues;
};

} // namespace tandem::layer
