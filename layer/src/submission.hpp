// The layer's submission plumbing, shared by the swapchains' generation and scaling: submit
// infos, the program's present semaphores as waits, semaphores made and host waits, command
// pools and buffers, all on the next layer's functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <vulkan/vulkan.h>

#include "dispatch_table.hpp"

namespace tandem::layer {

// A wait or signal of `semaphore` (at `value` for a timeline) by all commands.
[[nodiscard]] inline VkSemaphoreSubmitInfo semaphore_info(VkSemaphore semaphore,
                                                          std::uint64_t value = 0) {
    VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    info.semaphore = semaphore;
    info.value = value;
    info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    return info;
}

// One batch: its waits, its command buffer (none when `cmd` is null) and its signals. The spans
// and `cmd` must outlive the submit.
[[nodiscard]] inline VkSubmitInfo2 batch_info(std::span<const VkSemaphoreSubmitInfo> waits,
                                              const VkCommandBufferSubmitInfo* cmd,
                                              std::span<const VkSemaphoreSubmitInfo> signals) {
    VkSubmitInfo2 batch{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    batch.waitSemaphoreInfoCount = static_cast<std::uint32_t>(waits.size());
    batch.pWaitSemaphoreInfos = waits.data();
    batch.commandBufferInfoCount = cmd != nullptr ? 1u : 0u;
    batch.pCommandBufferInfos = cmd;
    batch.signalSemaphoreInfoCount = static_cast<std::uint32_t>(signals.size());
    batch.pSignalSemaphoreInfos = signals.data();
    return batch;
}

// A present of one image of one swapchain, after one (binary) semaphore. The three must outlive
// the present call.
[[nodiscard]] inline VkPresentInfoKHR single_present(const VkSwapchainKHR& swapchain,
                                                     const std::uint32_t& image,
                                                     const VkSemaphore& wait) {
    VkPresentInfoKHR info{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    info.waitSemaphoreCount = 1;
    info.pWaitSemaphores = &wait;
    info.swapchainCount = 1;
    info.pSwapchains = &swapchain;
    info.pImageIndices = &image;
    return info;
}

// A present's wait semaphores (binary) as waits of a batch.
[[nodiscard]] std::vector<VkSemaphoreSubmitInfo> present_waits(const VkPresentInfoKHR& info);

// A new semaphore of `type`; throws std::runtime_error when it cannot be made.
[[nodiscard]] VkSemaphore create_semaphore(const DeviceDispatch& vk, VkDevice device,
                                           VkSemaphoreType type);

// Waits on the host (up to 10 s) for a timeline to reach `value`: false when it did not.
[[nodiscard]] bool wait_timeline(const DeviceDispatch& vk, VkDevice device, VkSemaphore timeline,
                                 std::uint64_t value);

// A command pool of `family` whose buffers are reset one by one; throws std::runtime_error.
[[nodiscard]] VkCommandPool create_command_pool(const DeviceDispatch& vk, VkDevice device,
                                                std::uint32_t family);

// `count` primary command buffers of `pool`, each given the device's dispatch word (made beneath
// the loader, which would set it); throws std::runtime_error.
[[nodiscard]] std::vector<VkCommandBuffer> allocate_command_buffers(const DeviceDispatch& vk,
                                                                    VkDevice device,
                                                                    VkCommandPool pool,
                                                                    std::uint32_t count);

} // namespace tandem::layer
