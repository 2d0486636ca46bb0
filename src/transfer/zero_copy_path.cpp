#include "transfer/zero_copy_path.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "core/image_cache.hpp"
#include "core/log.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/link_copy_queue.hpp"
#include "transfer/opaque_fd_memory.hpp"

namespace tandem::detail {
namespace {

constexpr VkImageLayout k_handed_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
constexpr const char* k_fallback = "Use the shared-memory path (force it with transfer_path)";

// The create info both sides use, create_image's own, identical down to the external-memory
// struct it chains.
struct ImageCreate {
    explicit ImageCreate(const ImageDesc& desc) : base(desc) {
        external.handleTypes = k_opaque_fd_handle;
        base.info.pNext = &external;
    }
    ImageCreate(const ImageCreate&) = delete;
    ImageCreate& operator=(const ImageCreate&) = delete;

    ImageCreateInfo base;
    VkExternalMemoryImageCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
};

// What the driver says about exporting and importing such an image: 0 when it cannot.
VkExternalMemoryFeatureFlags external_features(const Device& device, VkFormat format,
                                               VkImageUsageFlags usage) {
    VkPhysicalDeviceExternalImageFormatInfo external{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO};
    external.handleType = k_opaque_fd_handle;
    VkPhysicalDeviceImageFormatInfo2 info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2};
    info.pNext = &external;
    info.format = format;
    info.type = VK_IMAGE_TYPE_2D;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = usage;
    VkExternalImageFormatProperties external_props{
        VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};
    VkImageFormatProperties2 props{VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2};
    props.pNext = &external_props;
    if (vkGetPhysicalDeviceImageFormatProperties2(device.physical(), &info, &props) != VK_SUCCESS) {
        return 0;
    }
    return external_props.externalMemoryProperties.externalMemoryFeatures;
}

Handle<VkImage> make_image(const Device& device, const ImageCreate& create,
                           const std::string& name) {
    const VkDevice dev = device.handle();
    VkImage image = VK_NULL_HANDLE;
    vk_check(vkCreateImage(dev, &create.base.info, nullptr, &image), "vkCreateImage " + name,
             k_fallback);
    device.name(image, VK_OBJECT_TYPE_IMAGE, name);
    return Handle<VkImage>(image, [dev](VkImage i) { vkDestroyImage(dev, i, nullptr); });
}

// Requirements of `image`, and whether the driver requires or prefers a dedicated allocation.
VkMemoryRequirements requirements(const Device& device, VkImage image, bool& dedicated) {
    const ImageMemoryNeeds needs = image_memory_needs(device, image);
    dedicated = dedicated || needs.dedicated.requiresDedicatedAllocation == VK_TRUE ||
                needs.dedicated.prefersDedicatedAllocation == VK_TRUE;
    return needs.requirements;
}

} // namespace

ZeroCopyPath::ZeroCopyPath(const Device& worker, const Device& primary, const StagingLayout& layout)
    : TransferPathBackend(worker, primary, layout) {
    if (worker.fn().get_memory_fd == nullptr || !primary.enabled("VK_KHR_external_memory_fd")) {
        throw Error(VK_ERROR_EXTENSION_NOT_PRESENT,
                    "Zero-copy transfer needs VK_KHR_external_memory_fd on both devices",
                    k_fallback);
    }
    if (worker.info().device_uuid != primary.info().device_uuid ||
        worker.info().driver_uuid != primary.info().driver_uuid) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    "Zero-copy transfer needs one GPU: the devices' UUIDs differ",
                    "Use the host-imported or host-copy path");
    }
    for (const Device* d : {&worker, &primary}) {
        for (const QueueRole role : {QueueRole::Main, copy_queue_role(*d)}) {
            m_families.push_back(d->queue(role).family());
        }
    }
    std::sort(m_families.begin(), m_families.end());
    m_families.erase(std::unique(m_families.begin(), m_families.end()), m_families.end());
    if (m_families.size() == 1) {
        m_worker_family = copy_queue(worker).family();
        m_primary_family = copy_queue(primary).family();
    }
}

bool ZeroCopyPath::exports(const Device& device, VkFormat format, VkImageUsageFlags usage) {
    const VkExternalMemoryFeatureFlags features = external_features(device, format, usage);
    return (features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) != 0 &&
           (features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) != 0;
}

std::pair<Image, Image> ZeroCopyPath::create_images(const ImageDesc& desc) const {
    if (desc.width == 0 || desc.height == 0 || desc.width > 16384 || desc.height > 16384) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Image size " + std::to_string(desc.width) + "x" + std::to_string(desc.height) +
                        " is not valid",
                    "Use a width and height from 1 to 16384");
    }
    ImageDesc shared = desc;
    shared.queue_families = m_families;
    // A pair an earlier slot of this pair of devices gave back (core/image_cache.hpp).
    if (auto reused = worker().image_cache().take_pair(primary(), "zero-copy", shared)) {
        hand_over_layout(reused->second);
        return std::move(*reused);
    }
    const ImageCreate create(shared);
    const VkExternalMemoryFeatureFlags features =
        external_features(worker(), create.base.info.format, create.base.info.usage);
    if ((features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) == 0 ||
        (features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) == 0) {
        // TransferLink checked the format with the slot usage; this is the caller's usage.
        throw Error(VK_ERROR_FORMAT_NOT_SUPPORTED,
                    "The driver cannot export and import " + desc.name +
                        " (this format and usage) as an opaque fd",
                    k_fallback);
    }
    bool dedicated = (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;

    std::pair<Image, Image> out;
    Image& w = out.first;
    Image& p = out.second;
    w.format = p.format = desc.format;
    w.extent = p.extent = {desc.width, desc.height};
    w.image = make_image(worker(), create, desc.name + " (worker)");
    p.image = make_image(primary(), create, desc.name + " (primary)");
    const VkMemoryRequirements wreq = requirements(worker(), w.get(), dedicated);
    const VkMemoryRequirements preq = requirements(primary(), p.get(), dedicated);
    // One physical device: memory type indices mean the same on both sides.
    const std::uint32_t type = worker().memory_type(wreq.memoryTypeBits & preq.memoryTypeBits, 0,
                                                    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if ((worker().memory_flags(type) & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) == 0) {
        // Every read and write of the slot then crosses to host memory: worth a line, once.
        static std::atomic<bool> told{false};
        if (!told.exchange(true)) {
            log_warn("transfer",
                     "{}: no device-local memory type can hold {} shared with {} (allowed types "
                     "0x{:x}); memory type {} is used, which is not device-local",
                     worker().info().name, desc.name, primary().info().name,
                     wreq.memoryTypeBits & preq.memoryTypeBits, type);
        }
    }
    const VkDeviceSize size = std::max(wreq.size, preq.size);

    w.memory = allocate_exportable_memory(worker(), size, type,
                                          dedicated ? DedicatedTo{w.get()} : DedicatedTo{},
                                          desc.name, k_fallback);
    worker().name(w.memory.get(), VK_OBJECT_TYPE_DEVICE_MEMORY, desc.name + " (exported)");
    vk_check(vkBindImageMemory(worker().handle(), w.get(), w.memory.get(), 0),
             "vkBindImageMemory " + desc.name);
    const int fd = export_memory_fd(worker(), w.memory.get(), desc.name, k_fallback);
    p.memory =
        import_memory_fd(primary(), fd, size, type,
                         dedicated ? DedicatedTo{p.get()} : DedicatedTo{}, desc.name, k_fallback);
    primary().name(p.memory.get(), VK_OBJECT_TYPE_DEVICE_MEMORY, desc.name + " (imported)");
    vk_check(vkBindImageMemory(primary().handle(), p.get(), p.memory.get(), 0),
             "vkBindImageMemory " + desc.name);
    w.view = create_image_view(worker(), w.get(), desc.format, desc.name + " (worker)");
    p.view = create_image_view(primary(), p.get(), desc.format, desc.name + " (primary)");
    hand_over_layout(p);
    return worker().image_cache().lend_pair(primary(), "zero-copy", shared, std::move(out), size);
}

void ZeroCopyPath::hand_over_layout(const Image& primary_image) const {
    // The primary's image starts in the layout every hand-over leaves it in, so the acquires
    // (which change no layout) and the primary's readers find it there from the first one.
    submit_and_wait(primary(), QueueRole::Main, [&](VkCommandBuffer cmd) {
        image_barrier(cmd, primary_image.get(), VK_IMAGE_LAYOUT_UNDEFINED, k_handed_layout,
                      VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
    });
}

void ZeroCopyPath::record_worker_band(VkCommandBuffer cmd, std::uint32_t /*slot*/,
                                      const Band& /*band*/, VkImage image,
                                      VkImageLayout layout) const {
    // The layout change on the worker's own queue, after the work the caller's semaphore waited
    // for (none when the image is handed on again unchanged); then the release, chained to it.
    if (layout != k_handed_layout) {
        image_barrier(cmd, image, layout, k_handed_layout, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_NONE);
    }
    image_barrier(cmd, image, k_handed_layout, k_handed_layout,
                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE, m_worker_family,
                  VK_QUEUE_FAMILY_EXTERNAL);
}

void ZeroCopyPath::record_primary_band(VkCommandBuffer cmd, std::uint32_t /*slot*/,
                                       const Band& /*band*/, VkImage image) const {
    image_barrier(cmd, image, k_handed_layout, k_handed_layout, VK_PIPELINE_STAGE_2_NONE,
                  VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                  VK_ACCESS_2_MEMORY_READ_BIT, VK_QUEUE_FAMILY_EXTERNAL, m_primary_family);
}

} // namespace tandem::detail
