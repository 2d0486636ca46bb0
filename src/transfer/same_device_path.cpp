#include "transfer/same_device_path.hpp"

#include "core/resources.hpp"
#include "tandem/error.hpp"
#include "transfer/band_recorder.hpp"

namespace tandem::detail {

SameDevicePath::SameDevicePath(const Device& worker, const Device& primary,
                               const StagingLayout& layout)
    : TransferPathBackend(worker, primary, layout) {
    if (&worker != &primary) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The same-device transfer path needs the worker and the primary to be one "
                    "Device",
                    "Use a cross-device path (shared memory, host imported or host copy)");
    }
}

VkImageLayout SameDevicePath::source_layout_after(VkImageLayout source_layout,
                                                  bool same_image) noexcept {
    return same_image ? VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
                      : copy_source_layout(source_layout);
}

void SameDevicePath::record_transfer(VkCommandBuffer cmd, VkImage source,
                                     VkImageLayout source_layout, VkImage destination) const {
    if (source == destination) {
        // No copy: the image only changes layout (concurrent sharing: no ownership transfer).
        image_barrier(cmd, source, source_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
        return;
    }
    record_to_copy_source(cmd, source, source_layout);
    record_to_copy_destination(cmd, destination);
    copy_whole_image(cmd, source, copy_source_layout(source_layout), destination,
                     VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, {layout().width, layout().height});
    record_to_sampled(cmd, destination);
}

} // namespace tandem::detail
