// UpscalePass: a spatial upscaler for RGBA8 (UNORM) images, any ratio (2x and others; meant for
// output >= input), in two compute dispatches:
// 1. Lanczos-3 interpolation into an RGBA16F intermediate the pass owns: the 6x6 input texels
//    around each output texel, weighted by the separable kernel (normalised per axis), clamped
//    to the central 2x2 texels' range so the sharp kernel does not ring (post_upscale.comp);
// 2. contrast-adaptive sharpening into the output: away from the 4-neighbour mean, less where
//    the contrast is already high, clamped to the neighbourhood's range (post_sharpen.comp).
// Pixel centres are aligned: output texel x samples input position (x + 0.5) * in / out - 0.5,
// as detail::bilinear_upscale does; edges repeat the border texels. Chosen by PSNR against the
// demo's frames rendered at the output size (640x360 -> 1280x720, 480x270 -> 960x540), beside
// bilinear: Lanczos-3 with the clamp (sharpened at 0.25) +0.7 to +0.8 dB, Catmull-Rom with it
// +0.5 to +0.6 dB, the edge-directed kernel used before -0.1 to -0.2 dB (-0.5 to -0.7 dB sharpened
// at 0.5, as it was); most of the gain is on magnified textures. On hard aliased edges alone it
// is level with bilinear.
// tests/post/test_upscale.cpp's scenes: 2.1 to 4.0 dB above bilinear on edges, 7.3 dB on a
// magnified texture.
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
    float sharpness = 0.25f; // 0: none; the sharpening step's strength, 0..2
    float adapt = 0.5f;      // 0..1: how much full contrast reduces the sharpening
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
