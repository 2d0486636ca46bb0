// Frame generation from colour alone, for programs that give Tandem no depth and no motion
// vectors (a layer that sees only presented frames).
//
// ColourMotionPass estimates the motion between two RGBA8 frames A (time 0) and B (time 1), both
// ways, in InterpolatePass's convention (post/interpolate.hpp: pixels, pointing back one frame;
// A's vector continues the A-to-B motion backwards), with a per-texel confidence 0..1:
// 1. luminance of both frames and a pyramid of 2x2 means (up to k_max_motion_levels levels, the
//    coarsest at least 32 texels on its short side);
// 2. block search, coarse to fine: per 8x8 block the whole-texel displacement of least mean
//    absolute difference, every one within 8 texels at the coarsest level, one texel around the
//    coarser level's vectors (the block's and its four neighbours', doubled) and zero at the
//    finer ones, so motion up to 8 * 2^(levels - 1) texels is found (a block that hardly
//    changes stays still unsearched). Above the finest level each block keeps a second
//    hypothesis beside its best (the best refined there to a fraction of a texel), so that a
//    repeating texture whose period matches a coarse level's whole texels better than its true step
//    does is still found at its step once a finer level can tell them apart;
// 3. per texel, the best of the nine nearest blocks' vectors over a 5x5 window (a block across an
//    edge splits along it) and a Lucas-Kanade step for the sub-texel part; the confidence falls
//    with the match's cost against the zero-motion cost and is 0 where moving gains less than
//    a luminance step of 0.02 (flat, still or unmatched regions). A periodic texture moved by
//    more than its period can match at the wrong period with full confidence.
// Its outputs: each frame's motion (RG16F) and a depth of 1 - confidence (R32F, so that where
// two texels land on one the better matched wins), sampled images left in
// SHADER_READ_ONLY_OPTIMAL visible to compute, and the confidences in a buffer (A's then B's).
//
// ColourInterpolatePass runs it, then InterpolatePass on those vectors and depths, then mixes
// the result with the blend (1 - t) A + t B by the largest confidence around each texel: where
// nothing was matched the output is the blend. Every step is deterministic: no atomics, each
// invocation a function of the inputs alone.
//
// record() follows post/post_pass.hpp (inputs readable by compute, output RGBA8 in GENERAL,
// written at k_post_output_stage). The passes own their buffers and images, sized for
// max_extent, and their barriers; one queue, one slot per command buffer in flight. Set-up
// throws tandem::Error; record() returns VK_ERROR_INITIALIZATION_FAILED for a size beyond the
// capacity, a slot it does not have, or parameters out of range.
#pragma once

#include <array>
#include <cstdint>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"
#include "post/compute_program.hpp"
#include "post/interpolate.hpp"

namespace tandem::detail {

inline constexpr std::uint32_t k_max_motion_levels = 5;

class ColourMotionPass {
public:
    ColourMotionPass(const Device& device, VkExtent2D max_extent, std::uint32_t slots = 1);

    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput a,
                                  SampledInput b, VkExtent2D extent) noexcept;

    // Frame 0 (A) or 1 (B) with `colour` and the motion and depth of the last record.
    [[nodiscard]] FrameInputs frame(std::uint32_t index, SampledInput colour) const noexcept;
    // What the last record wrote, A's texels then B's, rows of the record's width (for tests:
    // both can be copied from; written by compute, then read by compute and copies).
    [[nodiscard]] VkBuffer motion_buffer() const noexcept { return m_motion.get(); } // half2
    [[nodiscard]] VkBuffer confidence_buffer() const noexcept { return m_confidence.get(); }

private:
    const Device& m_device;
    VkExtent2D m_max_extent;
    Handle<VkSampler> m_sampler;
    Buffer m_luma;    // the pyramid, per level A's then B's
    Buffer m_vectors; // per level's 8x8 blocks, A's then B's, ivec2
    Buffer m_motion;
    Buffer m_depth;
    Buffer m_confidence;
    std::array<Image, 2> m_motion_images; // RG16F
    std::array<Image, 2> m_depth_images;  // R32F
    ComputeProgram m_luma_program;
    ComputeProgram m_down;
    ComputeProgram m_search;
    ComputeProgram m_refine;
};

class ColourInterpolatePass {
public:
    ColourInterpolatePass(const Device& device, VkExtent2D max_extent, std::uint32_t slots = 1);

    // InterpolateParams::t and fill_radius are used; the depths are the pass's own.
    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput a,
                                  SampledInput b, VkImageView output, VkExtent2D extent,
                                  const InterpolateParams& params) noexcept;

    [[nodiscard]] const ColourMotionPass& motion() const noexcept { return m_motion; }

private:
    const Device& m_device;
    ColourMotionPass m_motion;
    InterpolatePass m_interpolate;
    Image m_interpolated; // RGBA8, before the mix
    Handle<VkSampler> m_sampler;
    ComputeProgram m_mix;
};

} // namespace tandem::detail
