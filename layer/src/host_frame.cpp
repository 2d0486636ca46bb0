#include "host_frame.hpp"

#include <stdexcept>

namespace tandem::layer {
std::optional<std::uint32_t> find_memory_type(const VkPhysicalDeviceMemoryProperties& memory,
                                              std::uint32_t allowed, VkMemoryPropertyFlags required,
                                              VkMemoryPropertyFlags preferred) {
    for (const VkMemoryPropertyFlags wanted : {required | preferred, required}) {
        for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
            if ((allowed & (1u << i)) != 0 &&
                (memory.memoryTypes[i].propertyFlags & wanted) == wanted) {
                return i;
            }
        }
    }
    return std::nullopt;
}

VkImageMemoryBarrier layout_barrier(VkImage image, VkImageLayout from, VkImageLayout to,
                                    VkAccessFlags src_access, VkAccessFlags dst_access) {
    VkImageMemoryBarrier barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    barrier.srcAccessMask = src_access;
    barrier.dstAccessMask = dst_access;
    barrier.oldLayout = from;
    barrier.newLayout = to;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.image = image;
    barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    return barrier;
}

HostFrame::HostFrame(const DeviceDispatch& vk, VkDevice device,
                     const VkPhysicalDeviceMemoryProperties& memory, VkExtent2D extent)
    : m_vk(vk), m_device(device), m_extent(extent),
      m_size(VkDeviceSize{extent.width} * extent.height * 4) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = m_size;
    info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (m_vk.CreateBuffer(m_device, &info, nullptr, &m_buffer) != VK_SUCCESS) {
        throw std::runtime_error("vkCreateBuffer failed for a host copy of a frame");
    }
    VkMemoryRequirements needs{};
    m_vk.GetBufferMemoryRequirements(m_device, m_buffer, &needs);
    // Host-visible, cached where there is such a type (the host reads every byte).
    const std::optional<std::uint32_t> type =
        find_memory_type(memory, needs.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                         VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (type) {
        m_coherent =
            (memory.memoryTypes[*type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    }
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = needs.size;
    alloc.memoryTypeIndex = type.value_or(0);
    void* mapped = nullptr;
    if (!type || m_vk.AllocateMemory(m_device, &alloc, nullptr, &m_memory) != VK_SUCCESS ||
        m_vk.BindBufferMemory(m_device, m_buffer, m_memory, 0) != VK_SUCCESS ||
        m_vk.MapMemory(m_device, m_memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS) {
        destroy();
        throw std::runtime_error("no host-visible memory for a host copy of a frame");
    }
    m_mapped = static_cast<std::uint8_t*>(mapped);
}

HostFrame::~HostFrame() {
    destroy();
}

void HostFrame::destroy() noexcept {
    if (m_memory != VK_NULL_HANDLE) {
        m_vk.FreeMemory(m_device, m_memory, nullptr); // unmaps it
        m_memory = VK_NULL_HANDLE;
    }
    if (m_buffer != VK_NULL_HANDLE) {
        m_vk.DestroyBuffer(m_device, m_buffer, nullptr);
        m_buffer = VK_NULL_HANDLE;
    }
}

void HostFrame::record_copy(VkCommandBuffer cmd, VkImage image, VkImageLayout layout) const {
    const VkImageMemoryBarrier before = layout_barrier(
        image, layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, 0, VK_ACCESS_TRANSFER_READ_BIT);
    m_vk.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            0, 0, nullptr, 0, nullptr, 1, &before);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {m_extent.width, m_extent.height, 1};
    m_vk.CmdCopyImageToBuffer(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_buffer, 1,
                              &region);
    const VkImageMemoryBarrier after = layout_barrier(image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                                      layout, VK_ACCESS_TRANSFER_READ_BIT, 0);
    VkBufferMemoryBarrier to_host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    to_host.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_host.buffer = m_buffer;
    to_host.size = VK_WHOLE_SIZE;
    m_vk.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0,
                            nullptr, 1, &to_host, 1, &after);
}

std::span<const std::uint8_t> HostFrame::texels() const {
    if (!m_coherent) {
        VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        range.memory = m_memory;
        range.size = VK_WHOLE_SIZE;
        static_cast<void>(m_vk.InvalidateMappedMemoryRanges(m_device, 1, &range));
    }
    return {m_mapped, static_cast<std::size_t>(m_size)};
}

} // namespace tandem::layer
