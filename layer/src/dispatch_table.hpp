// The next layer's functions (the layer or driver beneath this one), one table per instance and
// one per device, filled once when the object is created and read-only afterwards. A function the
// next layer does not offer (an extension not enabled, a Vulkan version not supported) stays
// nullptr, and the interception that would call it answers an error instead of calling through.
#pragma once

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

namespace tandem::layer {

struct InstanceDispatch {
    PFN_vkGetInstanceProcAddr GetInstanceProcAddr = nullptr;
    PFN_vkDestroyInstance DestroyInstance = nullptr;
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties = nullptr;
    PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR GetPhysicalDeviceSurfaceCapabilitiesKHR = nullptr;
};

struct DeviceDispatch {
    PFN_vkGetDeviceProcAddr GetDeviceProcAddr = nullptr;
    PFN_vkDestroyDevice DestroyDevice = nullptr;
    PFN_vkGetDeviceQueue GetDeviceQueue = nullptr;
    PFN_vkGetDeviceQueue2 GetDeviceQueue2 = nullptr;
    PFN_vkQueueSubmit QueueSubmit = nullptr;
    PFN_vkQueueSubmit2 QueueSubmit2 = nullptr;
    PFN_vkQueueSubmit2KHR QueueSubmit2KHR = nullptr;
    PFN_vkQueueWaitIdle QueueWaitIdle = nullptr;
    PFN_vkQueueBindSparse QueueBindSparse = nullptr;
    PFN_vkDeviceWaitIdle DeviceWaitIdle = nullptr;
    PFN_vkQueuePresentKHR QueuePresentKHR = nullptr;
    PFN_vkCreateSwapchainKHR CreateSwapchainKHR = nullptr;
    PFN_vkDestroySwapchainKHR DestroySwapchainKHR = nullptr;
    PFN_vkGetSwapchainImagesKHR GetSwapchainImagesKHR = nullptr;
};

[[nodiscard]] InstanceDispatch load_instance_dispatch(VkInstance instance,
                                                      PFN_vkGetInstanceProcAddr next);

[[nodiscard]] DeviceDispatch load_device_dispatch(VkDevice device, PFN_vkGetDeviceProcAddr next);

} // namespace tandem::layer
