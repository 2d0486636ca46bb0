#include "core/resources.hpp"

#include <algorithm>
#include <cctype>

#include "core/image_cache.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

std::uint32_t bytes_per_texel(VkFormat format) {
    switch (format) {
    case VK_FORMAT_R8G8B8A8_UNORM:
    case VK_FORMAT_R8G8B8A8_SRGB:
    case VK_FORMAT_B8G8R8A8_UNORM:
    case VK_FORMAT_B8G8R8A8_SRGB:
    case VK_FORMAT_R32_SFLOAT:
    case VK_FORMAT_R16G16_SFLOAT:
    case VK_FORMAT_D32_SFLOAT:
        return 4;
    case VK_FORMAT_R16G16B16A16_SFLOAT:
        return 8;
    default:
        throw Error("Format " + std::to_string(static_cast<int>(format)) + " is not supported",
                    "Use RGBA8, BGRA8, RGBA16F or R32F");
    }
}

std::string format_name(VkFormat format) {
    switch (format) {
    case VK_FORMAT_R8G8B8A8_UNORM:
        return "RGBA8";
    case VK_FORMAT_B8G8R8A8_UNORM:
        return "BGRA8";
    case VK_FORMAT_R16G16B16A16_SFLOAT:
        return "RGBA16F";
    case VK_FORMAT_R32_SFLOAT:
        return "R32F";
    case VK_FORMAT_R16G16_SFLOAT:
        return "RG16F";
    case VK_FORMAT_D32_SFLOAT:
        return "D32";
    default:
        return std::to_string(static_cast<int>(format));
    }
}

std::optional<VkFormat> parse_color_format(std::string_view text) {
    std::string upper(text);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    for (VkFormat f : {VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_B8G8R8A8_UNORM,
                       VK_FORMAT_R16G16B16A16_SFLOAT, VK_FORMAT_R32_SFLOAT}) {
        if (format_name(f) == upper) {
            return f;
        }
    }
    return std::nullopt;
}

bool is_input_format(VkFormat format) noexcept {
    switch (format) {
    case VK_FORMAT_R8G8B8A8_UNORM:
    case VK_FORMAT_B8G8R8A8_UNORM:
    case VK_FORMAT_R16G16B16A16_SFLOAT:
    case VK_FORMAT_R16G16_SFLOAT:
    case VK_FORMAT_R32_SFLOAT:
        return true;
    default:
        return false;
    }
}

Handle<VkDeviceMemory> own_memory(const Device& device, VkDeviceMemory memory, VkDeviceSize bytes) {
    const Device* owner = &device;
    Handle<VkDeviceMemory> out(memory, [owner, bytes](VkDeviceMemory m) {
        vkFreeMemory(owner->handle(), m, nullptr);
        owner->count_allocation(-1, bytes);
    });
    device.count_allocation(+1, bytes);
    return out;
}

namespace {

// True when memory of `flags` for an object with these dedicated requirements may be a range of
// a pooled block (core/memory_pool.hpp says when not).
bool pooled(VkMemoryPropertyFlags flags, const VkMemoryDedicatedRequirements& dedicated) {
    if (dedicated.requiresDedicatedAllocation == VK_TRUE ||
        (flags & VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT) != 0) {
        return false;
    }
    const VkMemoryPropertyFlags visible =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    return (flags & visible) == 0 || (flags & visible) == visible;
}

// An allocation of its own for `buffer` or `image`, mapped when host-visible.
MemoryRange dedicated_memory(const Device& device, const VkMemoryRequirements& req,
                             std::uint32_t type, VkBuffer buffer, VkImage image,
                             const std::string& name) {
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.buffer = buffer;
    dedicated.image = image;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = &dedicated;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(device.handle(), &alloc, nullptr, &memory),
             "vkAllocateMemory " + name);
    MemoryRange out;
    out.memory = own_memory(device, memory, req.size);
    out.size = req.size;
    if ((device.memory_flags(type) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0) {
        vk_check(vkMapMemory(device.handle(), memory, 0, VK_WHOLE_SIZE, 0, &out.mapped),
                 "vkMapMemory " + name);
    }
    return out;
}

} // namespace

Buffer create_buffer(const Device& device, const BufferDesc& desc) {
    const VkDevice dev = device.handle();
    Buffer out;
    out.size = desc.size;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = desc.size;
    info.usage = desc.usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buffer = VK_NULL_HANDLE;
    vk_check(vkCreateBuffer(dev, &info, nullptr, &buffer), "vkCreateBuffer " + desc.name);
    out.buffer = Handle<VkBuffer>(buffer, [dev](VkBuffer b) { vkDestroyBuffer(dev, b, nullptr); });
    device.name(buffer, VK_OBJECT_TYPE_BUFFER, desc.name);

    VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    VkMemoryDedicatedRequirements dedicated_req{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    req.pNext = &dedicated_req;
    VkBufferMemoryRequirementsInfo2 req_info{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2};
    req_info.buffer = buffer;
    vkGetBufferMemoryRequirements2(dev, &req_info, &req);
    out.memory_type =
        device.memory_type(req.memoryRequirements.memoryTypeBits, desc.required, desc.preferred);
    out.memory_flags = device.memory_flags(out.memory_type);
    MemoryRange range = pooled(out.memory_flags, dedicated_req)
                            ? device.memory_pool().allocate(req.memoryRequirements, out.memory_type,
                                                            true, desc.name)
                            : dedicated_memory(device, req.memoryRequirements, out.memory_type,
                                               buffer, VK_NULL_HANDLE, desc.name);
    vk_check(vkBindBufferMemory(dev, buffer, range.memory.get(), range.offset),
             "vkBindBufferMemory " + desc.name);
    out.memory = std::move(range.memory);
    out.memory_offset = range.offset;
    out.mapped = range.mapped;
    return out;
}

void flush_buffer(const Device& device, const Buffer& buffer) {
    if (buffer.host_coherent() || buffer.mapped == nullptr) {
        return;
    }
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = buffer.memory.get();
    range.size = VK_WHOLE_SIZE;
    vk_check(vkFlushMappedMemoryRanges(device.handle(), 1, &range), "vkFlushMappedMemoryRanges");
}

void invalidate_buffer(const Device& device, const Buffer& buffer) {
    if (buffer.host_coherent() || buffer.mapped == nullptr) {
        return;
    }
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = buffer.memory.get();
    range.size = VK_WHOLE_SIZE;
    vk_check(vkInvalidateMappedMemoryRanges(device.handle(), 1, &range),
             "vkInvalidateMappedMemoryRanges");
}

ImageCreateInfo::ImageCreateInfo(const ImageDesc& desc) : families(desc.queue_families) {
    std::sort(families.begin(), families.end());
    families.erase(std::unique(families.begin(), families.end()), families.end());
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = desc.format;
    info.extent = {desc.width, desc.height, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = desc.usage;
    if (families.size() > 1) {
        info.sharingMode = VK_SHARING_MODE_CONCURRENT;
        info.queueFamilyIndexCount = static_cast<std::uint32_t>(families.size());
        info.pQueueFamilyIndices = families.data();
    } else {
        info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    }
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
}

ImageMemoryNeeds image_memory_needs(const Device& device, VkImage image) {
    VkImageMemoryRequirementsInfo2 info{VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2};
    info.image = image;
    ImageMemoryNeeds out;
    VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    req.pNext = &out.dedicated;
    vkGetImageMemoryRequirements2(device.handle(), &info, &req);
    out.dedicated.pNext = nullptr;
    out.requirements = req.memoryRequirements;
    return out;
}

Handle<VkImageView> create_image_view(const Device& device, VkImage image, VkFormat format,
                                      const std::string& name) {
    const VkDevice dev = device.handle();
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format;
    view.subresourceRange = {format == VK_FORMAT_D32_SFLOAT ? VK_IMAGE_ASPECT_DEPTH_BIT
                                                            : VK_IMAGE_ASPECT_COLOR_BIT,
                             0, 1, 0, 1};
    VkImageView out = VK_NULL_HANDLE;
    vk_check(vkCreateImageView(dev, &view, nullptr, &out), "vkCreateImageView " + name);
    device.name(out, VK_OBJECT_TYPE_IMAGE_VIEW, name + " view");
    return Handle<VkImageView>(out, [dev](VkImageView v) { vkDestroyImageView(dev, v, nullptr); });
}

Image create_image(const Device& device, const ImageDesc& desc) {
    if (desc.width == 0 || desc.height == 0 || desc.width > 16384 || desc.height > 16384) {
        throw Error("Image size " + std::to_string(desc.width) + "x" + std::to_string(desc.height) +
                        " is not valid",
                    "Use a width and height from 1 to 16384");
    }
    if (std::optional<Image> reused = device.image_cache().take(desc)) {
        return std::move(*reused);
    }
    const VkDevice dev = device.handle();
    Image out;
    out.format = desc.format;
    out.extent = {desc.width, desc.height};
    const ImageCreateInfo create(desc);
    VkImage image = VK_NULL_HANDLE;
    vk_check(vkCreateImage(dev, &create.info, nullptr, &image), "vkCreateImage " + desc.name,
             "The format or size may not be supported by this device; `tandem devices` shows "
             "format support");
    out.image = Handle<VkImage>(image, [dev](VkImage i) { vkDestroyImage(dev, i, nullptr); });
    device.name(image, VK_OBJECT_TYPE_IMAGE, desc.name);

    const ImageMemoryNeeds needs = image_memory_needs(device, image);
    const std::uint32_t bits = needs.requirements.memoryTypeBits;
    std::uint32_t type =
        device.memory_type(bits, 0,
                           desc.transient ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                                VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT
                                          : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (desc.transient && (device.memory_flags(type) & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) == 0) {
        type = device.memory_type(bits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    }
    const VkMemoryPropertyFlags flags = device.memory_flags(type);
    MemoryRange range =
        pooled(flags, needs.dedicated)
            ? device.memory_pool().allocate(needs.requirements, type, false, desc.name)
            : dedicated_memory(device, needs.requirements, type, VK_NULL_HANDLE, image, desc.name);
    vk_check(vkBindImageMemory(dev, image, range.memory.get(), range.offset),
             "vkBindImageMemory " + desc.name);
    out.memory = std::move(range.memory);
    out.memory_offset = range.offset;

    out.view = create_image_view(device, image, desc.format, desc.name);
    return device.image_cache().lend(desc, std::move(out), needs.requirements.size);
}

CommandPool::CommandPool(const Device& device, std::uint32_t family, const std::string& name)
    : m_device(&device) {
    const VkDevice dev = device.handle();
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    info.queueFamilyIndex = family;
    VkCommandPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateCommandPool(dev, &info, nullptr, &pool), "vkCreateCommandPool " + name);
    m_pool = Handle<VkCommandPool>(
        pool, [dev](VkCommandPool p) { vkDestroyCommandPool(dev, p, nullptr); });
    device.name(pool, VK_OBJECT_TYPE_COMMAND_POOL, name);
}

VkCommandBuffer CommandPool::allocate(const std::string& name) const {
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = m_pool.get();
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vk_check(vkAllocateCommandBuffers(m_device->handle(), &info, &cmd),
             "vkAllocateCommandBuffers " + name);
    m_device->name(cmd, VK_OBJECT_TYPE_COMMAND_BUFFER, name);
    return cmd;
}

std::optional<TimestampPool> create_timestamp_pool(const Device& device, QueueRole role,
                                                   std::uint32_t count, const std::string& name) {
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(device.physical(), &props);
    std::uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(device.physical(), &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(device.physical(), &family_count, families.data());
    const std::uint32_t family = device.queue(role).family();
    const std::uint32_t bits = family < family_count ? families[family].timestampValidBits : 0;
    if (bits == 0 || props.limits.timestampPeriod <= 0.0f) {
        return std::nullopt;
    }
    const VkDevice dev = device.handle();
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = count;
    VkQueryPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateQueryPool(dev, &info, nullptr, &pool), "vkCreateQueryPool " + name);
    device.name(pool, VK_OBJECT_TYPE_QUERY_POOL, name);
    TimestampPool out;
    out.pool =
        Handle<VkQueryPool>(pool, [dev](VkQueryPool q) { vkDestroyQueryPool(dev, q, nullptr); });
    out.period_ns = props.limits.timestampPeriod;
    out.mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    return out;
}

DescriptorSets allocate_descriptor_sets(const Device& device, VkDescriptorSetLayout layout,
                                        std::span<const VkDescriptorPoolSize> per_set,
                                        std::uint32_t count, const std::string& name) {
    const VkDevice dev = device.handle();
    std::vector<VkDescriptorPoolSize> sizes(per_set.begin(), per_set.end());
    for (VkDescriptorPoolSize& size : sizes) {
        size.descriptorCount *= count;
    }
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = count;
    pool_info.poolSizeCount = static_cast<std::uint32_t>(sizes.size());
    pool_info.pPoolSizes = sizes.data();
    VkDescriptorPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(dev, &pool_info, nullptr, &pool),
             "vkCreateDescriptorPool " + name);
    DescriptorSets out;
    out.pool = Handle<VkDescriptorPool>(
        pool, [dev](VkDescriptorPool p) { vkDestroyDescriptorPool(dev, p, nullptr); });
    const std::vector<VkDescriptorSetLayout> layouts(count, layout);
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pool;
    alloc.descriptorSetCount = count;
    alloc.pSetLayouts = layouts.data();
    out.sets.resize(count);
    vk_check(vkAllocateDescriptorSets(dev, &alloc, out.sets.data()),
             "vkAllocateDescriptorSets " + name);
    return out;
}

Handle<VkFence> create_fence(const Device& device, const std::string& name, bool signaled) {
    const VkDevice dev = device.handle();
    VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    info.flags =
        signaled ? VkFenceCreateFlags{VK_FENCE_CREATE_SIGNALED_BIT} : VkFenceCreateFlags{0};
    VkFence fence = VK_NULL_HANDLE;
    vk_check(vkCreateFence(dev, &info, nullptr, &fence), "vkCreateFence " + name);
    device.name(fence, VK_OBJECT_TYPE_FENCE, name);
    return Handle<VkFence>(fence, [dev](VkFence f) { vkDestroyFence(dev, f, nullptr); });
}

void submit_and_wait(const Device& device, QueueRole role,
                     const std::function<void(VkCommandBuffer)>& record) {
    const Queue& queue = device.queue(role);
    CommandPool pool(device, queue.family(), device.label() + " one-shot pool");
    VkCommandBuffer cmd = pool.allocate(device.label() + " one-shot");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer one-shot");
    record(cmd);
    vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer one-shot");
    auto fence = create_fence(device, device.label() + " one-shot fence");
    vk_check(queue.submit_one(cmd, {}, {}, fence.get()), "vkQueueSubmit2 one-shot");
    VkFence f = fence.get();
    vk_check(vkWaitForFences(device.handle(), 1, &f, VK_TRUE, UINT64_MAX),
             "vkWaitForFences one-shot");
}

void buffer_barrier(VkCommandBuffer cmd, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                    VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                    VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access,
                    std::uint32_t src_family, std::uint32_t dst_family) {
    VkBufferMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2};
    barrier.srcStageMask = src_stage;
    barrier.srcAccessMask = src_access;
    barrier.dstStageMask = dst_stage;
    barrier.dstAccessMask = dst_access;
    barrier.srcQueueFamilyIndex = src_family;
    barrier.dstQueueFamilyIndex = dst_family;
    barrier.buffer = buffer;
    barrier.offset = offset;
    barrier.size = size;
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.bufferMemoryBarrierCount = 1;
    dep.pBufferMemoryBarriers = &barrier;
    vkCmdPipelineBarrier2(cmd, &dep);
}

void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                    VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access) {
    VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    barrier.srcStageMask = src_stage;
    barrier.srcAccessMask = src_access;
    barrier.dstStageMask = dst_stage;
    barrier.dstAccessMask = dst_access;
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.memoryBarrierCount = 1;
    dep.pMemoryBarriers = &barrier;
    vkCmdPipelineBarrier2(cmd, &dep);
}

VkImageMemoryBarrier2 image_barrier_info(VkImage image, VkImageLayout from, VkImageLayout to,
                                         VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                                         VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access,
                                         std::uint32_t src_family,
                                         std::uint32_t dst_family) noexcept {
    VkImageMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    barrier.srcStageMask = src_stage;
    barrier.srcAccessMask = src_access;
    barrier.dstStageMask = dst_stage;
    barrier.dstAccessMask = dst_access;
    barrier.oldLayout = from;
    barrier.newLayout = to;
    barrier.srcQueueFamilyIndex = src_family;
    barrier.dstQueueFamilyIndex = dst_family;
    barrier.image = image;
    barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    return barrier;
}

void image_barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from, VkImageLayout to,
                   VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                   VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access,
                   std::uint32_t src_family, std::uint32_t dst_family) {
    const VkImageMemoryBarrier2 barrier = image_barrier_info(
        image, from, to, src_stage, src_access, dst_stage, dst_access, src_family, dst_family);
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.imageMemoryBarrierCount = 1;
    dep.pImageMemoryBarriers = &barrier;
    vkCmdPipelineBarrier2(cmd, &dep);
}

void copy_whole_image(VkCommandBuffer cmd, VkImage source, VkImageLayout source_layout,
                      VkImage destination, VkImageLayout destination_layout, VkExtent2D extent) {
    VkImageCopy region{};
    region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.dstSubresource = region.srcSubresource;
    region.extent = {extent.width, extent.height, 1};
    vkCmdCopyImage(cmd, source, source_layout, destination, destination_layout, 1, &region);
}

} // namespace tandem::detail
