// Renderer: draws a FrameSnapshot (plain data) into a caller-given colour image with its own
// depth image, on one device, using that device's MeshCache. Shared by the primary's main view
// and by workers' capture tasks; it knows nothing of either.
//
// - Vulkan 1.3 dynamic rendering; colour cleared on load and stored; D32 depth cleared on load
//   and not stored (nothing reads it afterwards: tile-based GPUs keep it on chip).
// - Perspective and orthographic cameras come as matrices in the snapshot.
// - Instances of one mesh are drawn with one instanced draw per primitive; instances whose
//   world bounds lie outside the camera's frustum are culled on the CPU first.
// - Deterministic: the output depends only on the snapshot, the assets and the device type.
//
// Threads: a Renderer is immutable after construction; record() may be called from any thread,
// concurrently, as long as each call uses its own RenderTarget. record() is on the per-frame
// path: it returns a status and throws nothing but std::bad_alloc (it plans the frame in host
// memory). A RenderTarget may be recorded again only once the GPU has finished the previous
// submission that used it (its instance buffer and descriptor pool are rewritten).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/pipeline_shelf.hpp"
#include "core/resources.hpp"
#include "render/mesh_cache.hpp"
#include "scene/snapshot.hpp"

namespace tandem::detail {

// The colour image to draw into and how to hand it on. Its content is discarded (cleared).
struct ColorTarget {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkExtent2D extent{};
    // What last touched the image (the first barrier waits for it).
    VkPipelineStageFlags2 previous_stage = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    VkAccessFlags2 previous_access = VK_ACCESS_2_MEMORY_WRITE_BIT;
    // Layout and first use after rendering (the last barrier makes the image ready for it).
    VkImageLayout final_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkPipelineStageFlags2 final_stage = VK_PIPELINE_STAGE_2_COPY_BIT;
    VkAccessFlags2 final_access = VK_ACCESS_2_TRANSFER_READ_BIT;
};

// An image a display surface shows: must be in `layout`, readable by the fragment shader, and
// made visible by the caller (e.g. by waiting on the lease's semaphore).
struct ExternalTexture {
    VkImageView view = VK_NULL_HANDLE;
    VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
};

enum class RenderStatus {
    Ok,
    ExtentMismatch,    // colour target and RenderTarget differ in size
    UnknownMesh,       // a snapshot's mesh id is not in the cache
    TooManyInstances,  // more visible instances than the RenderTarget holds
    UnknownSurface,    // an instance names an external texture that was not given
    DescriptorFailure, // the RenderTarget's descriptor pool could not provide a set
    DeviceFailure,     // a Vulkan call failed (see the log)
};
[[nodiscard]] const char* to_string(RenderStatus status) noexcept;

struct RenderStats {
    std::uint32_t instances = 0; // in the snapshot
    std::uint32_t culled = 0;    // outside the frustum
    std::uint32_t draws = 0;     // vkCmdDrawIndexed calls
};

class Renderer;

// Per-recording resources: the depth image, the instance buffer and the descriptor sets of
// external textures. One per frame or slot in flight.
class RenderTarget {
public:
    RenderTarget(const Renderer& renderer, VkExtent2D extent, std::uint32_t max_instances = 4096,
                 std::uint32_t max_surfaces = 8, const std::string& name = "render target");

    [[nodiscard]] VkExtent2D extent() const noexcept { return m_depth.extent; }

private:
    friend class Renderer;
    Image m_depth;
    Buffer m_instances;
    std::uint32_t m_max_instances = 0;
    Handle<VkDescriptorPool> m_pool;
    std::uint32_t m_max_surfaces = 0;
};

class Renderer {
public:
    // `cache` must outlive the renderer. `color` is the format of the images drawn into.
    Renderer(const MeshCache& cache, VkFormat color, VkFormat depth = VK_FORMAT_D32_SFLOAT);

    [[nodiscard]] const Device& device() const noexcept { return m_cache.device(); }
    [[nodiscard]] const MeshCache& cache() const noexcept { return m_cache; }
    [[nodiscard]] VkFormat color_format() const noexcept { return m_color; }
    [[nodiscard]] VkFormat depth_format() const noexcept { return m_depth; }

    // Records the whole render (barriers, dynamic rendering, draws, final barrier) into `cmd`.
    // Instance `surface` ids index `external`. Records nothing unless it returns Ok.
    [[nodiscard]] RenderStatus record(VkCommandBuffer cmd, RenderTarget& target,
                                      const ColorTarget& color, const FrameSnapshot& snapshot,
                                      std::span<const ExternalTexture> external = {},
                                      RenderStats* stats = nullptr) const;

private:
    const MeshCache& m_cache;
    VkFormat m_color;
    VkFormat m_depth;
    PipelineShelf::Shared m_pipeline; // shared by the device's captures of these formats
};

} // namespace tandem::detail
