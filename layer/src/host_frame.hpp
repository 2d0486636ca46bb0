// A frame copied to host memory: a host-visible buffer of one 4-byte-per-texel 2D image, and the
// commands that copy an image into it. For the layer's checks (verify mode, the dump), never on
// the path of a frame the program waits for: the caller waits for the copy on the host.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include <vulkan/vulkan.h>

#include "dispatch_table.hpp"

namespace tandem::layer {

// A barrier of a whole single-level colour image from one layout to another, no queue transfer.
[[nodiscard]] VkImageMemoryBarrier layout_barrier(VkImage image, VkImageLayout from,
                                                  VkImageLayout to, VkAccessFlags src_access,
                                                  VkAccessFlags dst_access);

// The first memory type `allowed` (a memoryTypeBits) has with `required` and `preferred`, else
// the first with `required` alone; nothing when none has `required`.
[[nodiscard]] std::optional<std::uint32_t>
find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, std::uint32_t allowed,
                 VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred);

class HostFrame {
public:
    // Throws std::runtime_error (with a sentence) when the buffer cannot be made.
    HostFrame(const DeviceDispatch& vk, VkDevice device,
              const VkPhysicalDeviceMemoryProperties& memory, VkExtent2D extent);
    ~HostFrame();
    HostFrame(const HostFrame&) = delete;
    HostFrame& operator=(const HostFrame&) = delete;

    // Records the copy of `image` (in `layout`, RGBA- or BGRA-ordered, `extent()` large) into the
    // buffer, with barriers to the transfer layout and back to `layout`.
    void record_copy(VkCommandBuffer cmd, VkImage image, VkImageLayout layout) const;
    // The texels, 4 bytes each, row after row: once the recorded copy completed.
    [[nodiscard]] std::span<const std::uint8_t> texels() const;
    [[nodiscard]] VkExtent2D extent() const noexcept { return m_extent; }

private:
    void destroy() noexcept;

    const DeviceDispatch& m_vk;
    VkDevice m_device = VK_NULL_HANDLE;
    VkExtent2D m_extent{};
    VkDeviceSize m_size = 0;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
    bool m_coherent = false;
    std::uint8_t* m_mapped = nullptr;
};

} // namespace tandem::layer
