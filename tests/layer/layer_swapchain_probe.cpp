// layer_swapchain_probe: a program that recreates its swapchain many times while it presents, as
// a program does on every resize, for the layer's tests. It opens an X window (run it under
// xvfb-run), and for each of --swapchains swapchains resizes the window (two sizes in turn),
// creates the swapchain with the one before as oldSwapchain, destroys that one, and presents
// --frames frames on the new one (--last-frames on the last), each frame cleared to a colour of
// its own. It prints the frames whose present answered VK_SUCCESS or VK_SUBOPTIMAL_KHR
// ("presented N") and exits 0. --same-size 1: the window keeps its size, and each swapchain is
// recreated at the same size (as a program does after VK_SUBOPTIMAL_KHR, or to change its
// present mode). Programs' bugs a layer must survive: --keep-last swapchain: the last swapchain is
// never destroyed, and the program destroys its surface, then its device and instance, with it
// alive; --keep-last surface: the surface (and its window) are not destroyed either, so that the
// device goes first; --keep-last device: the device is not destroyed either, only the instance;
// --keep-last instance: nothing is destroyed, and the program returns from main right after its
// last present, while the layer may still be generating frames.
//
//   layer_swapchain_probe [--swapchains N] [--frames N] [--last-frames N] [--same-size 0|1]
//                         [--keep-last none|swapchain|surface|device|instance]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "probe_device.hpp"

namespace {

using probe::check;
using probe::fail;

} // namespace

int main(int argc, char** argv) {
    probe::g_name = "layer_swapchain_probe";
    std::uint32_t swapchains = 20;
    std::uint32_t frames = 10;
    std::uint32_t last_frames = 0; // 0: --frames
    bool same_size = false;
    std::string keep_last = "none";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string arg = argv[i];
        if (arg == "--swapchains") {
            swapchains = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
        } else if (arg == "--frames") {
            frames = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
        } else if (arg == "--same-size") {
            same_size = std::string(argv[i + 1]) == "1";
        } else if (arg == "--keep-last") {
            keep_last = argv[i + 1];
            if (keep_last != "none" && keep_last != "swapchain" && keep_last != "surface" &&
                keep_last != "device" && keep_last != "instance") {
                fail("--keep-last takes none, swapchain, surface, device or instance");
            }
        } else if (arg == "--last-frames") {
            last_frames = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
        } else {
            fail("unknown argument " + arg);
        }
    }

    probe::ProbeDevice probe("layer_swapchain_probe");
    probe.keep_device = keep_last == "device" || keep_last == "instance";
    probe.keep_instance = keep_last == "instance";
    const xcb_window_t window = probe.create_window(160, 120);
    const VkSurfaceKHR surface = probe.create_surface(window);
    const VkPhysicalDevice physical = probe.physical;
    const VkDevice device = probe.device;
    const VkQueue queue = probe.queue;
    const VkCommandBuffer cmd = probe.cmd;
    std::uint32_t count = 0;
    VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore acquired = VK_NULL_HANDLE;
    check(vkCreateSemaphore(device, &semaphore_info, nullptr, &acquired), "vkCreateSemaphore");

    VkSwapchainKHR swapchain = VK_NULL_HANDLE;
    std::uint64_t presented = 0;
    std::uint64_t frame = 0;
    for (std::uint32_t s = 0; s < swapchains; ++s) {
        // Every other swapchain the window is smaller: a resize, as a user makes one.
        const bool larger = same_size || s % 2 == 0;
        const std::uint32_t size[2] = {larger ? 160u : 128u, larger ? 120u : 96u};
        xcb_configure_window(probe.connection, window,
                             XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT, size);
        xcb_flush(probe.connection);
        VkSurfaceCapabilitiesKHR caps{};
        for (int tries = 0; tries < 200; ++tries) {
            vkGetPhysicalDeviceSurfaceCapabilitiesKHR(physical, surface, &caps);
            if (caps.currentExtent.width == size[0] && caps.currentExtent.height == size[1]) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        const VkSwapchainKHR next =
            probe.create_swapchain(surface, caps, VK_FORMAT_B8G8R8A8_UNORM, swapchain);
        if (swapchain != VK_NULL_HANDLE) {
            check(vkDeviceWaitIdle(device), "vkDeviceWaitIdle");
            vkDestroySwapchainKHR(device, swapchain, nullptr);
        }
        swapchain = next;
        vkGetSwapchainImagesKHR(device, swapchain, &count, nullptr);
        std::vector<VkImage> images(count);
        vkGetSwapchainImagesKHR(device, swapchain, &count, images.data());
        std::vector<VkSemaphore> rendered(count);
        for (VkSemaphore& r : rendered) {
            check(vkCreateSemaphore(device, &semaphore_info, nullptr, &r), "vkCreateSemaphore");
        }
        const std::uint32_t count_here =
            s + 1 == swapchains && last_frames > 0 ? last_frames : frames;
        for (std::uint32_t f = 0; f < count_here; ++f, ++frame) {
            std::uint32_t index = 0;
            const VkResult got = vkAcquireNextImageKHR(device, swapchain, UINT64_MAX, acquired,
                                                       VK_NULL_HANDLE, &index);
            if (got != VK_SUCCESS && got != VK_SUBOPTIMAL_KHR) {
                fail("vkAcquireNextImageKHR failed (" + std::to_string(got) + ")");
            }
            vkResetCommandBuffer(cmd, 0);
            VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            vkBeginCommandBuffer(cmd, &begin);
            probe::record_clear(cmd, images[index], static_cast<float>(frame % 64) / 63.0f);
            vkEndCommandBuffer(cmd);
            const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
            VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
            submit.waitSemaphoreCount = 1;
            submit.pWaitSemaphores = &acquired;
            submit.pWaitDstStageMask = &stage;
            submit.commandBufferCount = 1;
            submit.pCommandBuffers = &cmd;
            submit.signalSemaphoreCount = 1;
            submit.pSignalSemaphores = &rendered[index];
            check(vkQueueSubmit(queue, 1, &submit, probe.fence), "vkQueueSubmit");
            VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
            present.waitSemaphoreCount = 1;
            present.pWaitSemaphores = &rendered[index];
            present.swapchainCount = 1;
            present.pSwapchains = &swapchain;
            present.pImageIndices = &index;
            const VkResult shown = vkQueuePresentKHR(queue, &present);
            presented += shown == VK_SUCCESS || shown == VK_SUBOPTIMAL_KHR ? 1 : 0;
            probe.wait_fence();
        }
        if (keep_last == "instance" && s + 1 == swapchains) {
            break; // the program exits at once: nothing waited for, nothing destroyed
        }
        // The rendered semaphores' last presents may still wait on them: idle before they go.
        check(vkDeviceWaitIdle(device), "vkDeviceWaitIdle");
        for (VkSemaphore r : rendered) {
            vkDestroySemaphore(device, r, nullptr);
        }
    }
    if (keep_last == "none") {
        vkDestroySwapchainKHR(device, swapchain, nullptr);
    }
    if (keep_last != "instance") {
        vkDestroySemaphore(device, acquired, nullptr);
    }
    if (keep_last == "none" || keep_last == "swapchain") {
        vkDestroySurfaceKHR(probe.instance, surface, nullptr);
        xcb_destroy_window(probe.connection, window);
    }
    std::printf("presented %llu\n", static_cast<unsigned long long>(presented));
    return 0;
}
