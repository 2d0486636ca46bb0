// Headless helpers for tests and the CLI: an offscreen RGBA8 view that renders a snapshot and
// reads the pixels back (blocking), and PNG writing through stb_image_write. Set-up speed, not
// for the per-frame path: every call waits for the GPU. Single thread per object.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/resources.hpp"
#include "render/renderer.hpp"

namespace tandem::detail {

// Copies a whole RGBA8 colour image (currently in `layout`, last written by `stage`) to host
// memory, rows top to bottom; leaves it in `layout`. Blocks. Throws tandem::Error.
[[nodiscard]] std::vector<std::uint8_t> read_back_rgba8(const Device& device, VkImage image,
                                                        VkExtent2D extent, VkImageLayout layout);

// Writes RGBA8 pixels as a PNG; throws tandem::Error when the file cannot be written.
void write_png(const std::string& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::uint8_t> rgba);

class HeadlessView {
public:
    // `renderer` must draw RGBA8 (VK_FORMAT_R8G8B8A8_UNORM) and outlive the view.
    HeadlessView(const Renderer& renderer, VkExtent2D extent, const std::string& name = "view");

    // Renders, waits, and returns the pixels. The colour image is left in
    // SHADER_READ_ONLY_OPTIMAL so that another view can show it on a surface (external()).
    // Throws tandem::Error when the render is refused (the status is in the message).
    std::vector<std::uint8_t> render(const FrameSnapshot& snapshot,
                                     std::span<const ExternalTexture> external = {},
                                     RenderStats* stats = nullptr);

    [[nodiscard]] ExternalTexture external() const {
        return {m_color.view.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    }
    [[nodiscard]] VkExtent2D extent() const noexcept { return m_color.extent; }

private:
    const Renderer& m_renderer;
    Image m_color;
    RenderTarget m_target;
    Buffer m_readback;
};

} // namespace tandem::detail
