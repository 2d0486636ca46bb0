#include "transfer/same_device_path.hpp"

#include "tandem/error.hpp"

namespace tandem::detail {

SameDevicePath::SameDevicePath(const Device& worker, const Device& primary,
                               const StagingLayout& layout)
    : TransferPathBackend(worker, primary, layout) {
    if (&worker != &primary) {
        throw Error("The same-device transfer path needs the worker and the primary to be one "
                    "Device",
                    "Use a cross-device path (shared memory, host imported or host copy)");
    }
}

void SameDevicePath::record_image_copy(VkCommandBuffer cmd, const Band& band, VkImage source,
                                       VkImageLayout source_layout, VkImage destination) const {
    if (source == destination) {
        return;
    }
    VkImageCopy region{};
    region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.srcOffset = {0, static_cast<std::int32_t>(band.first_row), 0};
    region.dstSubresource = region.srcSubresource;
    region.dstOffset = region.srcOffset;
    region.extent = {layout().width, band.rows, 1};
    vkCmdCopyImage(cmd, source, source_layout, destination, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                   &region);
}

} // namespace tandem::detail
