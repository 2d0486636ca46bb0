// The layer's interceptions that vkcube does not call, driven directly through the loader with
// the layer enabled and the Khronos validation layer beneath it (its thread-safety checks see
// every queue call the layer passes down): extension functions the device did not enable
// resolve as without the layer, and the queue calls pass through, from several threads at once
// on one queue, serialised by the layer's per-queue lock so that validation sees no unguarded use.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

namespace {

constexpr const char* k_layer = "VK_LAYER_TANDEM_frame_generation";
constexpr const char* k_validation = "VK_LAYER_KHRONOS_validation";

bool validation_on() {
    const char* value = std::getenv("TANDEM_VALIDATION");
    return value == nullptr || (std::strcmp(value, "0") != 0 && std::strcmp(value, "off") != 0);
}

std::atomic<int> g_validation_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
    ADD_FAILURE() << "validation: " << data->pMessage;
    g_validation_messages.fetch_add(1);
    return VK_FALSE;
}

// One instance and a Vulkan 1.3 device on lavapipe (the test's environment names its ICD), with
// or without the Tandem layer above the validation layer.
class LayerSession {
public:
    explicit LayerSession(bool with_layer) {
        setenv("VK_ADD_LAYER_PATH", TANDEM_LAYER_DIR, 1);
        std::vector<const char*> layers;
        if (with_layer) {
            layers.push_back(k_layer);
        }
        if (validation_on()) {
            layers.push_back(k_validation);
        }
        const char* extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "test_layer_dispatch";
        app.apiVersion = VK_API_VERSION_1_3;
        VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        info.pApplicationInfo = &app;
        info.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
        info.ppEnabledLayerNames = layers.data();
        info.enabledExtensionCount = validation_on() ? 1 : 0;
        info.ppEnabledExtensionNames = &extension;
        EXPECT_EQ(vkCreateInstance(&info, nullptr, &instance), VK_SUCCESS);
        if (validation_on()) {
            VkDebugUtilsMessengerCreateInfoEXT messenger_info{
                VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
            messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                             VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
            messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                         VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
            messenger_info.pfnUserCallback = &on_message;
            const auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
                vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
            EXPECT_EQ(create(instance, &messenger_info, nullptr, &messenger), VK_SUCCESS);
        }
        std::uint32_t count = 1;
        EXPECT_GE(vkEnumeratePhysicalDevices(instance, &count, &physical_device), VK_SUCCESS);

        const float priority = 1.0f;
        VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue_info.queueFamilyIndex = 0;
        queue_info.queueCount = 1;
        queue_info.pQueuePriorities = &priority;
        VkPhysicalDeviceVulkan13Features features13{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
        features13.synchronization2 = VK_TRUE;
        VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        device_info.pNext = &features13;
        device_info.queueCreateInfoCount = 1;
        device_info.pQueueCreateInfos = &queue_info;
        EXPECT_EQ(vkCreateDevice(physical_device, &device_info, nullptr, &device), VK_SUCCESS);
    }

    ~LayerSession() {
        vkDestroyDevice(device, nullptr);
        if (messenger != VK_NULL_HANDLE) {
            const auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
                vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
            destroy(instance, messenger, nullptr);
        }
        vkDestroyInstance(instance, nullptr);
    }

    LayerSession(const LayerSession&) = delete;
    LayerSession& operator=(const LayerSession&) = delete;

    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
};

// The file of the library a function pointer points into.
std::string library_of(PFN_vkVoidFunction function) {
    Dl_info info{};
    if (function == nullptr || dladdr(reinterpret_cast<void*>(function), &info) == 0 ||
        info.dli_fname == nullptr) {
        return {};
    }
    return info.dli_fname;
}

TEST(LayerDispatch, TheLayerIsTheFirstToSeeTheDevicesQueueCalls) {
    LayerSession session(true);
    // The loader hands out the first layer's function for a device call.
    EXPECT_NE(library_of(vkGetDeviceProcAddr(session.device, "vkQueueSubmit"))
                  .find("libVkLayer_tandem_frame_generation.so"),
              std::string::npos);
}

TEST(LayerDispatch, ExtensionFunctionsTheDeviceDidNotEnableResolveAsWithoutTheLayer) {
    // The device enables no extension: the swapchain and submit2-KHR functions are not its own.
    const char* names[] = {
        "vkCreateSwapchainKHR", "vkDestroySwapchainKHR", "vkGetSwapchainImagesKHR",
        "vkQueuePresentKHR",    "vkQueueSubmit2KHR",     "vkQueueSubmit2",
        "vkGetDeviceQueue2",    "vkQueueBindSparse",     "vkNoSuchFunctionTANDEM"};
    std::vector<bool> without;
    {
        LayerSession plain(false);
        for (const char* name : names) {
            without.push_back(vkGetDeviceProcAddr(plain.device, name) != nullptr);
        }
    }
    LayerSession session(true);
    for (std::size_t i = 0; i < std::size(names); ++i) {
        EXPECT_EQ(vkGetDeviceProcAddr(session.device, names[i]) != nullptr, without[i]) << names[i];
    }
    EXPECT_EQ(vkGetDeviceProcAddr(session.device, "vkNoSuchFunctionTANDEM"), nullptr);
}

TEST(LayerDispatch, QueueCallsFromSeveralThreadsOnOneQueuePassThroughSerialised) {
    LayerSession session(true);
    VkDeviceQueueInfo2 queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_INFO_2};
    queue_info.queueFamilyIndex = 0;
    queue_info.queueIndex = 0;
    VkQueue queue = VK_NULL_HANDLE;
    vkGetDeviceQueue2(session.device, &queue_info, &queue);
    ASSERT_NE(queue, VK_NULL_HANDLE);
    VkQueue same = VK_NULL_HANDLE;
    vkGetDeviceQueue(session.device, 0, 0, &same);
    EXPECT_EQ(same, queue);

    const auto submit2 =
        reinterpret_cast<PFN_vkQueueSubmit2>(vkGetDeviceProcAddr(session.device, "vkQueueSubmit2"));
    ASSERT_NE(submit2, nullptr);

    // Each thread submits empty batches through vkQueueSubmit and vkQueueSubmit2, each signalling
    // its own fence, and waits the queue and the device idle: calls Vulkan requires the
    // application to serialise on one queue, which here only the layer's lock does. (Without the
    // layer, validation reports THREADING ERRORs on vkQueueSubmit and vkQueueWaitIdle here.)
    constexpr int k_threads = 4;
    constexpr int k_rounds = 50;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < k_threads; ++t) {
        threads.emplace_back([&] {
            VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
            VkFence fence = VK_NULL_HANDLE;
            if (vkCreateFence(session.device, &fence_info, nullptr, &fence) != VK_SUCCESS) {
                failures.fetch_add(1);
                return;
            }
            for (int round = 0; round < k_rounds; ++round) {
                VkResult result = VK_SUCCESS;
                if (round % 2 == 0) {
                    result = vkQueueSubmit(queue, 0, nullptr, fence);
                } else {
                    result = submit2(queue, 0, nullptr, fence);
                }
                if (result != VK_SUCCESS ||
                    vkWaitForFences(session.device, 1, &fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS ||
                    vkResetFences(session.device, 1, &fence) != VK_SUCCESS ||
                    (round % 10 == 0 && vkQueueWaitIdle(queue) != VK_SUCCESS) ||
                    (round % 25 == 0 && vkDeviceWaitIdle(session.device) != VK_SUCCESS)) {
                    failures.fetch_add(1);
                }
            }
            vkDestroyFence(session.device, fence, nullptr);
        });
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(vkDeviceWaitIdle(session.device), VK_SUCCESS);
    EXPECT_EQ(g_validation_messages.load(), 0);
}

} // namespace
