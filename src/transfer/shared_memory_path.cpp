#include "transfer/shared_memory_path.hpp"

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/link_copy_queue.hpp"
#include "transfer/opaque_fd_memory.hpp"

namespace tandem::detail {
namespace {

constexpr VkBufferUsageFlags k_usage =
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

VkExternalMemoryFeatureFlags external_features(const Device& device) {
    VkPhysicalDeviceExternalBufferInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
    info.usage = k_usage;
    info.handleType = k_opaque_fd_handle;
    VkExternalBufferProperties props{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    vkGetPhysicalDeviceExternalBufferProperties(device.physical(), &info, &props);
    return props.externalMemoryProperties.externalMemoryFeatures;
}

} // namespace

SharedMemoryPath::SharedMemoryPath(const Device& worker, const Device& primary,
                                   const StagingLayout& layout)
    : TransferPathBackend(worker, primary, layout) {
    if (worker.fn().get_memory_fd == nullptr || !primary.enabled("VK_KHR_external_memory_fd")) {
        throw Error(VK_ERROR_EXTENSION_NOT_PRESENT,
                    "Shared-memory transfer needs VK_KHR_external_memory_fd on both devices",
                    "Use the host-imported or host-copy path");
    }
    const VkExternalMemoryFeatureFlags wf = external_features(worker);
    const VkExternalMemoryFeatureFlags pf = external_features(primary);
    if ((wf & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) == 0 ||
        (pf & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) == 0) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    "The driver cannot export transfer buffers as opaque fds on the worker or "
                    "import them on the primary",
                    "Use the host-imported or host-copy path");
    }
    const bool dedicated = ((wf | pf) & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;

    const std::string base = worker.label() + "->" + primary.label() + " shared staging";
    m_worker_buffer = create_external_buffer(worker, layout.total_bytes, k_usage,
                                             k_opaque_fd_handle, base + " (worker)");
    m_primary_buffer = create_external_buffer(primary, layout.total_bytes, k_usage,
                                              k_opaque_fd_handle, base + " (primary)");

    VkMemoryRequirements wreq;
    vkGetBufferMemoryRequirements(worker.handle(), m_worker_buffer.get(), &wreq);
    VkMemoryRequirements preq;
    vkGetBufferMemoryRequirements(primary.handle(), m_primary_buffer.get(), &preq);
    // One physical device: the memory type indices mean the same on both sides.
    const std::uint32_t type = worker.memory_type(wreq.memoryTypeBits & preq.memoryTypeBits, 0,
                                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    const VkDeviceSize size = std::max(wreq.size, preq.size);

    // Export on the worker, import on the primary.
    m_worker_memory = allocate_exportable_memory(
        worker, size, type,
        dedicated ? DedicatedTo{VK_NULL_HANDLE, m_worker_buffer.get()} : DedicatedTo{}, base);
    vk_check(vkBindBufferMemory(worker.handle(), m_worker_buffer.get(), m_worker_memory.get(), 0),
             "vkBindBufferMemory " + base);
    const int fd = export_memory_fd(worker, m_worker_memory.get(), base);
    m_primary_memory = import_memory_fd(
        primary, fd, size, type,
        dedicated ? DedicatedTo{VK_NULL_HANDLE, m_primary_buffer.get()} : DedicatedTo{}, base,
        "Use the host-imported or host-copy path");
    vk_check(
        vkBindBufferMemory(primary.handle(), m_primary_buffer.get(), m_primary_memory.get(), 0),
        "vkBindBufferMemory " + base);
}

void SharedMemoryPath::record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                          VkImage image, VkImageLayout layout) const {
    const VkBufferImageCopy region =
        record_band_download(cmd, m_worker_buffer.get(), slot, band, image, layout);
    // Release to the other device: the primary acquires it from VK_QUEUE_FAMILY_EXTERNAL.
    buffer_barrier(cmd, m_worker_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE, copy_queue(worker()).family(),
                   VK_QUEUE_FAMILY_EXTERNAL);
}

void SharedMemoryPath::record_primary_band(VkCommandBuffer cmd, std::uint32_t slot,
                                           const Band& band, VkImage image) const {
    const VkBufferImageCopy region = band_region(slot, band);
    buffer_barrier(cmd, m_primary_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                   VK_ACCESS_2_TRANSFER_READ_BIT, VK_QUEUE_FAMILY_EXTERNAL,
                   copy_queue(primary()).family());
    vkCmdCopyBufferToImage(cmd, m_primary_buffer.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           1, &region);
}

} // namespace tandem::detail
