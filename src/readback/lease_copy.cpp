#include "readback/lease_copy.hpp"

#include <string>

#include "core/resources.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

std::uint32_t lease_texel_bytes(VkFormat format) {
    switch (format) {
    case VK_FORMAT_R8G8B8A8_UNORM:
    case VK_FORMAT_R8G8B8A8_SRGB:
    case VK_FORMAT_B8G8R8A8_UNORM:
    case VK_FORMAT_B8G8R8A8_SRGB:
    case VK_FORMAT_R32_SFLOAT:
        return 4;
    case VK_FORMAT_R16G16B16A16_SFLOAT:
        return 8;
    default:
        throw Error(ErrorCategory::InvalidArgument,
                    "A lease's image of format " + format_name(format) + " cannot be read back",
                    "Read leases of RGBA8, BGRA8, R32F or RGBA16F tasks");
    }
}

void record_lease_copy(VkCommandBuffer cmd, const Lease& lease, VkBuffer buffer,
                       VkExtent2D region) noexcept {
    // Every earlier use of the image on this queue (an application's frame sampling the same
    // lease) comes before the transition: ALL_COMMANDS, and the lease's wait, cover them.
    image_barrier(cmd, lease.image, lease.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    VkBufferImageCopy copy{};
    copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    copy.imageExtent = {region.width, region.height, 1};
    vkCmdCopyImageToBuffer(cmd, lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1,
                           &copy);
    // Back to the lease's layout before the batch signals, as the lease contract asks; later
    // readers on this queue come after it.
    image_barrier(cmd, lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, lease.layout,
                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
    buffer_barrier(cmd, buffer, 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                   VK_ACCESS_2_HOST_READ_BIT);
}

VkSemaphoreSubmitInfo lease_copy_wait(const Lease& lease) noexcept {
    VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    wait.semaphore = lease.wait_semaphore;
    wait.value = lease.wait_value;
    wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    return wait;
}

} // namespace tandem::detail
