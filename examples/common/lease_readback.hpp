// LeaseReadback: an engine's readback on the primary, shared by the examples: one command buffer
// that waits for a lease, copies its image (RGBA8, width x height) to a host buffer and returns
// the lease's layout, signalling Tandem's primary timeline when it is done; the host then waits
// for that value. Plain Vulkan on Runtime::primary_vulkan(), as an engine would write it.
// One thread; destroy before the Runtime.
#pragma once

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <tandem/tandem.hpp>
#include <vulkan/vulkan.h>

namespace tandem_examples {

inline void readback_check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed: " + tandem::to_string(r));
    }
}

class LeaseReadback {
public:
    LeaseReadback(const tandem::PrimaryVulkan& p, std::uint32_t width, std::uint32_t height)
        : m_p(p), m_width(width), m_height(height) {
        VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pi.queueFamilyIndex = p.queue_family;
        readback_check(vkCreateCommandPool(p.device, &pi, nullptr, &m_pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = m_pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        readback_check(vkAllocateCommandBuffers(p.device, &ai, &m_cmd), "vkAllocateCommandBuffers");
        VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bi.size = std::uint64_t{m_width} * m_height * 4;
        bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        readback_check(vkCreateBuffer(p.device, &bi, nullptr, &m_buffer), "vkCreateBuffer");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(p.device, m_buffer, &req);
        VkPhysicalDeviceMemoryProperties mem;
        vkGetPhysicalDeviceMemoryProperties(p.physical_device, &mem);
        const VkMemoryPropertyFlags want =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        std::uint32_t type = 0;
        while (type < mem.memoryTypeCount &&
               (!(req.memoryTypeBits & (1u << type)) ||
                (mem.memoryTypes[type].propertyFlags & want) != want)) {
            ++type;
        }
        VkMemoryAllocateInfo mi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mi.allocationSize = req.size;
        mi.memoryTypeIndex = type;
        readback_check(vkAllocateMemory(p.device, &mi, nullptr, &m_memory), "vkAllocateMemory");
        readback_check(vkBindBufferMemory(p.device, m_buffer, m_memory, 0), "vkBindBufferMemory");
        readback_check(vkMapMemory(p.device, m_memory, 0, VK_WHOLE_SIZE, 0, &m_mapped),
                       "vkMapMemory");
    }
    ~LeaseReadback() {
        vkDestroyBuffer(m_p.device, m_buffer, nullptr);
        vkFreeMemory(m_p.device, m_memory, nullptr);
        vkDestroyCommandPool(m_p.device, m_pool, nullptr);
    }
    LeaseReadback(const LeaseReadback&) = delete;
    LeaseReadback& operator=(const LeaseReadback&) = delete;

    // Copies the leased image, waits for the copy and returns its texels; signals `timeline`
    // at `value` when done.
    std::vector<std::uint32_t> read(const tandem::Lease& lease, VkSemaphore timeline,
                                    std::uint64_t value) {
        readback_check(vkResetCommandBuffer(m_cmd, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        readback_check(vkBeginCommandBuffer(m_cmd, &begin), "vkBeginCommandBuffer");
        VkImageMemoryBarrier2 to_src{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
        to_src.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        to_src.dstStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        to_src.dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT;
        to_src.oldLayout = lease.layout;
        to_src.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        to_src.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_src.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_src.image = lease.image;
        to_src.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.imageMemoryBarrierCount = 1;
        dep.pImageMemoryBarriers = &to_src;
        vkCmdPipelineBarrier2(m_cmd, &dep);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {m_width, m_height, 1};
        vkCmdCopyImageToBuffer(m_cmd, lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_buffer,
                               1, &region);
        VkImageMemoryBarrier2 back = to_src; // the lease's layout again, as the lease asks
        back.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        back.srcAccessMask = VK_ACCESS_2_NONE;
        back.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        back.dstAccessMask = VK_ACCESS_2_NONE;
        back.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        back.newLayout = lease.layout;
        dep.pImageMemoryBarriers = &back;
        vkCmdPipelineBarrier2(m_cmd, &dep);
        VkBufferMemoryBarrier2 to_host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2};
        to_host.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        to_host.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        to_host.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
        to_host.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
        to_host.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_host.buffer = m_buffer;
        to_host.size = VK_WHOLE_SIZE;
        VkDependencyInfo host_dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        host_dep.bufferMemoryBarrierCount = 1;
        host_dep.pBufferMemoryBarriers = &to_host;
        vkCmdPipelineBarrier2(m_cmd, &host_dep);
        readback_check(vkEndCommandBuffer(m_cmd), "vkEndCommandBuffer");

        VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait.semaphore = lease.wait_semaphore;
        wait.value = lease.wait_value;
        wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = timeline;
        signal.value = value;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkCommandBufferSubmitInfo ci{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        ci.commandBuffer = m_cmd;
        VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        si.waitSemaphoreInfoCount = 1;
        si.pWaitSemaphoreInfos = &wait;
        si.commandBufferInfoCount = 1;
        si.pCommandBufferInfos = &ci;
        si.signalSemaphoreInfoCount = 1;
        si.pSignalSemaphoreInfos = &signal;
        {
            std::lock_guard lock(*m_p.queue_mutex); // Tandem submits to this queue too
            readback_check(vkQueueSubmit2(m_p.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit2");
        }
        VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        wi.semaphoreCount = 1;
        wi.pSemaphores = &timeline;
        wi.pValues = &value;
        readback_check(vkWaitSemaphores(m_p.device, &wi, 10'000'000'000ull), "vkWaitSemaphores");
        const auto* px = static_cast<const std::uint32_t*>(m_mapped);
        return {px, px + std::size_t{m_width} * m_height};
    }

private:
    tandem::PrimaryVulkan m_p;
    std::uint32_t m_width = 0;
    std::uint32_t m_height = 0;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_cmd = VK_NULL_HANDLE;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
    void* m_mapped = nullptr;
};

} // namespace tandem_examples
