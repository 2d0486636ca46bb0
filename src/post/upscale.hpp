// UpscalePass: a spatial upscaler for RGBA8 (UNORM) images, any ratio (2x and others; meant for
// output >= input), in two compute dispatches:
// 1. edge-directed interpolation into an RGBA16F intermediate the pass owns: per output texel,
//    the 4x4 input neighbourhood's luma structure tensor gives the local edge direction; along
//    a clear edge the texels are weighted by an anisotropic Gaussian (narrow across the edge,
//    wide along it), elsewhere by Catmull-Rom bicubic, blended by the edge's coherence, its
//    strength and how step-like it is (a steep smooth ramp stays bicubic: the narrow kernel would
//    stair-step it), and clamped to the central 2x2 texels' range (shaders/post_upscale.comp);
// 2. contrast-adaptive sharpening into the output: away from the 4-neighbour mean, less where
//    the contrast is already high, clamped to the neighbourhood's range (post_sharpen.comp).
// Pixel centres are aligned: output texel x samples input position (x + 0.5) * in / out - 0.5,
// as detail::bilinear_upscale does; edges repeat the border texels. The defaults were chosen on
// tests/post/test_upscale.cpp's scenes (against renders at the output size; 2.1 to 4.9 dB
// above bilinear on edges, 4.2 dB on steep smooth ramps).
//
// record() follows the contract of post/post_pass.hpp. Set-up throws tandem::Error; record()
// returns VK_ERROR_INITIALIZATION_FAILED for sizes beyond the capacity, a slot it does not have,
// or parameters out of range.
#pragma once

#include <cstdint>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"
#include "post/compute_program.hpp"

namespace tandem::detail {

struct UpscaleParams {
    float sharpness = 0.5f;  // 0: none; the sharpening step's strength, 0..2
    float adapt = 0.5f;      // 0..1: how much full contrast reduces the sharpening
    float edge_low = 0.01f;  // luma gradient per input texel where edges start to count
    float edge_high = 0.05f; // and where they count fully
    float across = 0.2f;     // kernel sigma across an edge, input texels (> 0)
    float along = 0.9f;      // and along it (> 0)
};

class UpscalePass {
public:
    // Inputs up to `max_input`, outputs up to `max_output`.
    UpscalePass(const Device& device, VkExtent2D max_input, VkExtent2D max_output,
                std::uint32_t slots = 1);

    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput input,
                                  VkExtent2D input_extent, VkImageView output,
                                  VkExtent2D output_extent, const UpscaleParams& params) noexcept;

private:
    const Device& m_device;
    VkExtent2D m_max_input;
    VkExtent2D m_max_output;
    Handle<VkSampler> m_sampler;
    Image m_interpolated;
    ComputeProgram m_interpolate;
    ComputeProgram m_sharpen;
};

} // namespace tandem::detail
