#include "transfer/host_imported_path.hpp"

#include <cstdlib>
#include <cstring>
#include <optional>

#include <unistd.h>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

constexpr VkExternalMemoryHandleTypeFlagBits k_host_allocation_handle =
    VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
// What an image in place must do as well as an optimal one of its format does it, beyond what
// its usage asks (which the image format query checks): filtering, blending, blits.
constexpr VkFormatFeatureFlags k_in_place_features =
    VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT |
    VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BLEND_BIT | VK_FORMAT_FEATURE_BLIT_SRC_BIT;

// A linear image of `desc` that host allocations can be bound to (no memory yet).
Handle<VkImage> make_linear_image(const Device& device, const ImageDesc& desc) {
    ImageCreateInfo create(desc);
    VkExternalMemoryImageCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
    external.handleTypes = k_host_allocation_handle;
    create.info.pNext = &external;
    create.info.tiling = VK_IMAGE_TILING_LINEAR;
    const VkDevice dev = device.handle();
    VkImage image = VK_NULL_HANDLE;
    vk_check(vkCreateImage(dev, &create.info, nullptr, &image), "vkCreateImage " + desc.name,
             "Let the CPU device copy (RuntimeOptions::cpu_reads_inputs_in_place, "
             "cpu_writes_outputs_in_place)");
    device.name(image, VK_OBJECT_TYPE_IMAGE, desc.name);
    return Handle<VkImage>(image, [dev](VkImage i) { vkDestroyImage(dev, i, nullptr); });
}

// Where `image`'s bytes lie and what memory it needs; nullopt when it needs an allocation of
// its own or its rows do not start at its memory's start.
std::optional<InPlaceImage> describe_linear_image(const Device& device, VkImage image) {
    const VkImageSubresource colour{VK_IMAGE_ASPECT_COLOR_BIT, 0, 0};
    VkSubresourceLayout rows{};
    vkGetImageSubresourceLayout(device.handle(), image, &colour, &rows);
    const ImageMemoryNeeds needs = image_memory_needs(device, image);
    if (rows.offset != 0 || needs.dedicated.requiresDedicatedAllocation == VK_TRUE) {
        return std::nullopt;
    }
    return InPlaceImage{rows.rowPitch, needs.requirements.size, needs.requirements.alignment,
                        needs.requirements.memoryTypeBits};
}

// Returns the memory type the import took.
std::uint32_t import_host_buffer(const Device& device, void* host, VkDeviceSize size,
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
    query.handleType = k_host_allocation_handle;
    VkExternalBufferProperties props{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    vkGetPhysicalDeviceExternalBufferProperties(device.physical(), &query, &props);
    if ((props.externalMemoryProperties.externalMemoryFeatures &
         VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) == 0) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    device.label() + " cannot import host allocations into transfer buffers", hint);
    }
    VkMemoryHostPointerPropertiesEXT host_props{
        VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    vk_check(device.fn().get_memory_host_pointer_properties(dev, k_host_allocation_handle, host,
                                                            &host_props),
             "vkGetMemoryHostPointerPropertiesEXT " + name, hint);

    buffer_out = create_external_buffer(device, size, usage, k_host_allocation_handle, name);
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
    import.handleType = k_host_allocation_handle;
    import.pHostPointer = host;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = &import;
    alloc.allocationSize = size;
    alloc.memoryTypeIndex = device.memory_type(bits, 0, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    const VkResult r = vkAllocateMemory(dev, &alloc, nullptr, &memory);
    // Owned before the check, so that an injected fault (core/vk_check.hpp) frees it.
    if (r == VK_SUCCESS) {
        memory_out = own_memory(device, memory, size);
    }
    vk_check(r, "vkAllocateMemory import " + name, hint);
    device.name(memory, VK_OBJECT_TYPE_DEVICE_MEMORY, name);
    vk_check(vkBindBufferMemory(dev, buffer, memory, 0), "vkBindBufferMemory " + name);
    return alloc.memoryTypeIndex;
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
        m_memory_types[0] =
            import_host_buffer(worker, m_host, m_host_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               base + " (worker)", m_worker_buffer, m_worker_memory);
        m_memory_types[1] =
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

std::optional<InPlaceImage> HostImportedPath::probe_in_place(const Device& device,
                                                             const ImageDesc& desc) noexcept {
    try {
        if (device.fn().get_memory_host_pointer_properties == nullptr) {
            return std::nullopt;
        }
        VkFormatProperties features{};
        vkGetPhysicalDeviceFormatProperties(device.physical(), desc.format, &features);
        const VkFormatFeatureFlags wanted = features.optimalTilingFeatures & k_in_place_features;
        if ((features.linearTilingFeatures & wanted) != wanted) {
            return std::nullopt;
        }
        VkPhysicalDeviceExternalImageFormatInfo external{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO};
        external.handleType = k_host_allocation_handle;
        VkPhysicalDeviceImageFormatInfo2 info{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2};
        info.pNext = &external;
        info.format = desc.format;
        info.type = VK_IMAGE_TYPE_2D;
        info.tiling = VK_IMAGE_TILING_LINEAR;
        info.usage = desc.usage;
        VkExternalImageFormatProperties external_props{
            VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};
        VkImageFormatProperties2 props{VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2};
        props.pNext = &external_props;
        if (vkGetPhysicalDeviceImageFormatProperties2(device.physical(), &info, &props) !=
                VK_SUCCESS ||
            (external_props.externalMemoryProperties.externalMemoryFeatures &
             VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) == 0 ||
            props.imageFormatProperties.maxExtent.width < desc.width ||
            props.imageFormatProperties.maxExtent.height < desc.height) {
            return std::nullopt;
        }
        ImageDesc probe = desc;
        probe.name = desc.name + " (probe)";
        const Handle<VkImage> image = make_linear_image(device, probe);
        return describe_linear_image(device, image.get());
    } catch (...) {
        return std::nullopt;
    }
}

std::string HostImportedPath::misfit(StagingSide side, const InPlaceImage& image) const {
    const StagingLayout& staging = layout();
    const std::uint32_t type = m_memory_types[side == StagingSide::Worker ? 0 : 1];
    if (staging.band_count != 1) {
        return "the staging has " + std::to_string(staging.band_count) + " bands";
    }
    if (image.row_pitch != staging.row_pitch) {
        return "its rows are " + std::to_string(image.row_pitch) + " bytes apart, the staging's " +
               std::to_string(staging.row_pitch);
    }
    if (image.alignment == 0 || staging.slot_stride % image.alignment != 0) {
        return "it needs an alignment of " + std::to_string(image.alignment) +
               " bytes, which the staging's slots (" + std::to_string(staging.slot_stride) +
               " bytes apart) do not keep";
    }
    if (image.size > staging.slot_stride) {
        return "it needs " + std::to_string(image.size) + " bytes, more than a slot's " +
               std::to_string(staging.slot_stride);
    }
    if ((image.memory_type_bits & (1u << type)) == 0) {
        return "it cannot be bound to the imported memory's type " + std::to_string(type);
    }
    return {};
}

bool HostImportedPath::place_in_staging(StagingSide side, const InPlaceImage& image,
                                        std::string& why) {
    why = misfit(side, image);
    if (!why.empty()) {
        return false;
    }
    m_in_place[side == StagingSide::Worker ? 0 : 1] = true;
    return true;
}

Image HostImportedPath::create_staging_image(StagingSide side, std::uint32_t slot,
                                             const ImageDesc& desc) const {
    const bool worker_side = side == StagingSide::Worker;
    const Device& device = worker_side ? worker() : primary();
    const VkDeviceMemory memory = worker_side ? m_worker_memory.get() : m_primary_memory.get();
    const StagingLayout& staging = layout();
    Image out;
    out.format = desc.format;
    out.extent = {desc.width, desc.height};
    out.image = make_linear_image(device, desc);
    // The caller's usage may lay the image out otherwise than the probe's did.
    const std::optional<InPlaceImage> fits = describe_linear_image(device, out.get());
    std::string why;
    if (!m_in_place[worker_side ? 0 : 1]) {
        why = "that side is not in place";
    } else if (slot >= staging.slots) {
        why = "there is no slot " + std::to_string(slot);
    } else if (!fits) {
        why = "it needs memory of its own";
    } else {
        why = misfit(side, *fits);
    }
    if (!why.empty()) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    device.label() + " cannot use " + desc.name +
                        " in place in the host staging: " + why,
                    "Let the CPU device copy (RuntimeOptions::cpu_reads_inputs_in_place, "
                    "cpu_writes_outputs_in_place)");
    }
    out.memory_offset = staging.slot_offset(slot);
    vk_check(vkBindImageMemory(device.handle(), out.get(), memory, out.memory_offset),
             "vkBindImageMemory " + desc.name);
    out.view = create_image_view(device, out.get(), desc.format, desc.name);
    if (worker_side) {
        // The worker's work writes it from UNDEFINED each time and leaves it in GENERAL for its
        // band (record_worker_band): no layout of its own until then.
        return out;
    }
    // The primary's image is GENERAL from the start, before the worker's copy writes any band: a
    // linear image's bytes in GENERAL are its memory's, so what that copy writes there is the
    // image's contents (a change from UNDEFINED later could discard them).
    submit_and_wait(device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        image_barrier(cmd, out.get(), VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                      VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
    });
    return out;
}

void HostImportedPath::record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                          VkImage image, VkImageLayout layout) const {
    if (m_in_place[0]) {
        // The work wrote the staging itself: its writes become available in host memory, where
        // the primary's import reads them (GENERAL keeps the bytes where the memory has them).
        image_barrier(cmd, image, layout, VK_IMAGE_LAYOUT_GENERAL,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
        return;
    }
    const VkBufferImageCopy region =
        record_band_download(cmd, m_worker_buffer.get(), slot, band, image, layout);
    // Make the band available in host memory, where the primary's import reads it.
    buffer_barrier(cmd, m_worker_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
}

void HostImportedPath::record_primary_band(VkCommandBuffer cmd, std::uint32_t slot,
                                           const Band& band, VkImage image) const {
    if (m_in_place[1]) {
        // The worker's copy wrote the image's own bytes: they become visible to the job's
        // reads (and writes: it may change its input), the image staying in GENERAL.
        image_barrier(cmd, image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL,
                      VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
        return;
    }
    const VkBufferImageCopy region = band_region(slot, band);
    // Host memory written outside this device (the worker's copy engine) becomes visible.
    buffer_barrier(cmd, m_primary_buffer.get(), region.bufferOffset, band.bytes,
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    vkCmdCopyBufferToImage(cmd, m_primary_buffer.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           1, &region);
}

} // namespace tandem::detail
