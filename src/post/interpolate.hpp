// InterpolatePass: frame generation. From two rendered frames A (time 0) and B (time 1), each
// with colour, depth and motion vectors, it makes the frame at time t (0.5: the middle).
//
// Conventions:
// - colour: RGBA8 UNORM. Depth: R32_SFLOAT in 0..1, smaller is nearer (Vulkan's default; set
//   InterpolateParams::reversed_depth for reversed Z, where larger is nearer).
// - motion: R16G16_SFLOAT or R32G32_SFLOAT, in pixels, pointing back one frame: mv_X(p) is where
//   the surface seen at texel p of frame X was in the frame before X, minus p. So mv_B(p) + p is
//   its position in A, and mv_A(p) is A's own vector towards the frame before A.
// - all six images and the output have the same size.
//
// Method, deterministic (no result depends on the order GPU invocations run in):
// 1. splat: each texel of B moves to p + (1 - t) mv_B(p) (back towards A), each texel of A to
//    p - t mv_A(p) (constant motion continued), rounded to the nearest texel; per target texel
//    and frame the nearest depth wins (32-bit atomicMin on the depth's bits, then on the source
//    index among equal depths).
// 2. resolve: each frame's winner is read bilinearly where its surface was at the target's
//    centre (a sub-texel position: the colour is not rounded with the splat). Where both frames
//    landed, (1 - t) A + t B whatever the depths: with linear motion a disagreement is the
//    rounding at a silhouette, where the blend halves the wrong pick's error; where one did,
//    that one.
// 3. fill: a texel neither frame reached (disoccluded in both, or a crack between splats) takes
//    the distance-weighted mean of the farthest resolved texels within fill_radius: uncovered
//    surface is background, not the object that moved off it. Nothing within reach: blend.
//
// record() follows the contract of post/post_pass.hpp (inputs readable by the compute stage,
// output RGBA8 in GENERAL, written at k_post_output_stage). The pass owns its splat buffers and
// resolve images (sized for max_extent) and their barriers; one queue, one slot per command
// buffer in flight. Set-up throws tandem::Error; record() returns VK_ERROR_INITIALIZATION_FAILED
// for a size beyond the capacity, a slot it does not have, or parameters out of range.
#pragma once

#include <cstdint>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"
#include "post/compute_program.hpp"

namespace tandem::detail {

// One rendered frame's inputs.
struct FrameInputs {
    SampledInput color;
    SampledInput depth;
    SampledInput motion;
};

struct InterpolateParams {
    float t = 0.5f;                // 0: A, 1: B
    float depth_tolerance = 0.01f; // holes' background: within this of the farthest depth
    std::uint32_t fill_radius = 4; // holes look this far for background (0..k_max_fill_radius)
    bool reversed_depth = false;   // depth 1 is nearest
};

inline constexpr std::uint32_t k_max_fill_radius = 16;

class InterpolatePass {
public:
    InterpolatePass(const Device& device, VkExtent2D max_extent, std::uint32_t slots = 1);

    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot, const FrameInputs& a,
                                  const FrameInputs& b, VkImageView output, VkExtent2D extent,
                                  const InterpolateParams& params) noexcept;

private:
    const Device& m_device;
    VkExtent2D m_max_extent;
    Handle<VkSampler> m_sampler;
    Buffer m_depths;         // nearest depth bits per target texel, A's then B's
    Buffer m_sources;        // source texel index at that depth, A's then B's
    Buffer m_resolved_depth; // per output texel, -1 for a hole
    Image m_resolved;        // RGBA16F
    ComputeProgram m_splat;
    ComputeProgram m_resolve;
    ComputeProgram m_fill;
};

} // namespace tandem::detail
