// BlurPass: a separable Gaussian blur of an RGBA8 (UNORM) image on the GPU, in two compute
// dispatches (horizontal into an RGBA32F intermediate the pass owns, then vertical into the
// output). Taps past the border repeat the edge texel; weights exp(-i^2 / 2 sigma^2) for
// |i| <= radius are normalised to sum to one (a constant image stays exactly constant).
//
// Contract of record() (shared by the post passes, see post/post_pass.hpp):
// - the input is readable by the compute stage in the layout it names (the caller's barrier);
// - the output is an RGBA8 UNORM storage image in GENERAL whose earlier uses are ordered before
//   COMPUTE_SHADER (the caller's barrier); the pass writes it with SHADER_STORAGE_WRITE in
//   COMPUTE_SHADER (k_post_output_stage/access) and the caller orders later reads after that;
// - the pass's own intermediates get their barriers from the pass; all records of one pass go to
//   one queue, and a slot is not recorded again while a command buffer using it is pending.
// Set-up throws tandem::Error; record() never throws and returns VK_ERROR_INITIALIZATION_FAILED
// for sizes outside the pass's capacity, a slot it does not have, or parameters out of range.
#pragma once

#include <cstdint>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"
#include "post/compute_program.hpp"

namespace tandem::detail {

struct BlurParams {
    std::uint32_t radius = 2; // taps each side, 0..k_max_blur_radius
    float sigma = 0.0f;       // <= 0: radius / 2 (radius 0: no blur)
};

inline constexpr std::uint32_t k_max_blur_radius = 64;

class BlurPass {
public:
    // Images up to `max_extent`; `slots` descriptor sets (one per command buffer in flight).
    BlurPass(const Device& device, VkExtent2D max_extent, std::uint32_t slots = 1);

    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput input,
                                  VkImageView output, VkExtent2D extent,
                                  const BlurParams& params) noexcept;

private:
    const Device& m_device;
    VkExtent2D m_max_extent;
    Handle<VkSampler> m_sampler;
    Image m_intermediate;
    ComputeProgram m_horizontal;
    ComputeProgram m_vertical;
};

} // namespace tandem::detail
