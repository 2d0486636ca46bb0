#include "post/blur.hpp"

#include <array>

#include "post/post_pass.hpp"
#include "shaders/embedded.hpp"

namespace tandem::detail {
namespace {

struct BlurPush {
    std::int32_t width;
    std::int32_t height;
    std::int32_t axis_x;
    std::int32_t axis_y;
    std::int32_t radius;
    float sigma;
};

constexpr std::array<VkDescriptorType, 2> k_blur_bindings{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                                                          VK_DESCRIPTOR_TYPE_STORAGE_IMAGE};

Image create_blur_intermediate(const Device& device, VkExtent2D extent) {
    ImageDesc desc;
    desc.width = extent.width;
    desc.height = extent.height;
    desc.format = VK_FORMAT_R32G32B32A32_SFLOAT;
    desc.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    desc.name = device.label() + " blur intermediate";
    return create_image(device, desc);
}

} // namespace

BlurPass::BlurPass(const Device& device, VkExtent2D max_extent, std::uint32_t slots)
    : m_device(device), m_max_extent(max_extent),
      m_sampler(create_point_sampler(device, "blur sampler")),
      m_intermediate(create_blur_intermediate(device, max_extent)),
      m_horizontal(device, shaders::post_blur_h_comp(), k_blur_bindings, sizeof(BlurPush), slots,
                   m_sampler.get(), device.label() + " blur horizontal"),
      m_vertical(device, shaders::post_blur_v_comp(), k_blur_bindings, sizeof(BlurPush), slots,
                 m_sampler.get(), device.label() + " blur vertical") {}

VkResult BlurPass::record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput input,
                          VkImageView output, VkExtent2D extent,
                          const BlurParams& params) noexcept {
    if (!fits(extent, m_max_extent) || params.radius > k_max_blur_radius) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const std::array<ProgramResource, 2> first{
        ProgramResource::sampled(input), ProgramResource::storage_image(m_intermediate.view.get())};
    const std::array<ProgramResource, 2> second{
        ProgramResource::sampled({m_intermediate.view.get(), VK_IMAGE_LAYOUT_GENERAL}),
        ProgramResource::storage_image(output)};
    if (!m_horizontal.bind(slot, first) || !m_vertical.bind(slot, second)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const float sigma = params.sigma > 0.0f ? params.sigma
                        : params.radius > 0 ? static_cast<float>(params.radius) / 2.0f
                                            : 1.0f;
    BlurPush push{static_cast<std::int32_t>(extent.width),
                  static_cast<std::int32_t>(extent.height),
                  1,
                  0,
                  static_cast<std::int32_t>(params.radius),
                  sigma};
    const std::uint32_t gx = post_groups(extent.width);
    const std::uint32_t gy = post_groups(extent.height);
    m_device.begin_label(cmd, "post blur");
    begin_intermediate(cmd, m_intermediate.get());
    m_horizontal.dispatch(cmd, slot, &push, sizeof(push), gx, gy);
    intermediate_written(cmd, m_intermediate.get());
    push.axis_x = 0;
    push.axis_y = 1;
    m_vertical.dispatch(cmd, slot, &push, sizeof(push), gx, gy);
    m_device.end_label(cmd);
    return VK_SUCCESS;
}

} // namespace tandem::detail
