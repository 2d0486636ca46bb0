#include "post/interpolate.hpp"

#include <array>
#include <cmath>

#include "post/post_pass.hpp"
#include "shaders/embedded.hpp"

namespace tandem::detail {
namespace {

struct SplatPush {
    std::int32_t width;
    std::int32_t height;
    float t;
    std::uint32_t phase;
    std::uint32_t reversed_depth;
};

struct ResolvePush {
    std::int32_t width;
    std::int32_t height;
    float t;
};

struct FillPush {
    std::int32_t width;
    std::int32_t height;
    float t;
    float tolerance;
    std::int32_t radius;
};

constexpr std::array<VkDescriptorType, 6> k_splat_bindings{
    k_sampled, k_sampled, k_sampled, k_sampled, k_storage_buffer, k_storage_buffer};
constexpr std::array<VkDescriptorType, 8> k_resolve_bindings{
    k_sampled,       k_sampled,        k_storage_buffer, k_storage_buffer,
    k_storage_image, k_storage_buffer, k_sampled,        k_sampled};
constexpr std::array<VkDescriptorType, 5> k_fill_bindings{k_storage_image, k_storage_buffer,
                                                          k_sampled, k_sampled, k_storage_image};

Buffer create_texel_buffer(const Device& device, VkExtent2D extent, std::uint32_t frames,
                           const std::string& name) {
    BufferDesc desc;
    desc.size = VkDeviceSize{extent.width} * extent.height * frames * sizeof(std::uint32_t);
    desc.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    desc.preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    desc.name = device.label() + " " + name;
    return create_buffer(device, desc);
}

Image create_resolved_image(const Device& device, VkExtent2D extent) {
    ImageDesc desc;
    desc.width = extent.width;
    desc.height = extent.height;
    desc.format = VK_FORMAT_R16G16B16A16_SFLOAT;
    desc.usage = VK_IMAGE_USAGE_STORAGE_BIT;
    desc.name = device.label() + " interpolate resolved";
    return create_image(device, desc);
}

} // namespace

InterpolatePass::InterpolatePass(const Device& device, VkExtent2D max_extent, std::uint32_t slots)
    : m_device(device), m_max_extent(max_extent),
      m_sampler(create_point_sampler(device, "interpolate sampler")),
      m_depths(create_texel_buffer(device, max_extent, 2, "interpolate depths")),
      m_sources(create_texel_buffer(device, max_extent, 2, "interpolate sources")),
      m_resolved_depth(create_texel_buffer(device, max_extent, 1, "interpolate resolved depth")),
      m_resolved(create_resolved_image(device, max_extent)),
      m_splat(device, shaders::post_interp_splat_comp(), k_splat_bindings, sizeof(SplatPush), slots,
              m_sampler.get(), device.label() + " interpolate splat"),
      m_resolve(device, shaders::post_interp_resolve_comp(), k_resolve_bindings,
                sizeof(ResolvePush), slots, m_sampler.get(),
                device.label() + " interpolate resolve"),
      m_fill(device, shaders::post_interp_fill_comp(), k_fill_bindings, sizeof(FillPush), slots,
             m_sampler.get(), device.label() + " interpolate fill") {}

VkResult InterpolatePass::record(VkCommandBuffer cmd, std::uint32_t slot, const FrameInputs& a,
                                 const FrameInputs& b, VkImageView output, VkExtent2D extent,
                                 const InterpolateParams& params) noexcept {
    if (!fits(extent, m_max_extent) || !(params.t >= 0.0f && params.t <= 1.0f) ||
        !(params.depth_tolerance >= 0.0f) || params.fill_radius > k_max_fill_radius) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const VkImageView resolved = m_resolved.view.get();
    const std::array<ProgramResource, 6> splat{ProgramResource::sampled(a.depth),
                                               ProgramResource::sampled(a.motion),
                                               ProgramResource::sampled(b.depth),
                                               ProgramResource::sampled(b.motion),
                                               ProgramResource::storage_buffer(m_depths.get()),
                                               ProgramResource::storage_buffer(m_sources.get())};
    const std::array<ProgramResource, 8> resolve{
        ProgramResource::sampled(a.color),
        ProgramResource::sampled(b.color),
        ProgramResource::storage_buffer(m_depths.get()),
        ProgramResource::storage_buffer(m_sources.get()),
        ProgramResource::storage_image(resolved),
        ProgramResource::storage_buffer(m_resolved_depth.get()),
        ProgramResource::sampled(a.motion),
        ProgramResource::sampled(b.motion)};
    const std::array<ProgramResource, 5> fill{
        ProgramResource::storage_image(resolved),
        ProgramResource::storage_buffer(m_resolved_depth.get()), ProgramResource::sampled(a.color),
        ProgramResource::sampled(b.color), ProgramResource::storage_image(output)};
    if (!m_splat.bind(slot, splat) || !m_resolve.bind(slot, resolve) || !m_fill.bind(slot, fill)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }

    const auto w = static_cast<std::int32_t>(extent.width);
    const auto h = static_cast<std::int32_t>(extent.height);
    const std::uint32_t gx = post_groups(extent.width);
    const std::uint32_t gy = post_groups(extent.height);
    const VkDeviceSize splat_bytes = VkDeviceSize{extent.width} * extent.height * 2 * 4;

    m_device.begin_label(cmd, "post interpolate");
    // The previous record's dispatches are done with the buffers before they are cleared or
    // written again (write-after-read needs the execution dependency, after-write the access).
    memory_barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                   VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                   VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    vkCmdFillBuffer(cmd, m_depths.get(), 0, splat_bytes, 0xffffffffu);
    vkCmdFillBuffer(cmd, m_sources.get(), 0, splat_bytes, 0xffffffffu);
    memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                   VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    begin_intermediate(cmd, m_resolved.get());

    SplatPush splat_push{w, h, params.t, 0, params.reversed_depth ? 1u : 0u};
    m_splat.dispatch(cmd, slot, &splat_push, sizeof(splat_push), gx, gy, 2);
    compute_to_compute(cmd);
    splat_push.phase = 1;
    m_splat.dispatch(cmd, slot, &splat_push, sizeof(splat_push), gx, gy, 2);
    compute_to_compute(cmd);

    const ResolvePush resolve_push{w, h, params.t};
    m_resolve.dispatch(cmd, slot, &resolve_push, sizeof(resolve_push), gx, gy);
    compute_to_compute(cmd);

    const FillPush fill_push{w, h, params.t, params.depth_tolerance,
                             static_cast<std::int32_t>(params.fill_radius)};
    m_fill.dispatch(cmd, slot, &fill_push, sizeof(fill_push), gx, gy);
    m_device.end_label(cmd);
    return VK_SUCCESS;
}

} // namespace tandem::detail
