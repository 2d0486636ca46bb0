#include "submission.hpp"

#include <stdexcept>

#include "layer_state.hpp"

namespace tandem::layer {

std::vector<VkSemaphoreSubmitInfo> present_waits(const VkPresentInfoKHR& info) {
    std::vector<VkSemaphoreSubmitInfo> waits;
    for (std::uint32_t i = 0; i < info.waitSemaphoreCount; ++i) {
        waits.push_back(semaphore_info(info.pWaitSemaphores[i]));
    }
    return waits;
}

VkSemaphore create_semaphore(const DeviceDispatch& vk, VkDevice device, VkSemaphoreType type) {
    VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type_info.semaphoreType = type;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    info.pNext = &type_info;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    if (vk.CreateSemaphore(device, &info, nullptr, &semaphore) != VK_SUCCESS) {
        throw std::runtime_error("vkCreateSemaphore failed");
    }
    return semaphore;
}

bool wait_timeline(const DeviceDispatch& vk, VkDevice device, VkSemaphore timeline,
                   std::uint64_t value) {
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &timeline;
    info.pValues = &value;
    return vk.WaitSemaphores(device, &info, 10'000'000'000ull) == VK_SUCCESS;
}

VkCommandPool create_command_pool(const DeviceDispatch& vk, VkDevice device, std::uint32_t family) {
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    info.queueFamilyIndex = family;
    VkCommandPool pool = VK_NULL_HANDLE;
    if (vk.CreateCommandPool(device, &info, nullptr, &pool) != VK_SUCCESS) {
        throw std::runtime_error("vkCreateCommandPool failed");
    }
    return pool;
}

std::vector<VkCommandBuffer> allocate_command_buffers(const DeviceDispatch& vk, VkDevice device,
                                                      VkCommandPool pool, std::uint32_t count) {
    std::vector<VkCommandBuffer> cmds(count);
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = count;
    if (vk.AllocateCommandBuffers(device, &alloc, cmds.data()) != VK_SUCCESS) {
        throw std::runtime_error("vkAllocateCommandBuffers failed");
    }
    for (const VkCommandBuffer cmd : cmds) {
        *reinterpret_cast<void**>(cmd) = dispatch_key(device);
    }
    return cmds;
}

} // namespace tandem::layer
