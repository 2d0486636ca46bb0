// A program that opens a device with whatever layers its environment enables and exits without
// destroying it, as some programs do: the layer's report must still be written, at exit, with the
// device counted as open. Exit status 0 once the device was created.
#include <cstdint>
#include <cstdio>

#include <vulkan/vulkan.h>

int main() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "layer_exit_probe";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    if (vkCreateInstance(&info, nullptr, &instance) != VK_SUCCESS) {
        std::fprintf(stderr, "layer_exit_probe: vkCreateInstance failed\n");
        return 1;
    }
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    std::uint32_t count = 1;
    if (vkEnumeratePhysicalDevices(instance, &count, &physical_device) < VK_SUCCESS || count == 0) {
        std::fprintf(stderr, "layer_exit_probe: no physical device\n");
        return 1;
    }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    VkDevice device = VK_NULL_HANDLE;
    if (vkCreateDevice(physical_device, &device_info, nullptr, &device) != VK_SUCCESS) {
        std::fprintf(stderr, "layer_exit_probe: vkCreateDevice failed\n");
        return 1;
    }
    VkQueue queue = VK_NULL_HANDLE;
    vkGetDeviceQueue(device, 0, 0, &queue);
    if (vkQueueWaitIdle(queue) != VK_SUCCESS) {
        return 1;
    }
    return 0; // the device and the instance are left open on purpose
}
