#include "render/headless.hpp"

#include <cstring>

#include <stb_image_write.h>

#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

void copy_to_buffer(VkCommandBuffer cmd, VkImage image, VkExtent2D extent, VkBuffer buffer) {
    VkBufferImageCopy copy{};
    copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    copy.imageExtent = {extent.width, extent.height, 1};
    vkCmdCopyImageToBuffer(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1, &copy);
}

Buffer readback_buffer(const Device& device, VkExtent2D extent, const std::string& name) {
    return create_buffer(device,
                         {VkDeviceSize{extent.width} * extent.height * 4,
                          VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                          VK_MEMORY_PROPERTY_HOST_CACHED_BIT, name + " readback"});
}

// A render refused for its snapshot or target is the caller's; the descriptor and device
// failures are failed Vulkan calls whose result only the log holds.
ErrorCategory category_of(RenderStatus status) noexcept {
    switch (status) {
    case RenderStatus::DescriptorFailure:
    case RenderStatus::DeviceFailure:
        return ErrorCategory::Vulkan;
    case RenderStatus::Ok:
    case RenderStatus::ExtentMismatch:
    case RenderStatus::UnknownMesh:
    case RenderStatus::TooManyInstances:
    case RenderStatus::UnknownSurface:
    case RenderStatus::NoMotionOutputs:
        break;
    }
    return ErrorCategory::InvalidArgument;
}

std::vector<std::uint8_t> host_copy(const Device& device, const Buffer& buffer) {
    invalidate_buffer(device, buffer);
    const auto* p = static_cast<const std::uint8_t*>(buffer.mapped);
    return {p, p + buffer.size};
}

} // namespace

std::vector<std::uint8_t> read_back_rgba8(const Device& device, VkImage image, VkExtent2D extent,
                                          VkImageLayout layout) {
    Buffer buffer = readback_buffer(device, extent, "read_back_rgba8");
    submit_and_wait(device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        image_barrier(cmd, image, layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
        copy_to_buffer(cmd, image, extent, buffer.get());
        image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, layout,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
    });
    return host_copy(device, buffer);
}

void write_png(const std::string& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::uint8_t> rgba) {
    if (rgba.size() != std::size_t{width} * height * 4 || width == 0 || height == 0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Cannot write " + path + ": the pixels do not match " + std::to_string(width) +
                        "x" + std::to_string(height));
    }
    if (stbi_write_png(path.c_str(), static_cast<int>(width), static_cast<int>(height), 4,
                       rgba.data(), static_cast<int>(width * 4)) == 0) {
        // Other: the file could not be written, like a profile that cannot be saved.
        throw Error("Cannot write " + path, "Check that the folder exists and is writable");
    }
}

HeadlessView::HeadlessView(const Renderer& renderer, VkExtent2D extent, const std::string& name)
    : m_renderer(renderer),
      m_color(create_image(renderer.device(),
                           {extent.width,
                            extent.height,
                            renderer.color_format(),
                            VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                VK_IMAGE_USAGE_SAMPLED_BIT,
                            name + " colour",
                            {}})),
      m_target(renderer, extent, 4096, 8, name),
      m_readback(readback_buffer(renderer.device(), extent, name)) {
    if (renderer.color_format() != VK_FORMAT_R8G8B8A8_UNORM) {
        throw Error(ErrorCategory::InvalidArgument,
                    "HeadlessView needs a renderer that draws RGBA8");
    }
}

std::vector<std::uint8_t> HeadlessView::render(const FrameSnapshot& snapshot,
                                               std::span<const ExternalTexture> external,
                                               RenderStats* stats) {
    const Device& device = m_renderer.device();
    // Poison the readback so that a render that wrote nothing cannot pass for one that did.
    std::memset(m_readback.mapped, 0xCD, m_readback.size);
    flush_buffer(device, m_readback);
    RenderStatus status = RenderStatus::Ok;
    submit_and_wait(device, QueueRole::Main, [&](VkCommandBuffer cmd) {
        ColorTarget color;
        color.image = m_color.get();
        color.view = m_color.view.get();
        color.extent = m_color.extent;
        status = m_renderer.record(cmd, m_target, color, snapshot, external, stats);
        if (status != RenderStatus::Ok) {
            return;
        }
        copy_to_buffer(cmd, m_color.get(), m_color.extent, m_readback.get());
        image_barrier(cmd, m_color.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                      VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                      VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
                      VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
        buffer_barrier(cmd, m_readback.get(), 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_2_COPY_BIT,
                       VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                       VK_ACCESS_2_HOST_READ_BIT);
    });
    if (status != RenderStatus::Ok) {
        throw Error(category_of(status), std::string("Render refused: ") + to_string(status));
    }
    return host_copy(device, m_readback);
}

} // namespace tandem::detail
