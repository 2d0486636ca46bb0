// What the layer's probe programs (layer_swapchain_probe, layer_windows_probe) share: a failure
// that names the probe and exits 1, and a device to present with: an X connection (run under
// xvfb-run), an instance with the XCB surface extension, the first physical device, a device
// with one queue of family 0 and VK_KHR_swapchain, a command buffer and a fence. Windows and
// surfaces are the probe's own (create_window, create_surface).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <xcb/xcb.h>

#define VK_USE_PLATFORM_XCB_KHR
#include <vulkan/vulkan.h>

namespace probe {

inline const char* g_name = "probe"; // set by ProbeDevice: the program's name in its messages

[[noreturn]] inline void fail(const std::string& what) {
    std::fprintf(stderr, "%s: %s\n", g_name, what.c_str());
    std::exit(1);
}

inline void check(VkResult result, const char* call) {
    if (result != VK_SUCCESS) {
        fail(std::string(call) + " failed (" + std::to_string(result) + ")");
    }
}

// Records `image` (a swapchain image just acquired) cleared to a colour of `shade` (0 to 1) and
// left in PRESENT_SRC_KHR, each frame telling itself apart from the last.
inline void record_clear(VkCommandBuffer cmd, VkImage image, float shade) {
    VkImageMemoryBarrier barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    barrier.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    barrier.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.image = image;
    barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         nullptr, 0, nullptr, 1, &barrier);
    const VkClearColorValue colour{{shade, 1.0f - shade, 0.5f, 1.0f}};
    vkCmdClearColorImage(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &colour, 1,
                         &barrier.subresourceRange);
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = 0;
    barrier.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    barrier.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                         0, 0, nullptr, 0, nullptr, 1, &barrier);
}

struct ProbeDevice {
    xcb_connection_t* connection = nullptr;
    xcb_screen_t* screen = nullptr;
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    bool keep_device = false;   // the destructor leaves the device open (a program's bug)
    bool keep_instance = false; // and the instance and the X connection too

    explicit ProbeDevice(const char* name) {
        g_name = name;
        connection = xcb_connect(nullptr, nullptr);
        if (connection == nullptr || xcb_connection_has_error(connection) != 0) {
            fail("no X server (run under xvfb-run)");
        }
        screen = xcb_setup_roots_iterator(xcb_get_setup(connection)).data;
        const char* instance_extensions[] = {VK_KHR_SURFACE_EXTENSION_NAME,
                                             VK_KHR_XCB_SURFACE_EXTENSION_NAME};
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = name;
        app.apiVersion = VK_API_VERSION_1_0;
        VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        instance_info.pApplicationInfo = &app;
        instance_info.enabledExtensionCount = 2;
        instance_info.ppEnabledExtensionNames = instance_extensions;
        check(vkCreateInstance(&instance_info, nullptr, &instance), "vkCreateInstance");
        std::uint32_t count = 1;
        const VkResult enumerated = vkEnumeratePhysicalDevices(instance, &count, &physical);
        if ((enumerated != VK_SUCCESS && enumerated != VK_INCOMPLETE) || count == 0) {
            fail("no Vulkan device");
        }
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue_info.queueFamilyIndex = 0;
        queue_info.queueCount = 1;
        queue_info.pQueuePriorities = &priority;
        const char* device_extensions[] = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
        VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        device_info.queueCreateInfoCount = 1;
        device_info.pQueueCreateInfos = &queue_info;
        device_info.enabledExtensionCount = 1;
        device_info.ppEnabledExtensionNames = device_extensions;
        check(vkCreateDevice(physical, &device_info, nullptr, &device), "vkCreateDevice");
        vkGetDeviceQueue(device, 0, 0, &queue);
        VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        check(vkCreateCommandPool(device, &pool_info, nullptr, &pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = pool;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(device, &alloc, &cmd), "vkAllocateCommandBuffers");
        VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check(vkCreateFence(device, &fence_info, nullptr, &fence), "vkCreateFence");
    }
    ProbeDevice(const ProbeDevice&) = delete;
    ProbeDevice& operator=(const ProbeDevice&) = delete;

    // The device first (the probe destroyed its swapchains and surfaces before), then the
    // instance and the X connection; the device is left open with keep_device (a program's bug).
    ~ProbeDevice() {
        if (!keep_device) {
            vkDestroyFence(device, fence, nullptr);
            vkDestroyCommandPool(device, pool, nullptr);
            vkDestroyDevice(device, nullptr);
        }
        if (!keep_instance) {
            vkDestroyInstance(instance, nullptr);
            xcb_disconnect(connection);
        }
    }

    [[nodiscard]] xcb_window_t create_window(std::uint16_t width, std::uint16_t height) const {
        const xcb_window_t window = xcb_generate_id(connection);
        xcb_create_window(connection, XCB_COPY_FROM_PARENT, window, screen->root, 0, 0, width,
                          height, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual, 0,
                          nullptr);
        xcb_map_window(connection, window);
        xcb_flush(connection);
        return window;
    }

    // A surface of `window` that queue family 0 presents to (else the probe fails).
    [[nodiscard]] VkSurfaceKHR create_surface(xcb_window_t window) const {
        VkXcbSurfaceCreateInfoKHR surface_info{VK_STRUCTURE_TYPE_XCB_SURFACE_CREATE_INFO_KHR};
        surface_info.connection = connection;
        surface_info.window = window;
        VkSurfaceKHR surface = VK_NULL_HANDLE;
        check(vkCreateXcbSurfaceKHR(instance, &surface_info, nullptr, &surface),
              "vkCreateXcbSurfaceKHR");
        VkBool32 presents = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(physical, 0, surface, &presents);
        if (presents != VK_TRUE) {
            fail("queue family 0 does not present to the window");
        }
        return surface;
    }

    // A FIFO swapchain of `format` at the surface's current size (its least image count,
    // transfer-destination images: the probes clear them), replacing `old`.
    [[nodiscard]] VkSwapchainKHR create_swapchain(VkSurfaceKHR surface,
                                                  const VkSurfaceCapabilitiesKHR& caps,
                                                  VkFormat format, VkSwapchainKHR old) const {
        VkSwapchainCreateInfoKHR info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
        info.surface = surface;
        info.minImageCount = caps.minImageCount;
        info.imageFormat = format;
        info.imageColorSpace = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR;
        info.imageExtent = caps.currentExtent;
        info.imageArrayLayers = 1;
        info.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        info.preTransform = VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR;
        info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
        info.presentMode = VK_PRESENT_MODE_FIFO_KHR;
        info.clipped = VK_TRUE;
        info.oldSwapchain = old;
        VkSwapchainKHR swapchain = VK_NULL_HANDLE;
        check(vkCreateSwapchainKHR(device, &info, nullptr, &swapchain), "vkCreateSwapchainKHR");
        return swapchain;
    }

    // Waits for the fence of the last submit and resets it.
    void wait_fence() const {
        check(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        check(vkResetFences(device, 1, &fence), "vkResetFences");
    }
};

} // namespace probe
