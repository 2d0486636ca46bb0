// TemporalUpscalePass: an upscaler for RGBA8 (UNORM) frames rendered with a sub-pixel jitter,
// that accumulates them along the engine's motion vectors (shaders/post_upscale_temporal.comp):
// each output texel keeps what it showed one frame before, found along the motion vectors, while
// the depth there still lies in the current frame's neighbourhood (a surface that was not
// uncovered) and, on a moving texel, clamped to the neighbourhood's colours; this frame's input
// sample nearest to the texel's centre enters with a weight that falls with its distance. A
// still surface rendered with a jitter cycle that visits every output texel's centre (at 2x: the
// four quarter-texel offsets) is the output-size render itself after one cycle.
//
// Inputs: colour (RGBA8), depth (R32F, smaller nearer, or reversed) and motion vectors (RG16F, in
// input texels, pointing back one frame), all at the input size. The pass owns its history (two
// RGBA32F images at the output size, one read and one written per record, in turn): records are
// meant to run in order on one queue, each after the previous one (a barrier at its start).
//
// record() follows the contract of post/post_pass.hpp. Set-up throws tandem::Error; record()
// returns VK_ERROR_INITIALIZATION_FAILED for sizes beyond the capacity, a slot it does not have,
// or parameters out of range.
#pragma once

#include <array>
#include <cstdint>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"
#include "post/compute_program.hpp"

namespace tandem::detail {

struct TemporalUpscaleParams {
    float jitter_x = 0.0f; // the frame's sample offset, input texels, -0.5..0.5
    float jitter_y = 0.0f;
    float sigma = 0.25f;           // the new sample's weight: Gaussian over output texels (> 0)
    float moving_blend = 0.5f;     // its least weight on a moving texel, 0..1
    float depth_tolerance = 1e-6f; // history kept within this of the neighbourhood's depths
    bool reset = false;            // forget the history (a cut)
};

struct TemporalInputs {
    SampledInput colour;
    SampledInput depth;
    SampledInput motion;
};

class TemporalUpscalePass {
public:
    TemporalUpscalePass(const Device& device, VkExtent2D max_input, VkExtent2D max_output,
                        std::uint32_t slots = 1);

    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot,
                                  const TemporalInputs& inputs, VkExtent2D input_extent,
                                  VkImageView output, VkExtent2D output_extent,
                                  const TemporalUpscaleParams& params) noexcept;

private:
    const Device& m_device;
    VkExtent2D m_max_input;
    VkExtent2D m_max_output;
    Handle<VkSampler> m_sampler;
    std::array<Image, 2> m_history;
    ComputeProgram m_program;
    std::uint32_t m_next = 0;          // the history image the next record writes
    bool m_has_history = false;        // a record wrote one
    VkExtent2D m_history_extent{0, 0}; // the output size it was written at
};

} // namespace tandem::detail
