// tandem-layer-present-probe: a Vulkan program that knows nothing of Tandem, for measuring the
// frame-generation layer where there is no display (the GPU machines): it presents to a
// VK_EXT_headless_surface swapchain, drawing a frame that changes every frame (a background
// whose colour cycles and a textured box that moves across it, which a blend of two frames
// does not make: verify mode has something to measure), paced to --fps, for --frames frames,
// and prints a JSON line with its own frame rate and the time its vkQueuePresentKHR calls took.
// Run it with and without the layer (bench/layer/run_layer_bench.sh); the layer's report has the
// rest.
//
//   tandem-layer-present-probe [--device NAME-PART] [--width W] [--height H] [--fps F]
//                              [--frames N] [--format bgra8|rgba8]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <vulkan/vulkan.h>

#include "core/stats.hpp"

namespace {

struct Options {
    std::string device;
    std::uint32_t width = 1920;
    std::uint32_t height = 1080;
    double fps = 60.0;
    std::uint32_t frames = 600;
    VkFormat format = VK_FORMAT_B8G8R8A8_UNORM; // the swapchain's
};

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "tandem-layer-present-probe: %s\n", what.c_str());
    std::exit(1);
}

void check(VkResult result, const char* call) {
    if (result != VK_SUCCESS && result != VK_SUBOPTIMAL_KHR) {
        fail(std::string(call) + " failed (" + std::to_string(result) + ")");
    }
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                fail(arg + " needs a value");
            }
            return argv[++i];
        };
        if (arg == "--device") {
            o.device = value();
        } else if (arg == "--width") {
            o.width = static_cast<std::uint32_t>(std::stoul(value()));
        } else if (arg == "--height") {
            o.height = static_cast<std::uint32_t>(std::stoul(value()));
        } else if (arg == "--fps") {
            o.fps = std::stod(value());
        } else if (arg == "--format") {
            const std::string name = value();
            if (name != "bgra8" && name != "rgba8") {
                fail("--format is bgra8 or rgba8, not '" + name + "'");
            }
            o.format = name == "rgba8" ? VK_FORMAT_R8G8B8A8_UNORM : VK_FORMAT_B8G8R8A8_UNORM;
        } else if (arg == "--frames") {
            o.frames = static_cast<std::uint32_t>(std::stoul(value()));
        } else {
            fail("unknown argument " + arg + " (see the file's header)");
        }
    }
    if (o.width == 0 || o.height == 0 || o.fps <= 0 || o.frames == 0) {
        fail("--width, --height, --fps and --frames must be positive");
    }
    return o;
}

// The moving box's texels, `side` x `side` in the swapchain's byte order (BGRA8 or RGBA8 alike:
// its colours need only differ from texel to texel): a checker of eight cells a side over a
// diagonal gradient, so that its motion can be told from its colour.
std::vector<std::uint8_t> box_texels(std::uint32_t side) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(side) * side * 4);
    const std::uint32_t cell = std::max(1u, side / 8);
    for (std::uint32_t y = 0; y < side; ++y) {
        for (std::uint32_t x = 0; x < side; ++x) {
            const bool dark = ((x / cell) + (y / cell)) % 2 == 0;
            const auto ramp = static_cast<std::uint8_t>(255u * (x + y) / (2u * side));
            std::uint8_t* t = &out[(static_cast<std::size_t>(y) * side + x) * 4];
            t[0] = dark ? ramp : static_cast<std::uint8_t>(255 - ramp);
            t[1] = dark ? 40 : 220;
            t[2] = static_cast<std::uint8_t>(dark ? 200 - ramp / 2 : 60 + ramp / 2);
            t[3] = 255;
        }
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);

    const char* instance_extensions[] = {VK_KHR_SURFACE_EXTENSION_NAME,
                                         VK_EXT_HEADLESS_SURFACE_EXTENSION_NAME};
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "tandem-layer-present-probe";
    app.apiVersion = VK_API_VERSION_1_1; // as an older program would: the layer raises it
    VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instance_info.pApplicationInfo = &app;
    instance_info.enabledExtensionCount = 2;
    instance_info.ppEnabledExtensionNames = instance_extensions;
    VkInstance instance = VK_NULL_HANDLE;
    check(vkCreateInstance(&instance_info, nullptr, &instance),
          "vkCreateInstance (with VK_EXT_headless_surface)");

    std::uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> physicals(count);
    vkEnumeratePhysicalDevices(instance, &count, physicals.data());
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    std::string name;
    for (VkPhysicalDevice p : physicals) {
        VkPhysicalDeviceProperties props{};
        vkGetPhysicalDeviceProperties(p, &props);
        if (o.device.empty() || std::strstr(props.deviceName, o.device.c_str()) != nullptr) {
            physical = p;
            name = props.deviceName;
            break;
        }
    }
    if (physical == VK_NULL_HANDLE) {
        fail("no device named like '" + o.device + "'");
    }

    VkHeadlessSurfaceCreateInfoEXT surface_info{VK_STRUCTURE_TYPE_HEADLESS_SURFACE_CREATE_INFO_EXT};
    auto create_surface = reinterpret_cast<PFN_vkCreateHeadlessSurfaceEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateHeadlessSurfaceEXT"));
    VkSurfaceKHR surface = VK_NULL_HANDLE;
    check(create_surface(instance, &surface_info, nullptr, &surface), "vkCreateHeadlessSurfaceEXT");

    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
    std::uint32_t family = UINT32_MAX;
    for (std::uint32_t i = 0; i < count; ++i) {
        VkBool32 present = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(physical, i, surface, &present);
        if ((families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0 && present == VK_TRUE) {
            family = i;
            break;
        }
    }
    if (family == UINT32_MAX) {
        fail("no graphics queue family presents to the headless surface");
    }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    const char* device_extensions[] = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    device_info.enabledExtensionCount = 1;
    device_info.ppEnabledExtensionNames = device_extensions;
    VkDevice device = VK_NULL_HANDLE;
    check(vkCreateDevice(physical, &device_info, nullptr, &device), "vkCreateDevice");
    VkQueue queue = VK_NULL_HANDLE;
    vkGetDeviceQueue(device, family, 0, &queue);

    VkSurfaceCapabilitiesKHR caps{};
    vkGetPhysicalDeviceSurfaceCapabilitiesKHR(physical, surface, &caps);
    VkSwapchainCreateInfoKHR swap_info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
    swap_info.surface = surface;
    swap_info.minImageCount = std::max(caps.minImageCount, 3u);
    swap_info.imageFormat = o.format;
    swap_info.imageColorSpace = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR;
    swap_info.imageExtent = {o.width, o.height};
    swap_info.imageArrayLayers = 1;
    swap_info.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    swap_info.preTransform = VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR;
    swap_info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
    swap_info.presentMode = VK_PRESENT_MODE_FIFO_KHR;
    swap_info.clipped = VK_TRUE;
    VkSwapchainKHR swapchain = VK_NULL_HANDLE;
    check(vkCreateSwapchainKHR(device, &swap_info, nullptr, &swapchain), "vkCreateSwapchainKHR");
    vkGetSwapchainImagesKHR(device, swapchain, &count, nullptr);
    std::vector<VkImage> images(count);
    vkGetSwapchainImagesKHR(device, swapchain, &count, images.data());

    // The box: a quarter of the frame's smaller side, copied from a host-visible buffer.
    const std::uint32_t box = std::max(8u, std::min(o.width, o.height) / 4);
    const std::vector<std::uint8_t> texels = box_texels(box);
    VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    buffer_info.size = texels.size();
    buffer_info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    VkBuffer box_buffer = VK_NULL_HANDLE;
    check(vkCreateBuffer(device, &buffer_info, nullptr, &box_buffer), "vkCreateBuffer");
    VkMemoryRequirements needs{};
    vkGetBufferMemoryRequirements(device, box_buffer, &needs);
    VkPhysicalDeviceMemoryProperties memory{};
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo memory_info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    memory_info.allocationSize = needs.size;
    memory_info.memoryTypeIndex = UINT32_MAX;
    for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
        if ((needs.memoryTypeBits & (1u << i)) != 0 &&
            (memory.memoryTypes[i].propertyFlags & host) == host) {
            memory_info.memoryTypeIndex = i;
            break;
        }
    }
    if (memory_info.memoryTypeIndex == UINT32_MAX) {
        fail("no host-visible memory for the box's texels");
    }
    VkDeviceMemory box_memory = VK_NULL_HANDLE;
    check(vkAllocateMemory(device, &memory_info, nullptr, &box_memory), "vkAllocateMemory");
    check(vkBindBufferMemory(device, box_buffer, box_memory, 0), "vkBindBufferMemory");
    void* mapped = nullptr;
    check(vkMapMemory(device, box_memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    std::memcpy(mapped, texels.data(), texels.size());
    vkUnmapMemory(device, box_memory);

    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = family;
    VkCommandPool pool = VK_NULL_HANDLE;
    check(vkCreateCommandPool(device, &pool_info, nullptr, &pool), "vkCreateCommandPool");
    // Two frames in flight, each with its command buffer, fence and two semaphores.
    constexpr std::uint32_t k_in_flight = 2;
    std::vector<VkCommandBuffer> cmds(k_in_flight);
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = k_in_flight;
    check(vkAllocateCommandBuffers(device, &alloc, cmds.data()), "vkAllocateCommandBuffers");
    std::vector<VkFence> fences(k_in_flight);
    std::vector<VkSemaphore> acquired(k_in_flight);
    std::vector<VkSemaphore> rendered(images.size());
    for (std::uint32_t i = 0; i < k_in_flight; ++i) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        fi.flags = VK_FENCE_CREATE_SIGNALED_BIT;
        check(vkCreateFence(device, &fi, nullptr, &fences[i]), "vkCreateFence");
        VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        check(vkCreateSemaphore(device, &si, nullptr, &acquired[i]), "vkCreateSemaphore");
    }
    for (VkSemaphore& s : rendered) {
        VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        check(vkCreateSemaphore(device, &si, nullptr, &s), "vkCreateSemaphore");
    }

    const auto period = std::chrono::duration<double>(1.0 / o.fps);
    const auto start = std::chrono::steady_clock::now();
    std::vector<double> present_us;
    present_us.reserve(o.frames);
    for (std::uint32_t frame = 0; frame < o.frames; ++frame) {
        std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  period * static_cast<double>(frame)));
        const std::uint32_t slot = frame % k_in_flight;
        vkWaitForFences(device, 1, &fences[slot], VK_TRUE, UINT64_MAX);
        vkResetFences(device, 1, &fences[slot]);
        std::uint32_t index = 0;
        check(vkAcquireNextImageKHR(device, swapchain, UINT64_MAX, acquired[slot], VK_NULL_HANDLE,
                                    &index),
              "vkAcquireNextImageKHR");
        VkCommandBuffer cmd = cmds[slot];
        vkResetCommandBuffer(cmd, 0);
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        vkBeginCommandBuffer(cmd, &begin);
        VkImageMemoryBarrier to_dst{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        to_dst.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        to_dst.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        to_dst.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        to_dst.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_dst.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_dst.image = images[index];
        to_dst.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                             0, nullptr, 0, nullptr, 1, &to_dst);
        // A colour that cycles over 256 frames, and the box crossing the frame left to right in
        // about 240 frames, halfway down: frame N is about the same at any size relative to its
        // extent, and changes every frame. The box moves a whole number of texels each frame
        // (8 at 1920 wide, 11 at 2560), so that a frame is its neighbours' midpoint, as steady
        // motion makes it: a fractional step rounded to texels would put it up to half a texel
        // off, which no interpolation can match.
        const float phase = static_cast<float>(frame % 256) / 255.0f;
        const VkClearColorValue background{{phase, 0.3f, 1.0f - phase, 1.0f}};
        const VkImageSubresourceRange whole{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(cmd, images[index], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &background,
                             1, &whole);
        VkMemoryBarrier cleared{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        cleared.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        cleared.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                             1, &cleared, 0, nullptr, 0, nullptr);
        const std::uint32_t travel = o.width > box ? o.width - box : 1;
        const std::uint64_t step = std::max<std::uint64_t>(1, (o.width + 120) / 240);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageOffset = {
            static_cast<std::int32_t>((static_cast<std::uint64_t>(frame) * step) % travel),
            static_cast<std::int32_t>((o.height - std::min(o.height, box)) / 2), 0};
        region.imageExtent = {std::min(box, o.width), std::min(box, o.height), 1};
        region.bufferRowLength = box;
        vkCmdCopyBufferToImage(cmd, box_buffer, images[index], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                               1, &region);
        VkImageMemoryBarrier to_present = to_dst;
        to_present.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        to_present.dstAccessMask = 0;
        to_present.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        to_present.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0, nullptr, 1,
                             &to_present);
        vkEndCommandBuffer(cmd);
        const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.waitSemaphoreCount = 1;
        submit.pWaitSemaphores = &acquired[slot];
        submit.pWaitDstStageMask = &wait_stage;
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        submit.signalSemaphoreCount = 1;
        submit.pSignalSemaphores = &rendered[index];
        check(vkQueueSubmit(queue, 1, &submit, fences[slot]), "vkQueueSubmit");
        VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
        present.waitSemaphoreCount = 1;
        present.pWaitSemaphores = &rendered[index];
        present.swapchainCount = 1;
        present.pSwapchains = &swapchain;
        present.pImageIndices = &index;
        const auto before = std::chrono::steady_clock::now();
        check(vkQueuePresentKHR(queue, &present), "vkQueuePresentKHR");
        present_us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - before)
                .count());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    vkDeviceWaitIdle(device);
    for (std::uint32_t i = 0; i < k_in_flight; ++i) {
        vkDestroyFence(device, fences[i], nullptr);
        vkDestroySemaphore(device, acquired[i], nullptr);
    }
    for (VkSemaphore s : rendered) {
        vkDestroySemaphore(device, s, nullptr);
    }
    vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyBuffer(device, box_buffer, nullptr);
    vkFreeMemory(device, box_memory, nullptr);
    vkDestroySwapchainKHR(device, swapchain, nullptr);
    vkDestroyDevice(device, nullptr);
    reinterpret_cast<PFN_vkDestroySurfaceKHR>(
        vkGetInstanceProcAddr(instance, "vkDestroySurfaceKHR"))(instance, surface, nullptr);
    vkDestroyInstance(instance, nullptr);

    std::printf(
        "{\"device\": \"%s\", \"width\": %u, \"height\": %u, \"target_fps\": %.1f, "
        "\"frames\": %u, \"fps\": %.2f, \"present_call_us_p50\": %.1f, "
        "\"present_call_us_p99\": %.1f, \"percentile\": \"nearest rank\"}\n",
        name.c_str(), o.width, o.height, o.fps, o.frames, static_cast<double>(o.frames) / seconds,
        tandem::detail::percentile(present_us, 0.5), tandem::detail::percentile(present_us, 0.99));
    return 0;
}
