// Owned Vulkan resources built on Device: buffers, images (with a view), command pools, fences,
// and a blocking one-shot submit for set-up work. Move-only; destroying one while a GPU still
// uses it is the caller's bug (owners retire resources only after their timeline value passed).
// Any thread may create; each object is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/memory_pool.hpp"

namespace tandem::detail {

// Bytes per texel of the colour formats Tandem moves; throws Error for any other format.
[[nodiscard]] std::uint32_t bytes_per_texel(VkFormat format);
// "RGBA8" etc. for the reported formats, else the numeric value.
[[nodiscard]] std::string format_name(VkFormat format);
// True for the formats a task input may have (TaskInputDesc): RGBA8, BGRA8, RGBA16F, RG16F, R32F.
[[nodiscard]] bool is_input_format(VkFormat format) noexcept;
// Parses "RGBA8", "BGRA8", "RGBA16F", "R32F" (case-insensitive); nullopt otherwise.
[[nodiscard]] std::optional<VkFormat> parse_color_format(std::string_view text);

// Owns `memory`, `bytes` bytes allocated on `device`, and counts it in
// Device::live_allocations() until it is freed. Every vkAllocateMemory of Tandem's goes through
// it.
[[nodiscard]] Handle<VkDeviceMemory> own_memory(const Device& device, VkDeviceMemory memory,
                                                VkDeviceSize bytes);

struct Buffer {
    Handle<VkBuffer> buffer;
    // The memory the buffer is bound to, at memory_offset: a range of a pooled block, or an
    // allocation of its own (offset 0) where core/memory_pool.hpp says so.
    Handle<VkDeviceMemory> memory;
    VkDeviceSize memory_offset = 0;
    VkDeviceSize size = 0;
    std::uint32_t memory_type = 0;
    VkMemoryPropertyFlags memory_flags = 0;
    void* mapped = nullptr; // persistently mapped when host-visible

    [[nodiscard]] VkBuffer get() const noexcept { return buffer.get(); }
    [[nodiscard]] bool host_coherent() const noexcept {
        return (memory_flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    }
};

struct BufferDesc {
    VkDeviceSize size = 0;
    VkBufferUsageFlags usage = 0;
    VkMemoryPropertyFlags required = 0;
    VkMemoryPropertyFlags preferred = 0;
    std::string name;
};

// Creates a buffer, binds it to memory (core/memory_pool.hpp) and, when host-visible, maps it
// persistently.
[[nodiscard]] Buffer create_buffer(const Device& device, const BufferDesc& desc);

// Host-side cache maintenance for non-coherent memory (no-ops on coherent memory).
void flush_buffer(const Device& device, const Buffer& buffer);
void invalidate_buffer(const Device& device, const Buffer& buffer);

struct Image {
    Handle<VkImage> image;
    Handle<VkDeviceMemory> memory; // as Buffer::memory
    VkDeviceSize memory_offset = 0;
    Handle<VkImageView> view;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};

    [[nodiscard]] VkImage get() const noexcept { return image.get(); }
};

struct ImageDesc {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    VkImageUsageFlags usage = 0;
    std::string name;
    // Queue families that use the image. Two or more distinct families: VK_SHARING_MODE_CONCURRENT,
    // so no queue-family ownership transfers are needed; otherwise exclusive.
    std::vector<std::uint32_t> queue_families;
    // An attachment that lives only inside a render pass (usage must include
    // TRANSIENT_ATTACHMENT): lazily allocated memory where the device has it (tile-based GPUs
    // then never back it with memory), device-local otherwise.
    bool transient = false;
};

// The create info create_image uses for `desc`: 2D, one mip level and layer, optimal tiling,
// initially UNDEFINED, concurrent over the distinct families of desc.queue_families (held here,
// where info points). Not copyable, as info points into it; chain more with info.pNext.
struct ImageCreateInfo {
    explicit ImageCreateInfo(const ImageDesc& desc);
    ImageCreateInfo(const ImageCreateInfo&) = delete;
    ImageCreateInfo& operator=(const ImageCreateInfo&) = delete;

    std::vector<std::uint32_t> families;
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
};

// Optimal-tiling, device-local 2D image with one mip level and a view over it: an image made
// before for the same kind of description when the device keeps one (core/image_cache.hpp),
// whose contents are undefined as a new one's; destroying it gives it back for reuse.
[[nodiscard]] Image create_image(const Device& device, const ImageDesc& desc);
// What `image` needs of its memory, and what its driver says of an allocation of its own.
struct ImageMemoryNeeds {
    VkMemoryRequirements requirements{};
    VkMemoryDedicatedRequirements dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
};
[[nodiscard]] ImageMemoryNeeds image_memory_needs(const Device& device, VkImage image);
// A 2D view of the whole of `image` (one mip level and layer; the depth aspect for D32_SFLOAT,
// else colour), named after `name`. Throws Error.
[[nodiscard]] Handle<VkImageView> create_image_view(const Device& device, VkImage image,
                                                    VkFormat format, const std::string& name);

class CommandPool {
public:
    CommandPool() = default;
    CommandPool(const Device& device, std::uint32_t family, const std::string& name);
    [[nodiscard]] VkCommandPool get() const noexcept { return m_pool.get(); }
    // A primary command buffer, freed with the pool.
    [[nodiscard]] VkCommandBuffer allocate(const std::string& name) const;

private:
    const Device* m_device = nullptr;
    Handle<VkCommandPool> m_pool;
};

// `count` GPU timestamp queries for `role`'s queue, with the tick period in nanoseconds and the
// mask of the bits a timestamp holds; nullopt when that queue's family writes no timestamps (or
// the device reports no period). Throws Error when the pool cannot be created.
struct TimestampPool {
    Handle<VkQueryPool> pool;
    double period_ns = 0.0;
    std::uint64_t mask = 0;
};
[[nodiscard]] std::optional<TimestampPool> create_timestamp_pool(const Device& device,
                                                                 QueueRole role,
                                                                 std::uint32_t count,
                                                                 const std::string& name);

// A descriptor pool holding `count` sets of `layout`, and the sets. `per_set`: the descriptors
// one set of the layout has, by type. Throws Error.
struct DescriptorSets {
    Handle<VkDescriptorPool> pool;
    std::vector<VkDescriptorSet> sets;
};
[[nodiscard]] DescriptorSets allocate_descriptor_sets(const Device& device,
                                                      VkDescriptorSetLayout layout,
                                                      std::span<const VkDescriptorPoolSize> per_set,
                                                      std::uint32_t count, const std::string& name);

[[nodiscard]] Handle<VkFence> create_fence(const Device& device, const std::string& name,
                                           bool signaled = false);

// Records with `record`, submits to `queue` and blocks until done. Set-up paths and tests only.
void submit_and_wait(const Device& device, QueueRole queue,
                     const std::function<void(VkCommandBuffer)>& record);

// A buffer barrier (sync2) over `size` bytes from `offset` (VK_WHOLE_SIZE: to the end).
void buffer_barrier(VkCommandBuffer cmd, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                    VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                    VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access,
                    std::uint32_t src_family = VK_QUEUE_FAMILY_IGNORED,
                    std::uint32_t dst_family = VK_QUEUE_FAMILY_IGNORED);

// One global memory barrier (sync2): every access of `src_access` in `src_stage` before it made
// available and visible to `dst_access` in `dst_stage` after it.
void memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                    VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access);

// One whole-image layout transition / barrier (sync2), colour aspect, single mip and layer: as
// a struct, to record several in one vkCmdPipelineBarrier2; image_barrier records one.
[[nodiscard]] VkImageMemoryBarrier2
image_barrier_info(VkImage image, VkImageLayout from, VkImageLayout to,
                   VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                   VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access,
                   std::uint32_t src_family = VK_QUEUE_FAMILY_IGNORED,
                   std::uint32_t dst_family = VK_QUEUE_FAMILY_IGNORED) noexcept;
void image_barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from, VkImageLayout to,
                   VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                   VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access,
                   std::uint32_t src_family = VK_QUEUE_FAMILY_IGNORED,
                   std::uint32_t dst_family = VK_QUEUE_FAMILY_IGNORED);

// Copies `extent` texels of colour image `source` (in `source_layout`) to the same place of
// `destination` (in `destination_layout`), single mip and layer; the barriers are the caller's.
void copy_whole_image(VkCommandBuffer cmd, VkImage source, VkImageLayout source_layout,
                      VkImage destination, VkImageLayout destination_layout, VkExtent2D extent);

} // namespace tandem::detail
