// layer_windows_probe: a program with two windows, each with its own swapchain on one device,
// for the layer's tests of several swapchains alive at once. It opens two X windows of different
// sizes (run it under xvfb-run) and presents --frames frames on each, each frame cleared to a
// colour of its own: with --together 1 both images in one vkQueuePresentKHR (with pResults, as
// a program that shows a scene on two monitors does), else one present per window. It prints
// the frames each window's present answered VK_SUCCESS or VK_SUBOPTIMAL_KHR for
// ("presented A B") and exits 0. --format a2r10g10b10: the swapchains' format is
// VK_FORMAT_A2R10G10B10_UNORM_PACK32 (an X server of depth 30 offers it), else
// VK_FORMAT_B8G8R8A8_UNORM.
//
//   layer_windows_probe [--frames N] [--together 0|1] [--format b8g8r8a8|a2r10g10b10]
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "probe_device.hpp"

namespace {

using probe::check;
using probe::fail;

bool shown(VkResult result) {
    return result == VK_SUCCESS || result == VK_SUBOPTIMAL_KHR;
}

// One window and what presents to it.
struct Window {
    xcb_window_t window = 0;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    VkSurfaceKHR surface = VK_NULL_HANDLE;
    VkSwapchainKHR swapchain = VK_NULL_HANDLE;
    std::vector<VkImage> images;
    VkSemaphore acquired = VK_NULL_HANDLE;
    std::vector<VkSemaphore> rendered; // one per image
    std::uint64_t presented = 0;
};

} // namespace

int main(int argc, char** argv) {
    probe::g_name = "layer_windows_probe";
    std::uint32_t frames = 60;
    bool together = false;
    VkFormat format = VK_FORMAT_B8G8R8A8_UNORM;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string arg = argv[i];
        if (arg == "--frames") {
            frames = static_cast<std::uint32_t>(std::stoul(argv[i + 1]));
        } else if (arg == "--together") {
            together = std::string(argv[i + 1]) == "1";
        } else if (arg == "--format") {
            const std::string name = argv[i + 1];
            if (name == "a2r10g10b10") {
                format = VK_FORMAT_A2R10G10B10_UNORM_PACK32;
            } else if (name != "b8g8r8a8") {
                fail("unknown format " + name);
            }
        } else {
            fail("unknown argument " + arg);
        }
    }

    const probe::ProbeDevice probe("layer_windows_probe");
    const VkDevice device = probe.device;
    const VkCommandBuffer cmd = probe.cmd;
    std::array<Window, 2> windows;
    windows[0].width = 160;
    windows[0].height = 120;
    windows[1].width = 128;
    windows[1].height = 96;
    for (Window& w : windows) {
        w.window = probe.create_window(static_cast<std::uint16_t>(w.width),
                                       static_cast<std::uint16_t>(w.height));
        w.surface = probe.create_surface(w.window);
    }
    VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    std::uint32_t count = 0;

    for (Window& w : windows) {
        VkSurfaceCapabilitiesKHR caps{};
        check(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(probe.physical, w.surface, &caps),
              "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
        w.swapchain = probe.create_swapchain(w.surface, caps, format, VK_NULL_HANDLE);
        vkGetSwapchainImagesKHR(device, w.swapchain, &count, nullptr);
        w.images.resize(count);
        vkGetSwapchainImagesKHR(device, w.swapchain, &count, w.images.data());
        check(vkCreateSemaphore(device, &semaphore_info, nullptr, &w.acquired),
              "vkCreateSemaphore");
        w.rendered.resize(count);
        for (VkSemaphore& r : w.rendered) {
            check(vkCreateSemaphore(device, &semaphore_info, nullptr, &r), "vkCreateSemaphore");
        }
    }

    for (std::uint32_t frame = 0; frame < frames; ++frame) {
        std::array<std::uint32_t, 2> indices{};
        vkResetCommandBuffer(cmd, 0);
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        vkBeginCommandBuffer(cmd, &begin);
        for (std::size_t i = 0; i < windows.size(); ++i) {
            Window& w = windows[i];
            const VkResult got = vkAcquireNextImageKHR(device, w.swapchain, UINT64_MAX, w.acquired,
                                                       VK_NULL_HANDLE, &indices[i]);
            if (!shown(got)) {
                fail("vkAcquireNextImageKHR failed (" + std::to_string(got) + ")");
            }
            const float shade = static_cast<float>((frame + 16 * i) % 64) / 63.0f;
            probe::record_clear(cmd, w.images[indices[i]], shade);
        }
        vkEndCommandBuffer(cmd);
        const std::array<VkSemaphore, 2> waits{windows[0].acquired, windows[1].acquired};
        const std::array<VkPipelineStageFlags, 2> stages{VK_PIPELINE_STAGE_TRANSFER_BIT,
                                                         VK_PIPELINE_STAGE_TRANSFER_BIT};
        const std::array<VkSemaphore, 2> signals{windows[0].rendered[indices[0]],
                                                 windows[1].rendered[indices[1]]};
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.waitSemaphoreCount = 2;
        submit.pWaitSemaphores = waits.data();
        submit.pWaitDstStageMask = stages.data();
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        submit.signalSemaphoreCount = 2;
        submit.pSignalSemaphores = signals.data();
        check(vkQueueSubmit(probe.queue, 1, &submit, probe.fence), "vkQueueSubmit");
        if (together) {
            const std::array<VkSwapchainKHR, 2> swapchains{windows[0].swapchain,
                                                           windows[1].swapchain};
            std::array<VkResult, 2> results{VK_ERROR_UNKNOWN, VK_ERROR_UNKNOWN};
            VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
            present.waitSemaphoreCount = 2;
            present.pWaitSemaphores = signals.data();
            present.swapchainCount = 2;
            present.pSwapchains = swapchains.data();
            present.pImageIndices = indices.data();
            present.pResults = results.data();
            const VkResult all = vkQueuePresentKHR(probe.queue, &present);
            for (std::size_t i = 0; i < windows.size(); ++i) {
                windows[i].presented += shown(all) && shown(results[i]) ? 1 : 0;
            }
        } else {
            for (std::size_t i = 0; i < windows.size(); ++i) {
                VkPresentInfoKHR present{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
                present.waitSemaphoreCount = 1;
                present.pWaitSemaphores = &signals[i];
                present.swapchainCount = 1;
                present.pSwapchains = &windows[i].swapchain;
                present.pImageIndices = &indices[i];
                windows[i].presented += shown(vkQueuePresentKHR(probe.queue, &present)) ? 1 : 0;
            }
        }
        probe.wait_fence();
    }
    // The rendered semaphores' last presents may still wait on them: idle before they go.
    check(vkDeviceWaitIdle(device), "vkDeviceWaitIdle");
    for (Window& w : windows) {
        vkDestroySwapchainKHR(device, w.swapchain, nullptr);
        for (VkSemaphore r : w.rendered) {
            vkDestroySemaphore(device, r, nullptr);
        }
        vkDestroySemaphore(device, w.acquired, nullptr);
    }
    for (Window& w : windows) {
        vkDestroySurfaceKHR(probe.instance, w.surface, nullptr);
        xcb_destroy_window(probe.connection, w.window);
    }
    std::printf("presented %llu %llu\n", static_cast<unsigned long long>(windows[0].presented),
                static_cast<unsigned long long>(windows[1].presented));
    return 0;
}
