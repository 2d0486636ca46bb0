#include "transfer/host_copy_path.hpp"

#include <cstring>

#include "core/resources.hpp"
#include "core/vk_check.hpp"

namespace tandem::detail {
namespace {

// The mapped range covering [offset, offset + size), widened to the non-coherent atom.
VkMappedMemoryRange atom_range(const Device& device, const Buffer& buffer, VkDeviceSize offset,
                               VkDeviceSize size) {
    const VkDeviceSize atom = std::max<VkDeviceSize>(1, device.info().non_coherent_atom_size);
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = buffer.memory.get();
    const VkDeviceSize start = buffer.memory_offset + offset;
    range.offset = start / atom * atom;
    const VkDeviceSize end = align_up(start + size, atom);
    range.size = end >= buffer.memory_offset + buffer.size ? VK_WHOLE_SIZE : end - range.offset;
    return range;
}

} // namespace

HostCopyPath::HostCopyPath(const Device& worker, const Device& primary, const StagingLayout& layout)
    : TransferPathBackend(worker, primary, layout) {
    const std::string base = worker.label() + "->" + primary.label() + " host copy";
    BufferDesc w;
    w.size = layout.total_bytes;
    w.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    w.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    w.preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    w.name = base + " readback (worker)";
    m_worker_buffer = create_buffer(worker, w);
    BufferDesc p;
    p.size = layout.total_bytes;
    p.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    p.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    p.preferred = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    p.name = base + " upload (primary)";
    m_primary_buffer = create_buffer(primary, p);
}

void HostCopyPath::record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                      VkImage image, VkImageLayout layout) const {
    const VkBufferImageCopy region =
        record_band_download(cmd, m_worker_buffer.get(), slot, band, image, layout);
    buffer_barrier(cmd, m_worker_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
}

VkResult HostCopyPath::host_step(std::uint32_t slot, const Band& band) const noexcept {
    const VkDeviceSize offset = layout().slot_offset(slot) + band.offset;
    if (!m_worker_buffer.host_coherent()) {
        const VkMappedMemoryRange r = atom_range(worker(), m_worker_buffer, offset, band.bytes);
        const VkResult result = vk_status(vkInvalidateMappedMemoryRanges(worker().handle(), 1, &r),
                                          "vkInvalidateMappedMemoryRanges host copy");
        if (result != VK_SUCCESS) {
            return result;
        }
    }
    std::memcpy(static_cast<std::byte*>(m_primary_buffer.mapped) + offset,
                static_cast<const std::byte*>(m_worker_buffer.mapped) + offset, band.bytes);
    if (!m_primary_buffer.host_coherent()) {
        const VkMappedMemoryRange r = atom_range(primary(), m_primary_buffer, offset, band.bytes);
        return vk_status(vkFlushMappedMemoryRanges(primary().handle(), 1, &r),
                         "vkFlushMappedMemoryRanges host copy");
    }
    return VK_SUCCESS;
}

void HostCopyPath::record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                       VkImage image) const {
    const VkBufferImageCopy region = band_region(slot, band);
    buffer_barrier(cmd, m_primary_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    vkCmdCopyBufferToImage(cmd, m_primary_buffer.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           1, &region);
}

} // namespace tandem::detail
