#include "post/temporal_upscale.hpp"

#include <cmath>

#include "post/post_pass.hpp"
#include "shaders/embedded.hpp"

namespace tandem::detail {
namespace {

struct Push {
    std::int32_t in_width;
    std::int32_t in_height;
    std::int32_t out_width;
    std::int32_t out_height;
    float jitter_x;
    float jitter_y;
    float sigma;
    float moving_blend;
    float depth_tolerance;
    std::int32_t has_history;
};

constexpr std::array<VkDescriptorType, 6> k_temporal_bindings{
    VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
    VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
    VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,          VK_DESCRIPTOR_TYPE_STORAGE_IMAGE};

Image create_history(const Device& device, VkExtent2D extent, int index) {
    ImageDesc desc;
    desc.width = extent.width;
    desc.height = extent.height;
    desc.format = VK_FORMAT_R32G32B32A32_SFLOAT; // depth needs a float's precision
    desc.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    desc.name = device.label() + " temporal upscale history " + std::to_string(index);
    return create_image(device, desc);
}

bool valid(const TemporalUpscaleParams& p) noexcept {
    return std::abs(p.jitter_x) <= 0.5f && std::abs(p.jitter_y) <= 0.5f && p.sigma > 0.0f &&
           p.moving_blend >= 0.0f && p.moving_blend <= 1.0f && p.depth_tolerance >= 0.0f;
}

} // namespace

TemporalUpscalePass::TemporalUpscalePass(const Device& device, VkExtent2D max_input,
                                         VkExtent2D max_output, std::uint32_t slots)
    : m_device(device), m_max_input(max_input), m_max_output(max_output),
      m_sampler(create_point_sampler(device, "temporal upscale sampler")),
      m_history{create_history(device, max_output, 0), create_history(device, max_output, 1)},
      m_program(device, shaders::post_upscale_temporal_comp(), k_temporal_bindings, sizeof(Push),
                slots, m_sampler.get(), device.label() + " temporal upscale") {}

VkResult TemporalUpscalePass::record(VkCommandBuffer cmd, std::uint32_t slot,
                                     const TemporalInputs& inputs, VkExtent2D input_extent,
                                     VkImageView output, VkExtent2D output_extent,
                                     const TemporalUpscaleParams& params) noexcept {
    if (!fits(input_extent, m_max_input) || !fits(output_extent, m_max_output) || !valid(params)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const bool has_history = m_has_history && !params.reset &&
                             output_extent.width == m_history_extent.width &&
                             output_extent.height == m_history_extent.height;
    const Image& read = m_history[1 - m_next];
    const Image& written = m_history[m_next];
    const std::array<ProgramResource, 6> resources{
        ProgramResource::sampled(inputs.colour),
        ProgramResource::sampled(inputs.depth),
        ProgramResource::sampled(inputs.motion),
        ProgramResource::sampled({read.view.get(), VK_IMAGE_LAYOUT_GENERAL}),
        ProgramResource::storage_image(output),
        ProgramResource::storage_image(written.view.get())};
    if (!m_program.bind(slot, resources)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const Push push{static_cast<std::int32_t>(input_extent.width),
                    static_cast<std::int32_t>(input_extent.height),
                    static_cast<std::int32_t>(output_extent.width),
                    static_cast<std::int32_t>(output_extent.height),
                    params.jitter_x,
                    params.jitter_y,
                    params.sigma,
                    params.moving_blend,
                    params.depth_tolerance,
                    has_history ? 1 : 0};
    m_device.begin_label(cmd, "post temporal upscale");
    // The history the last record wrote, before this one reads it (compute to compute on one
    // queue); with none, its contents are not read, but its layout must be GENERAL.
    if (has_history) {
        memory_barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                       VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                       VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
    } else {
        image_barrier(cmd, read.get(), VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
    }
    begin_intermediate(cmd, written.get()); // the record before last read it
    m_program.dispatch(cmd, slot, &push, sizeof(push), post_groups(output_extent.width),
                       post_groups(output_extent.height));
    m_device.end_label(cmd);
    m_next = 1 - m_next;
    m_has_history = true;
    m_history_extent = output_extent;
    return VK_SUCCESS;
}

} // namespace tandem::detail
