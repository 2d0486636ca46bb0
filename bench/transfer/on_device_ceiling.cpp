#include "on_device_ceiling.hpp"

#include <string>
#include <vector>

#include "bench_util.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"

namespace tandem::bench {

const char* to_string(OnDeviceCopy copy) noexcept {
    return copy == OnDeviceCopy::ImageToImage ? "image -> image"
                                              : "image -> device-local buffer -> image";
}

namespace {

constexpr VkFormat k_format = VK_FORMAT_R8G8B8A8_UNORM;

void record(VkCommandBuffer cmd, OnDeviceCopy copy, VkImage src, VkImage dst, VkBuffer staging,
            VkExtent2D extent, std::uint32_t count) {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    detail::vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer on-device ceiling");
    const VkImageSubresourceLayers layers{VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    for (std::uint32_t i = 0; i < count; ++i) {
        // Each transfer follows the last, as a sequence of real transfers would.
        detail::image_barrier(cmd, dst, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        if (copy == OnDeviceCopy::ImageToImage) {
            VkImageCopy region{};
            region.srcSubresource = layers;
            region.dstSubresource = layers;
            region.extent = {extent.width, extent.height, 1};
            vkCmdCopyImage(cmd, src, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst,
                           VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
            continue;
        }
        VkBufferImageCopy region{};
        region.imageSubresource = layers;
        region.imageExtent = {extent.width, extent.height, 1};
        detail::buffer_barrier(cmd, staging, 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                               VK_ACCESS_2_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                               VK_ACCESS_2_TRANSFER_WRITE_BIT);
        vkCmdCopyImageToBuffer(cmd, src, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging, 1, &region);
        detail::buffer_barrier(cmd, staging, 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                               VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                               VK_ACCESS_2_TRANSFER_READ_BIT);
        vkCmdCopyBufferToImage(cmd, staging, dst, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    }
    detail::vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer on-device ceiling");
}

} // namespace

CopyCeiling measure_on_device_copy(const detail::Device& device, detail::QueueRole queue_role,
                                   OnDeviceCopy copy, VkExtent2D extent, std::uint32_t batch,
                                   std::uint32_t runs, std::chrono::microseconds lead) {
    const VkDeviceSize bytes = VkDeviceSize{extent.width} * extent.height * 4;
    const std::string name = device.label() + " on-device ceiling";
    const detail::Queue& queue = device.queue(queue_role);
    detail::ImageDesc idesc;
    idesc.width = extent.width;
    idesc.height = extent.height;
    idesc.format = k_format;
    idesc.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                  VK_IMAGE_USAGE_SAMPLED_BIT;
    idesc.queue_families = {device.queue(detail::QueueRole::Main).family(), queue.family()};
    idesc.name = name + " source";
    const detail::Image src = detail::create_image(device, idesc);
    idesc.name = name + " destination";
    const detail::Image dst = detail::create_image(device, idesc);
    const detail::Buffer staging = detail::create_buffer(
        device, {bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, name + " staging"});
    const auto data = pattern(bytes, bytes + 3);
    upload_image(device, src.get(), extent, k_format, data, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    poison_image(device, dst.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                 VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);

    const detail::CommandPool pool(device, queue.family(), name + " pool");
    const VkCommandBuffer single = pool.allocate(name + " single");
    const VkCommandBuffer many = pool.allocate(name + " batch");
    record(single, copy, src.get(), dst.get(), staging.get(), extent, 1);
    record(many, copy, src.get(), dst.get(), staging.get(), extent, batch);

    const ReleasedCopyTimes times = time_released_copies(device, queue, single, many, bytes, batch,
                                                         runs, lead, "on-device ceiling");
    CopyCeiling out;
    out.gbps = times.gbps;
    out.steady_gbps = times.steady_gbps;
    out.latency_us = times.latency_us;
    out.verified = read_image(device, dst.get(), extent, k_format,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL) == data;
    return out;
}

} // namespace tandem::bench
