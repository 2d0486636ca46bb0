#include "transfer/host_imported_path.hpp"

#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

constexpr VkExternalMemoryHandleTypeFlagBits k_handle =
    VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;

void import_host_buffer(const Device& device, void* host, VkDeviceSize size,
                        VkBufferUsageFlags usage, const std::string& name,
                        Handle<VkBuffer>& buffer_out, Handle<VkDeviceMemory>& memory_out) {
    const VkDevice dev = device.handle();
    const std::string hint = "Use the host-copy path (--paths host-copy or TransferDesc::forced)";
    if (device.fn().get_memory_host_pointer_properties == nullptr) {
        throw Error(VK_ERROR_EXTENSION_NOT_PRESENT,
                    "VK_EXT_external_memory_host is not enabled on " + device.label(), hint);
    }
    VkPhysicalDeviceExternalBufferInfo query{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
    query.usage = usage;
    query.handleType = k_handle;
    VkExternalBufferProperties props{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    vkGetPhysicalDeviceExternalBufferProperties(device.physical(), &query, &props);
    if ((props.externalMemoryProperties.externalMemoryFeatures &
         VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) == 0) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    device.label() + " cannot import host allocations into transfer buffers", hint);
    }
    VkMemoryHostPointerPropertiesEXT host_props{
        VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    vk_check(device.fn().get_memory_host_pointer_properties(dev, k_handle, host, &host_props),
             "vkGetMemoryHostPointerPropertiesEXT " + name, hint);

    buffer_out = create_external_buffer(device, size, usage, k_handle, name);
    const VkBuffer buffer = buffer_out.get();

    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buffer, &req);
    const std::uint32_t bits = req.memoryTypeBits & host_props.memoryTypeBits;
    if (bits == 0 || req.size > size) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    device.label() + " has no memory type that can hold both the transfer buffer "
                                     "and the imported host allocation",
                    hint);
    }
    VkImportMemoryHostPointerInfoEXT import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
    import.handleType = k_handle;
    import.pHostPointer = host;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = &import;
    alloc.allocationSize = size;
    alloc.memoryTypeIndex = device.memory_type(bits, 0, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(dev, &alloc, nullptr, &memory), "vkAllocateMemory import " + name,
             hint);
    memory_out = own_memory(device, memory, size);
    device.name(memory, VK_OBJECT_TYPE_DEVICE_MEMORY, name);
    vk_check(vkBindBufferMemory(dev, buffer, memory, 0), "vkBindBufferMemory " + name);
}

} // namespace

HostImportedPath::HostImportedPath(const Device& worker, const Device& primary,
                                   const StagingLayout& layout)
    : TransferPathBackend(worker, primary, layout) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    m_alignment = std::max<std::size_t>(
        {page, static_cast<std::size_t>(worker.info().features.min_imported_host_pointer_alignment),
         static_cast<std::size_t>(primary.info().features.min_imported_host_pointer_alignment)});
    m_host_bytes = static_cast<std::size_t>(align_up(layout.total_bytes, m_alignment));
    m_host = std::aligned_alloc(m_alignment, m_host_bytes);
    if (m_host == nullptr) {
        throw Error(VK_ERROR_OUT_OF_HOST_MEMORY,
                    "Allocating " + std::to_string(m_host_bytes) + " bytes of host staging",
                    "Free host memory, or use fewer slots or smaller images");
    }
    std::memset(m_host, 0, m_host_bytes); // touch every page before the devices pin them
    try {
        const std::string base = worker.label() + "->" + primary.label() + " host staging";
        import_host_buffer(worker, m_host, m_host_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           base + " (worker)", m_worker_buffer, m_worker_memory);
        import_host_buffer(primary, m_host, m_host_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                           base + " (primary)", m_primary_buffer, m_primary_memory);
    } catch (...) {
        m_worker_buffer.reset();
        m_worker_memory.reset();
        m_primary_buffer.reset();
        m_primary_memory.reset();
        std::free(m_host);
        throw;
    }
}

HostImportedPath::~HostImportedPath() {
    m_worker_buffer.reset();
    m_worker_memory.reset();
    m_primary_buffer.reset();
    m_primary_memory.reset();
    std::free(m_host);
}

void HostImportedPath::record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                          VkImage image, VkImageLayout layout) const {
    const VkBufferImageCopy region =
        record_band_download(cmd, m_worker_buffer.get(), slot, band, image, layout);
    // Make the band available in host memory, where the primary's import reads it.
    buffer_barrier(cmd, m_worker_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
}

void HostImportedPath::record_primary_band(VkCommandBuffer cmd, std::uint32_t slot,
                                           const Band& band, VkImage image) const {
    const VkBufferImageCopy region = band_region(slot, band);
    // Host memory written outside this device (the worker's copy engine) becomes visible.
    buffer_barrier(cmd, m_primary_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    vkCmdCopyBufferToImage(cmd, m_primary_buffer.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           1, &region);
}

} // namespace tandem::detail
