#include "post/upscale.hpp"

#include <array>

#include "post/post_pass.hpp"
#include "shaders/embedded.hpp"

namespace tandem::detail {
namespace {

struct InterpolatePush {
    std::int32_t in_width;
    std::int32_t in_height;
    std::int32_t out_width;
    std::int32_t out_height;
};

struct SharpenPush {
    std::int32_t width;
    std::int32_t height;
    float amount;
    float adapt;
};

constexpr std::array<VkDescriptorType, 2> k_spatial_bindings{
    VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE};

Image create_interpolated(const Device& device, VkExtent2D extent) {
    ImageDesc desc;
    desc.width = extent.width;
    desc.height = extent.height;
    desc.format = VK_FORMAT_R16G16B16A16_SFLOAT;
    desc.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    desc.name = device.label() + " upscale interpolated";
    return create_image(device, desc);
}

bool valid(const UpscaleParams& p) noexcept {
    return p.sharpness >= 0.0f && p.sharpness <= 2.0f && p.adapt >= 0.0f && p.adapt <= 1.0f;
}

} // namespace

UpscalePass::UpscalePass(const Device& device, VkExtent2D max_input, VkExtent2D max_output,
                         std::uint32_t slots)
    : m_device(device), m_max_input(max_input), m_max_output(max_output),
      m_sampler(create_point_sampler(device, "upscale sampler")),
      m_interpolated(create_interpolated(device, max_output)),
      m_interpolate(device, shaders::post_upscale_comp(), k_spatial_bindings,
                    sizeof(InterpolatePush), slots, m_sampler.get(),
                    device.label() + " upscale interpolate"),
      m_sharpen(device, shaders::post_sharpen_comp(), k_spatial_bindings, sizeof(SharpenPush),
                slots, m_sampler.get(), device.label() + " upscale sharpen") {}

VkResult UpscalePass::record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput input,
                             VkExtent2D input_extent, VkImageView output, VkExtent2D output_extent,
                             const UpscaleParams& params) noexcept {
    if (!fits(input_extent, m_max_input) || !fits(output_extent, m_max_output) || !valid(params)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const VkImageView interpolated = m_interpolated.view.get();
    const std::array<ProgramResource, 2> first{ProgramResource::sampled(input),
                                               ProgramResource::storage_image(interpolated)};
    const std::array<ProgramResource, 2> second{
        ProgramResource::sampled({interpolated, VK_IMAGE_LAYOUT_GENERAL}),
        ProgramResource::storage_image(output)};
    if (!m_interpolate.bind(slot, first) || !m_sharpen.bind(slot, second)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const auto ow = static_cast<std::int32_t>(output_extent.width);
    const auto oh = static_cast<std::int32_t>(output_extent.height);
    const InterpolatePush interpolate_push{static_cast<std::int32_t>(input_extent.width),
                                           static_cast<std::int32_t>(input_extent.height), ow, oh};
    const SharpenPush sharpen_push{ow, oh, params.sharpness, params.adapt};
    const std::uint32_t gx = post_groups(output_extent.width);
    const std::uint32_t gy = post_groups(output_extent.height);
    m_device.begin_label(cmd, "post upscale");
    begin_intermediate(cmd, m_interpolated.get());
    m_interpolate.dispatch(cmd, slot, &interpolate_push, sizeof(interpolate_push), gx, gy);
    intermediate_written(cmd, m_interpolated.get());
    m_sharpen.dispatch(cmd, slot, &sharpen_push, sizeof(sharpen_push), gx, gy);
    m_device.end_label(cmd);
    return VK_SUCCESS;
}

} // namespace tandem::detail
