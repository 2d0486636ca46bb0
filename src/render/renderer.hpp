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
// - Motion outputs (RenderOutputs::ColorDepthMotion, record() with MotionTargets): the same draw
//   also writes the fragment's depth (R32F, gl_FragCoord.z, cleared to 1) and its motion in
//   pixels back one frame (RG16F, post/interpolate.hpp's convention, cleared to 0), from the
//   snapshot's previous camera and previous instance transforms. The colour is the same, byte for
//   byte, as without them. A second pipeline (3 colour attachments) does it; the instance buffer
//   then also holds each instance's previous model matrix, and the previous view_proj and the
//   extent, which do not fit in the 128 push-constant bytes the colour path fills, are in a
//   uniform buffer of the RenderTarget (descriptor set 1), rewritten by each motion record().
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

// The motion outputs' formats (MotionTargets' images must have them).
inline constexpr VkFormat k_depth_output_format = VK_FORMAT_R32_SFLOAT;
inline constexpr VkFormat k_motion_format = VK_FORMAT_R16G16_SFLOAT;

// The depth and motion images of a motion render, the colour target's size; both cleared and
// written by the draw, then handed on together like ColorTarget's image.
struct MotionTargets {
    VkImage depth_image = VK_NULL_HANDLE; // k_depth_output_format
    VkImageView depth_view = VK_NULL_HANDLE;
    VkImage motion_image = VK_NULL_HANDLE; // k_motion_format
    VkImageView motion_view = VK_NULL_HANDLE;
    VkPipelineStageFlags2 previous_stage = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    VkAccessFlags2 previous_access = VK_ACCESS_2_MEMORY_WRITE_BIT;
    VkImageLayout final_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkPipelineStageFlags2 final_stage = VK_PIPELINE_STAGE_2_COPY_BIT;
    VkAccessFlags2 final_access = VK_ACCESS_2_TRANSFER_READ_BIT;
};

// What a Renderer can draw: colour only, or also depth and motion (its second pipeline is
// built at construction, shared per device like the first).
enum class RenderOutputs { Color, ColorDepthMotion };

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
    NoMotionOutputs,   // motion targets given to a renderer or target made without them
};
[[nodiscard]] const char* to_string(RenderStatus status) noexcept;

struct RenderStats {
    std::uint32_t instances = 0; // in the snapshot
    std::uint32_t culled = 0;    // outside the frustum
    std::uint32_t draws = 0;     // vkCmdDrawIndexed calls
};

class Renderer;

// Per-recording resources: the depth image, the instance buffer and the descriptor sets of
// external textures, and for a renderer with motion outputs the previous-frame uniform buffer
// and its set. One per frame or slot in flight.
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
    // Motion outputs only: the previous view_proj and the extent, and the set that binds them.
    Buffer m_motion_uniform;
    Handle<VkDescriptorSetLayout> m_motion_layout;
    Handle<VkDescriptorPool> m_motion_pool;
    VkDescriptorSet m_motion_set = VK_NULL_HANDLE;
};

class Renderer {
public:
    // `cache` must outlive the renderer. `color` is the format of the images drawn into.
    // Throws Error when a pipeline cannot be built.
    Renderer(const MeshCache& cache, VkFormat color, VkFormat depth = VK_FORMAT_D32_SFLOAT,
             RenderOutputs outputs = RenderOutputs::Color);

    [[nodiscard]] const Device& device() const noexcept { return m_cache.device(); }
    [[nodiscard]] const MeshCache& cache() const noexcept { return m_cache; }
    [[nodiscard]] VkFormat color_format() const noexcept { return m_color; }
    [[nodiscard]] VkFormat depth_format() const noexcept { return m_depth; }
    [[nodiscard]] RenderOutputs outputs() const noexcept { return m_outputs; }

    // Records the whole render (barriers, dynamic rendering, draws, final barrier) into `cmd`.
    // Instance `surface` ids index `external`. Records nothing unless it returns Ok.
    [[nodiscard]] RenderStatus record(VkCommandBuffer cmd, RenderTarget& target,
                                      const ColorTarget& color, const FrameSnapshot& snapshot,
                                      std::span<const ExternalTexture> external = {},
                                      RenderStats* stats = nullptr) const;
    // The same render that also writes depth and motion into `motion` (see the top of this
    // file); NoMotionOutputs unless the renderer and `target` were made with them.
    [[nodiscard]] RenderStatus record(VkCommandBuffer cmd, RenderTarget& target,
                                      const ColorTarget& color, const MotionTargets& motion,
                                      const FrameSnapshot& snapshot,
                                      std::span<const ExternalTexture> external = {},
                                      RenderStats* stats = nullptr) const;

private:
    // What a frame draws, planned before anything is recorded (renderer.cpp).
    struct FramePlan;

    [[nodiscard]] RenderStatus record_frame(VkCommandBuffer cmd, RenderTarget& target,
                                            const ColorTarget& color, const MotionTargets* motion,
                                            const FrameSnapshot& snapshot,
                                            std::span<const ExternalTexture> external,
                                            RenderStats* stats) const;
    // The frame's stages, in order; each answers Ok or records nothing.
    // Culls the instances and groups the visible ones by mesh and surface.
    [[nodiscard]] RenderStatus plan_frame(const FrameSnapshot& snapshot,
                                          std::span<const ExternalTexture> external,
                                          const RenderTarget& target, FramePlan& plan) const;
    // One descriptor set per external texture the groups sample, from the target's pool.
    [[nodiscard]] RenderStatus bind_surfaces(RenderTarget& target,
                                             std::span<const ExternalTexture> external,
                                             FramePlan& plan) const;
    // The instances' records (and the motion uniform), each group one contiguous range.
    [[nodiscard]] RenderStatus write_instances(RenderTarget& target, const ColorTarget& color,
                                               const MotionTargets* motion,
                                               const FrameSnapshot& snapshot,
                                               FramePlan& plan) const;
    // The attachments' barriers and vkCmdBeginRendering, every attachment cleared.
    static void begin_rendering(VkCommandBuffer cmd, const RenderTarget& target,
                                const ColorTarget& color, const MotionTargets* motion,
                                const glm::vec4& clear);
    // The draws of every group, its surface or its material bound.
    // Counts them in the plan's stats.
    void draw_groups(VkCommandBuffer cmd, const RenderTarget& target, FramePlan& plan,
                     const FrameSnapshot& snapshot, const MotionTargets* motion) const;

    const MeshCache& m_cache;
    VkFormat m_color;
    VkFormat m_depth;
    RenderOutputs m_outputs;
    PipelineShelf::Shared m_pipeline;        // shared by the device's captures of these formats
    PipelineShelf::Shared m_motion_pipeline; // with motion outputs only; shared the same way
};

} // namespace tandem::detail
