// VK_LAYER_TANDEM_bench_headless_swapchain: for measuring the frame-generation layer on drivers
// without VK_EXT_headless_surface (the NVIDIA driver of a machine without a display). Loaded
// beneath the frame-generation layer, it gives the program VK_EXT_headless_surface surfaces and
// swapchains of plain device images: an image is acquired once it is free (its semaphore and
// fence signalled by an empty batch), and a present submits an empty batch that waits for the
// present's semaphores and signals a fence; the image is free again once that fence signalled.
// So the layers above present as to a display that shows each image at once (no refresh). A bench
// tool, not part of the product: it handles what tandem-layer-present-probe and the layer above
// it call, one queue family, and one swapchain per surface.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

namespace {

struct Instance {
    VkInstance instance = VK_NULL_HANDLE;
    PFN_vkGetInstanceProcAddr next = nullptr;
    PFN_vkGetPhysicalDeviceMemoryProperties memory_properties = nullptr;
};

struct Device {
    VkDevice device = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    PFN_vkGetDeviceProcAddr next = nullptr;
    VkPhysicalDeviceMemoryProperties memory{};
    PFN_vkCreateImage CreateImage = nullptr;
    PFN_vkDestroyImage DestroyImage = nullptr;
    PFN_vkGetImageMemoryRequirements GetImageMemoryRequirements = nullptr;
    PFN_vkAllocateMemory AllocateMemory = nullptr;
    PFN_vkFreeMemory FreeMemory = nullptr;
    PFN_vkBindImageMemory BindImageMemory = nullptr;
    PFN_vkQueueSubmit QueueSubmit = nullptr;
    PFN_vkCreateFence CreateFence = nullptr;
    PFN_vkDestroyFence DestroyFence = nullptr;
    PFN_vkGetFenceStatus GetFenceStatus = nullptr;
    PFN_vkResetFences ResetFences = nullptr;
    PFN_vkWaitForFences WaitForFences = nullptr;
    PFN_vkGetDeviceQueue GetDeviceQueue = nullptr;
    // The layer's own queue for acquire's signals: one more queue of family 0 than the program
    // asked for, so that they never race the program's submissions (and the layers' above) on
    // its queues. A family with one queue alone shares queue 0 under this lock, which the layers
    // above do not know: fine for a single-threaded probe, not beside a runtime's threads.
    VkQueue own_queue = VK_NULL_HANDLE;
    std::mutex queue_mutex;
};

struct Swapchain {
    Device* device = nullptr;
    VkExtent2D extent{};
    std::vector<VkImage> images;
    std::vector<VkDeviceMemory> memory;
    std::vector<VkFence> presented; // signalled once the image's present waited; null: free
    std::vector<bool> acquired;
    std::uint32_t next = 0;
};

std::mutex g_mutex;
std::unordered_map<void*, std::unique_ptr<Instance>> g_instances;
std::unordered_map<void*, std::unique_ptr<Device>> g_devices;
std::unordered_map<VkSwapchainKHR, std::unique_ptr<Swapchain>> g_swapchains;
struct Surface {
    int unused = 0;
};

void* key(const void* dispatchable) {
    return *static_cast<void* const*>(dispatchable);
}

Instance* instance_of(const void* h) {
    const std::lock_guard lock(g_mutex);
    const auto found = g_instances.find(key(h));
    return found != g_instances.end() ? found->second.get() : nullptr;
}

Device* device_of(const void* h) {
    const std::lock_guard lock(g_mutex);
    const auto found = g_devices.find(key(h));
    return found != g_devices.end() ? found->second.get() : nullptr;
}

template <typename Link>
Link* find_link(const void* next, VkStructureType type) {
    auto* info = static_cast<Link*>(const_cast<void*>(next));
    while (info != nullptr && !(info->sType == type && info->function == VK_LAYER_LINK_INFO)) {
        info = static_cast<Link*>(const_cast<void*>(info->pNext));
    }
    return info;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* info,
                                              const VkAllocationCallbacks* allocator,
                                              VkInstance* instance) {
    auto* link = find_link<VkLayerInstanceCreateInfo>(
        info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
    if (link == nullptr) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const PFN_vkGetInstanceProcAddr next = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    // The driver lacks VK_EXT_headless_surface: the names this layer provides go no further.
    VkInstanceCreateInfo down = *info;
    std::vector<const char*> names;
    for (std::uint32_t i = 0; i < info->enabledExtensionCount; ++i) {
        if (std::string_view(info->ppEnabledExtensionNames[i]) !=
            VK_EXT_HEADLESS_SURFACE_EXTENSION_NAME) {
            names.push_back(info->ppEnabledExtensionNames[i]);
        }
    }
    down.enabledExtensionCount = static_cast<std::uint32_t>(names.size());
    down.ppEnabledExtensionNames = names.data();
    const auto create =
        reinterpret_cast<PFN_vkCreateInstance>(next(VK_NULL_HANDLE, "vkCreateInstance"));
    const VkResult result = create(&down, allocator, instance);
    if (result == VK_SUCCESS) {
        auto record = std::make_unique<Instance>();
        record->instance = *instance;
        record->next = next;
        record->memory_properties = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
            next(*instance, "vkGetPhysicalDeviceMemoryProperties"));
        const std::lock_guard lock(g_mutex);
        g_instances[key(*instance)] = std::move(record);
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physical,
                                            const VkDeviceCreateInfo* info,
                                            const VkAllocationCallbacks* allocator,
                                            VkDevice* device) {
    auto* link = find_link<VkLayerDeviceCreateInfo>(info->pNext,
                                                    VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
    Instance* instance = instance_of(physical);
    if (link == nullptr || instance == nullptr) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    // The loader's callback that gives a dispatchable object made beneath it (our own queue) the
    // device's dispatch word, as the loader does for the program's.
    PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
    for (auto* c = static_cast<const VkLayerDeviceCreateInfo*>(info->pNext); c != nullptr;
         c = static_cast<const VkLayerDeviceCreateInfo*>(c->pNext)) {
        if (c->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
            c->function == VK_LOADER_DATA_CALLBACK) {
            set_loader_data = c->u.pfnSetDeviceLoaderData;
        }
    }
    const PFN_vkGetInstanceProcAddr next_instance = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    const PFN_vkGetDeviceProcAddr next = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    const auto create =
        reinterpret_cast<PFN_vkCreateDevice>(next_instance(instance->instance, "vkCreateDevice"));
    const auto families_of = reinterpret_cast<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
        next_instance(instance->instance, "vkGetPhysicalDeviceQueueFamilyProperties"));
    std::uint32_t family_count = 0;
    families_of(physical, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    families_of(physical, &family_count, families.data());
    VkDeviceCreateInfo down = *info;
    std::vector<VkDeviceQueueCreateInfo> queues(
        info->pQueueCreateInfos, info->pQueueCreateInfos + info->queueCreateInfoCount);
    std::vector<float> priorities;
    std::uint32_t own_index = UINT32_MAX;
    for (VkDeviceQueueCreateInfo& q : queues) {
        if (q.queueFamilyIndex == 0 && q.queueCount < families[0].queueCount) {
            priorities.assign(q.pQueuePriorities, q.pQueuePriorities + q.queueCount);
            priorities.push_back(1.0f);
            own_index = q.queueCount;
            q.queueCount += 1;
            q.pQueuePriorities = priorities.data();
        }
    }
    down.pQueueCreateInfos = queues.data();
    const VkResult result = create(physical, &down, allocator, device);
    if (result != VK_SUCCESS) {
        return result;
    }
    auto d = std::make_unique<Device>();
    d->device = *device;
    d->physical = physical;
    d->next = next;
    instance->memory_properties(physical, &d->memory);
    auto load = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(next(*device, name));
    };
    load(d->CreateImage, "vkCreateImage");
    load(d->DestroyImage, "vkDestroyImage");
    load(d->GetImageMemoryRequirements, "vkGetImageMemoryRequirements");
    load(d->AllocateMemory, "vkAllocateMemory");
    load(d->FreeMemory, "vkFreeMemory");
    load(d->BindImageMemory, "vkBindImageMemory");
    load(d->QueueSubmit, "vkQueueSubmit");
    load(d->CreateFence, "vkCreateFence");
    load(d->DestroyFence, "vkDestroyFence");
    load(d->GetFenceStatus, "vkGetFenceStatus");
    load(d->ResetFences, "vkResetFences");
    load(d->WaitForFences, "vkWaitForFences");
    load(d->GetDeviceQueue, "vkGetDeviceQueue");
    d->GetDeviceQueue(*device, 0, own_index != UINT32_MAX ? own_index : 0, &d->own_queue);
    if (set_loader_data != nullptr) {
        set_loader_data(*device, d->own_queue);
    }
    const std::lock_guard lock(g_mutex);
    g_devices[key(*device)] = std::move(d);
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateHeadlessSurfaceEXT(VkInstance,
                                                        const VkHeadlessSurfaceCreateInfoEXT*,
                                                        const VkAllocationCallbacks*,
                                                        VkSurfaceKHR* surface) {
    *surface = reinterpret_cast<VkSurfaceKHR>(new Surface());
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroySurfaceKHR(VkInstance, VkSurfaceKHR surface,
                                             const VkAllocationCallbacks*) {
    delete reinterpret_cast<Surface*>(surface);
}

VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceSurfaceSupportKHR(VkPhysicalDevice,
                                                                  std::uint32_t family,
                                                                  VkSurfaceKHR,
                                                                  VkBool32* supported) {
    *supported = family == 0 ? VK_TRUE : VK_FALSE;
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceSurfaceCapabilitiesKHR(
    VkPhysicalDevice, VkSurfaceKHR, VkSurfaceCapabilitiesKHR* caps) {
    *caps = {};
    caps->minImageCount = 2;
    caps->maxImageCount = 16;
    caps->currentExtent = {0xFFFFFFFFu, 0xFFFFFFFFu};
    caps->minImageExtent = {1, 1};
    caps->maxImageExtent = {16384, 16384};
    caps->maxImageArrayLayers = 1;
    caps->supportedTransforms = VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR;
    caps->currentTransform = VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR;
    caps->supportedCompositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
    caps->supportedUsageFlags = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                                VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                                VK_IMAGE_USAGE_STORAGE_BIT;
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceSurfaceFormatsKHR(VkPhysicalDevice, VkSurfaceKHR,
                                                                  std::uint32_t* count,
                                                                  VkSurfaceFormatKHR* formats) {
    // BGRA8 first, as most displays list it; RGBA8 for a program that asks for it.
    constexpr VkSurfaceFormatKHR k_formats[] = {
        {VK_FORMAT_B8G8R8A8_UNORM, VK_COLOR_SPACE_SRGB_NONLINEAR_KHR},
        {VK_FORMAT_R8G8B8A8_UNORM, VK_COLOR_SPACE_SRGB_NONLINEAR_KHR}};
    constexpr std::uint32_t k_count = 2;
    if (formats == nullptr) {
        *count = k_count;
        return VK_SUCCESS;
    }
    const std::uint32_t written = std::min(*count, k_count);
    std::copy_n(k_formats, written, formats);
    *count = written;
    return written < k_count ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL GetPhysicalDeviceSurfacePresentModesKHR(VkPhysicalDevice,
                                                                       VkSurfaceKHR,
                                                                       std::uint32_t* count,
                                                                       VkPresentModeKHR* modes) {
    // A display with no refresh shows each image at once whatever the mode: every mode a program
    // may ask for is the same here, and the frame-generation layer paces the non-FIFO ones.
    constexpr std::array k_modes{VK_PRESENT_MODE_FIFO_KHR, VK_PRESENT_MODE_MAILBOX_KHR,
                                 VK_PRESENT_MODE_IMMEDIATE_KHR};
    if (modes == nullptr) {
        *count = static_cast<std::uint32_t>(k_modes.size());
        return VK_SUCCESS;
    }
    const std::uint32_t written = std::min<std::uint32_t>(*count, k_modes.size());
    std::copy_n(k_modes.begin(), written, modes);
    *count = written;
    return written < k_modes.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateSwapchainKHR(VkDevice device,
                                                  const VkSwapchainCreateInfoKHR* info,
                                                  const VkAllocationCallbacks*,
                                                  VkSwapchainKHR* out) {
    Device* d = device_of(device);
    auto s = std::make_unique<Swapchain>();
    s->device = d;
    s->extent = info->imageExtent;
    for (std::uint32_t i = 0; i < info->minImageCount; ++i) {
        VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        ii.imageType = VK_IMAGE_TYPE_2D;
        ii.format = info->imageFormat;
        ii.extent = {info->imageExtent.width, info->imageExtent.height, 1};
        ii.mipLevels = 1;
        ii.arrayLayers = 1;
        ii.samples = VK_SAMPLE_COUNT_1_BIT;
        ii.tiling = VK_IMAGE_TILING_OPTIMAL;
        ii.usage = info->imageUsage;
        // A mutable-format swapchain (VK_KHR_swapchain_mutable_format): its images are made as
        // the extension says a driver's are, with the view formats it lists.
        VkImageFormatListCreateInfo formats{VK_STRUCTURE_TYPE_IMAGE_FORMAT_LIST_CREATE_INFO};
        if ((info->flags & VK_SWAPCHAIN_CREATE_MUTABLE_FORMAT_BIT_KHR) != 0) {
            ii.flags = VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT | VK_IMAGE_CREATE_EXTENDED_USAGE_BIT;
            for (auto* c = static_cast<const VkBaseInStructure*>(info->pNext); c != nullptr;
                 c = c->pNext) {
                if (c->sType == VK_STRUCTURE_TYPE_IMAGE_FORMAT_LIST_CREATE_INFO) {
                    formats = *reinterpret_cast<const VkImageFormatListCreateInfo*>(c);
                    formats.pNext = nullptr;
                    ii.pNext = &formats;
                }
            }
        }
        VkImage image = VK_NULL_HANDLE;
        if (d->CreateImage(device, &ii, nullptr, &image) != VK_SUCCESS) {
            return VK_ERROR_OUT_OF_DEVICE_MEMORY;
        }
        VkMemoryRequirements req{};
        d->GetImageMemoryRequirements(device, image, &req);
        VkMemoryAllocateInfo mi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mi.allocationSize = req.size;
        for (std::uint32_t t = 0; t < d->memory.memoryTypeCount; ++t) {
            if ((req.memoryTypeBits & (1u << t)) != 0 &&
                (d->memory.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) !=
                    0) {
                mi.memoryTypeIndex = t;
                break;
            }
        }
        VkDeviceMemory memory = VK_NULL_HANDLE;
        if (d->AllocateMemory(device, &mi, nullptr, &memory) != VK_SUCCESS) {
            return VK_ERROR_OUT_OF_DEVICE_MEMORY;
        }
        d->BindImageMemory(device, image, memory, 0);
        s->images.push_back(image);
        s->memory.push_back(memory);
        s->presented.push_back(VK_NULL_HANDLE);
        s->acquired.push_back(false);
    }
    *out = reinterpret_cast<VkSwapchainKHR>(s.get());
    const std::lock_guard lock(g_mutex);
    g_swapchains[*out] = std::move(s);
    return VK_SUCCESS;
}

Swapchain* swapchain_of(VkSwapchainKHR h) {
    const std::lock_guard lock(g_mutex);
    const auto found = g_swapchains.find(h);
    return found != g_swapchains.end() ? found->second.get() : nullptr;
}

VKAPI_ATTR void VKAPI_CALL DestroySwapchainKHR(VkDevice device, VkSwapchainKHR h,
                                               const VkAllocationCallbacks*) {
    Swapchain* s = swapchain_of(h);
    if (s == nullptr) {
        return;
    }
    Device* d = s->device;
    for (std::size_t i = 0; i < s->images.size(); ++i) {
        if (s->presented[i] != VK_NULL_HANDLE) {
            d->WaitForFences(device, 1, &s->presented[i], VK_TRUE, UINT64_MAX);
            d->DestroyFence(device, s->presented[i], nullptr);
        }
        d->DestroyImage(device, s->images[i], nullptr);
        d->FreeMemory(device, s->memory[i], nullptr);
    }
    const std::lock_guard lock(g_mutex);
    g_swapchains.erase(h);
}

VKAPI_ATTR VkResult VKAPI_CALL GetSwapchainImagesKHR(VkDevice, VkSwapchainKHR h,
                                                     std::uint32_t* count, VkImage* images) {
    Swapchain* s = swapchain_of(h);
    if (images == nullptr) {
        *count = static_cast<std::uint32_t>(s->images.size());
        return VK_SUCCESS;
    }
    const auto n = std::min(*count, static_cast<std::uint32_t>(s->images.size()));
    std::copy_n(s->images.begin(), n, images);
    *count = n;
    return n < s->images.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

// An image is free when it is not acquired and its last present (if any) has waited.
bool is_free(Swapchain& s, std::uint32_t i) {
    if (s.acquired[i]) {
        return false;
    }
    if (s.presented[i] == VK_NULL_HANDLE) {
        return true;
    }
    if (s.device->GetFenceStatus(s.device->device, s.presented[i]) != VK_SUCCESS) {
        return false;
    }
    s.device->DestroyFence(s.device->device, s.presented[i], nullptr);
    s.presented[i] = VK_NULL_HANDLE;
    return true;
}

VKAPI_ATTR VkResult VKAPI_CALL AcquireNextImageKHR(VkDevice, VkSwapchainKHR h,
                                                   std::uint64_t timeout, VkSemaphore semaphore,
                                                   VkFence fence, std::uint32_t* index) {
    Swapchain* s = swapchain_of(h);
    Device* d = s->device;
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::nanoseconds(std::min<std::uint64_t>(timeout, 3600ull * 1000000000ull));
    for (;;) {
        for (std::size_t k = 0; k < s->images.size(); ++k) {
            const std::uint32_t i = (s->next + static_cast<std::uint32_t>(k)) %
                                    static_cast<std::uint32_t>(s->images.size());
            if (is_free(*s, i)) {
                s->acquired[i] = true;
                s->next = (i + 1) % static_cast<std::uint32_t>(s->images.size());
                *index = i;
                VkSubmitInfo signal{VK_STRUCTURE_TYPE_SUBMIT_INFO};
                signal.signalSemaphoreCount = semaphore != VK_NULL_HANDLE ? 1u : 0u;
                signal.pSignalSemaphores = &semaphore;
                const std::lock_guard lock(d->queue_mutex);
                return d->QueueSubmit(d->own_queue, 1, &signal, fence);
            }
        }
        if (timeout == 0) {
            return VK_NOT_READY;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return VK_TIMEOUT;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

VKAPI_ATTR VkResult VKAPI_CALL QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR* info) {
    VkResult result = VK_SUCCESS;
    for (std::uint32_t k = 0; k < info->swapchainCount; ++k) {
        Swapchain* s = swapchain_of(info->pSwapchains[k]);
        Device* d = s->device;
        const std::uint32_t i = info->pImageIndices[k];
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence = VK_NULL_HANDLE;
        d->CreateFence(d->device, &fi, nullptr, &fence);
        // The present's waits: an empty batch on the present's queue (the caller holds whatever
        // lock it keeps for that queue), whose fence frees the image.
        std::vector<VkPipelineStageFlags> stages(k == 0 ? info->waitSemaphoreCount : 0,
                                                 VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
        VkSubmitInfo wait{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        wait.waitSemaphoreCount = k == 0 ? info->waitSemaphoreCount : 0;
        wait.pWaitSemaphores = info->pWaitSemaphores;
        wait.pWaitDstStageMask = stages.data();
        const VkResult r = d->QueueSubmit(queue, 1, &wait, fence);
        s->presented[i] = fence;
        s->acquired[i] = false;
        if (info->pResults != nullptr) {
            info->pResults[k] = r;
        }
        result = r != VK_SUCCESS ? r : result;
    }
    return result;
}

PFN_vkVoidFunction to_void(auto f) {
    return reinterpret_cast<PFN_vkVoidFunction>(f);
}

PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name);

PFN_vkVoidFunction own_device_function(std::string_view name) {
    if (name == "vkCreateSwapchainKHR")
        return to_void(&CreateSwapchainKHR);
    if (name == "vkDestroySwapchainKHR")
        return to_void(&DestroySwapchainKHR);
    if (name == "vkGetSwapchainImagesKHR")
        return to_void(&GetSwapchainImagesKHR);
    if (name == "vkAcquireNextImageKHR")
        return to_void(&AcquireNextImageKHR);
    if (name == "vkQueuePresentKHR")
        return to_void(&QueuePresentKHR);
    if (name == "vkGetDeviceProcAddr")
        return to_void(&GetDeviceProcAddr);
    return nullptr;
}

PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name) {
    if (const PFN_vkVoidFunction own = own_device_function(name)) {
        return own;
    }
    Device* d = device_of(device);
    return d != nullptr ? d->next(device, name) : nullptr;
}

PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance, const char* name) {
    const std::string_view n(name);
    if (n == "vkGetInstanceProcAddr")
        return to_void(&GetInstanceProcAddr);
    if (n == "vkCreateInstance")
        return to_void(&CreateInstance);
    if (n == "vkCreateDevice")
        return to_void(&CreateDevice);
    if (n == "vkCreateHeadlessSurfaceEXT")
        return to_void(&CreateHeadlessSurfaceEXT);
    if (n == "vkDestroySurfaceKHR")
        return to_void(&DestroySurfaceKHR);
    if (n == "vkGetPhysicalDeviceSurfaceSupportKHR")
        return to_void(&GetPhysicalDeviceSurfaceSupportKHR);
    if (n == "vkGetPhysicalDeviceSurfaceCapabilitiesKHR")
        return to_void(&GetPhysicalDeviceSurfaceCapabilitiesKHR);
    if (n == "vkGetPhysicalDeviceSurfaceFormatsKHR")
        return to_void(&GetPhysicalDeviceSurfaceFormatsKHR);
    if (n == "vkGetPhysicalDeviceSurfacePresentModesKHR")
        return to_void(&GetPhysicalDeviceSurfacePresentModesKHR);
    if (const PFN_vkVoidFunction own = own_device_function(n)) {
        return own;
    }
    Instance* i = instance != VK_NULL_HANDLE ? instance_of(instance) : nullptr;
    return i != nullptr ? i->next(instance, name) : nullptr;
}

} // namespace

extern "C" {

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* interface) {
    if (interface == nullptr || interface->loaderLayerInterfaceVersion < 2) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    interface->loaderLayerInterfaceVersion = 2;
    interface->pfnGetInstanceProcAddr = &GetInstanceProcAddr;
    interface->pfnGetDeviceProcAddr = &GetDeviceProcAddr;
    interface->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

} // extern "C"
