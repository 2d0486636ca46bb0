#include "post/colour_motion.hpp"

#include <algorithm>
#include <string>

#include "post/post_pass.hpp"
#include "shaders/embedded.hpp"

namespace tandem::detail {
namespace {

constexpr std::uint32_t k_block = 8;
constexpr std::uint32_t k_min_coarsest = 32; // texels on the coarsest level's short side
constexpr std::int32_t k_coarsest_radius = 8;

struct LumaPush {
    std::int32_t width;
    std::int32_t height;
};

struct DownPush {
    std::int32_t width;
    std::int32_t height;
    std::int32_t down_width;
    std::int32_t down_height;
    std::int32_t base;
    std::int32_t down_base;
};

struct SearchPush {
    std::int32_t width;
    std::int32_t height;
    std::int32_t blocks_x;
    std::int32_t blocks_y;
    std::int32_t coarse_blocks_x;
    std::int32_t coarse_blocks_y;
    std::int32_t base;
    std::int32_t vector_base;
    std::int32_t coarse_vector_base;
    std::int32_t radius;
    std::int32_t sub_texel;
};

struct RefinePush {
    std::int32_t width;
    std::int32_t height;
    std::int32_t blocks_x;
    std::int32_t blocks_y;
};

struct MixPush {
    std::int32_t width;
    std::int32_t height;
    float t;
};

constexpr std::array<VkDescriptorType, 3> k_luma_bindings{k_sampled, k_sampled, k_storage_buffer};
constexpr std::array<VkDescriptorType, 2> k_down_bindings{k_storage_buffer, k_storage_buffer};
constexpr std::array<VkDescriptorType, 2> k_search_bindings{k_storage_buffer, k_storage_buffer};
constexpr std::array<VkDescriptorType, 5> k_refine_bindings{
    k_storage_buffer, k_storage_buffer, k_storage_buffer, k_storage_buffer, k_storage_buffer};
constexpr std::array<VkDescriptorType, 5> k_mix_bindings{k_sampled, k_sampled, k_storage_image,
                                                         k_storage_buffer, k_storage_image};

// One pyramid level: its size, its 8x8 blocks, and where its luminances and vectors start
// (in floats and in vectors; each frame's follow one another).
struct Level {
    VkExtent2D size;
    VkExtent2D blocks;
    std::uint32_t luma_base;
    std::uint32_t vector_base;
};

struct Pyramid {
    std::array<Level, k_max_motion_levels> levels{};
    std::uint32_t count = 0;
    std::uint32_t luma_floats = 0;
    std::uint32_t vectors = 0;
};

// The levels for `extent`; `all`: every level up to the maximum (the buffers' capacity, which
// bounds every smaller extent's).
Pyramid pyramid(VkExtent2D extent, bool all) {
    Pyramid p;
    VkExtent2D size = extent;
    while (p.count < k_max_motion_levels) {
        const VkExtent2D blocks{(size.width + k_block - 1) / k_block,
                                (size.height + k_block - 1) / k_block};
        p.levels[p.count] = {size, blocks, p.luma_floats, p.vectors};
        p.luma_floats += 2 * size.width * size.height;
        p.vectors += 2 * blocks.width * blocks.height;
        ++p.count;
        const VkExtent2D next{(size.width + 1) / 2, (size.height + 1) / 2};
        if (!all && std::min(next.width, next.height) < k_min_coarsest) {
            break;
        }
        size = next;
    }
    return p;
}

Buffer create_storage_buffer(const Device& device, VkDeviceSize size, const std::string& name) {
    BufferDesc desc;
    desc.size = size;
    desc.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    desc.preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    desc.name = device.label() + " " + name;
    return create_buffer(device, desc);
}

Image create_field_image(const Device& device, VkExtent2D extent, VkFormat format,
                         const std::string& name) {
    ImageDesc desc;
    desc.width = extent.width;
    desc.height = extent.height;
    desc.format = format;
    desc.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    desc.name = device.label() + " " + name;
    return create_image(device, desc);
}

std::int32_t as_int(std::uint32_t v) noexcept {
    return static_cast<std::int32_t>(v);
}

} // namespace

ColourMotionPass::ColourMotionPass(const Device& device, VkExtent2D max_extent, std::uint32_t slots)
    : m_device(device), m_max_extent(max_extent),
      m_sampler(create_point_sampler(device, "colour motion sampler")),
      m_luma(create_storage_buffer(device, VkDeviceSize{pyramid(max_extent, true).luma_floats} * 4,
                                   "colour motion luminance")),
      m_vectors(create_storage_buffer(device, VkDeviceSize{pyramid(max_extent, true).vectors} * 16,
                                      "colour motion block vectors")),
      m_motion(create_storage_buffer(
          device, VkDeviceSize{max_extent.width} * max_extent.height * 2 * 4, "colour motion")),
      m_depth(create_storage_buffer(device,
                                    VkDeviceSize{max_extent.width} * max_extent.height * 2 * 4,
                                    "colour motion depth")),
      m_confidence(create_storage_buffer(device,
                                         VkDeviceSize{max_extent.width} * max_extent.height * 2 * 4,
                                         "colour motion confidence")),
      m_motion_images{
          create_field_image(device, max_extent, VK_FORMAT_R16G16_SFLOAT, "colour motion A"),
          create_field_image(device, max_extent, VK_FORMAT_R16G16_SFLOAT, "colour motion B")},
      m_depth_images{
          create_field_image(device, max_extent, VK_FORMAT_R32_SFLOAT, "colour motion depth A"),
          create_field_image(device, max_extent, VK_FORMAT_R32_SFLOAT, "colour motion depth B")},
      m_luma_program(device, shaders::post_motion_luma_comp(), k_luma_bindings, sizeof(LumaPush),
                     slots, m_sampler.get(), device.label() + " colour motion luminance"),
      m_down(device, shaders::post_motion_down_comp(), k_down_bindings, sizeof(DownPush), slots,
             m_sampler.get(), device.label() + " colour motion pyramid"),
      m_search(device, shaders::post_motion_search_comp(), k_search_bindings, sizeof(SearchPush),
               slots, m_sampler.get(), device.label() + " colour motion search"),
      m_refine(device, shaders::post_motion_refine_comp(), k_refine_bindings, sizeof(RefinePush),
               slots, m_sampler.get(), device.label() + " colour motion refine") {}

FrameInputs ColourMotionPass::frame(std::uint32_t index, SampledInput colour) const noexcept {
    const VkImageLayout read = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    return {colour,
            {m_depth_images[index].view.get(), read},
            {m_motion_images[index].view.get(), read}};
}

VkResult ColourMotionPass::record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput a,
                                  SampledInput b, VkExtent2D extent) noexcept {
    if (!fits(extent, m_max_extent)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const std::array<ProgramResource, 3> luma{ProgramResource::sampled(a),
                                              ProgramResource::sampled(b),
                                              ProgramResource::storage_buffer(m_luma.get())};
    const std::array<ProgramResource, 2> down{ProgramResource::storage_buffer(m_luma.get()),
                                              ProgramResource::storage_buffer(m_luma.get())};
    const std::array<ProgramResource, 2> search{ProgramResource::storage_buffer(m_luma.get()),
                                                ProgramResource::storage_buffer(m_vectors.get())};
    const std::array<ProgramResource, 5> refine{
        ProgramResource::storage_buffer(m_luma.get()),
        ProgramResource::storage_buffer(m_vectors.get()),
        ProgramResource::storage_buffer(m_motion.get()),
        ProgramResource::storage_buffer(m_depth.get()),
        ProgramResource::storage_buffer(m_confidence.get())};
    if (!m_luma_program.bind(slot, luma) || !m_down.bind(slot, down) ||
        !m_search.bind(slot, search) || !m_refine.bind(slot, refine)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const Pyramid levels = pyramid(extent, false);

    m_device.begin_label(cmd, "post colour motion");
    // The previous record's dispatches and copies are done with the buffers and images before
    // they are written again.
    constexpr VkPipelineStageFlags2 k_compute_and_copy =
        VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT;
    memory_barrier(cmd, k_compute_and_copy, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                   k_compute_and_copy,
                   VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);

    const LumaPush luma_push{as_int(extent.width), as_int(extent.height)};
    m_luma_program.dispatch(cmd, slot, &luma_push, sizeof luma_push, post_groups(extent.width),
                            post_groups(extent.height), 2);
    compute_to_compute(cmd);
    for (std::uint32_t l = 1; l < levels.count; ++l) {
        const Level& from = levels.levels[l - 1];
        const Level& to = levels.levels[l];
        const DownPush push{as_int(from.size.width), as_int(from.size.height),
                            as_int(to.size.width),   as_int(to.size.height),
                            as_int(from.luma_base),  as_int(to.luma_base)};
        m_down.dispatch(cmd, slot, &push, sizeof push, post_groups(to.size.width),
                        post_groups(to.size.height), 2);
        compute_to_compute(cmd);
    }
    for (std::uint32_t l = levels.count; l-- > 0;) {
        const Level& at = levels.levels[l];
        const bool coarsest = l + 1 == levels.count;
        const Level& coarse = levels.levels[coarsest ? l : l + 1];
        const SearchPush push{as_int(at.size.width),
                              as_int(at.size.height),
                              as_int(at.blocks.width),
                              as_int(at.blocks.height),
                              coarsest ? 0 : as_int(coarse.blocks.width),
                              coarsest ? 0 : as_int(coarse.blocks.height),
                              as_int(at.luma_base),
                              as_int(at.vector_base),
                              as_int(coarse.vector_base),
                              coarsest ? k_coarsest_radius : 1,
                              l > 0 ? 1 : 0};
        m_search.dispatch(cmd, slot, &push, sizeof push, post_groups(at.blocks.width),
                          post_groups(at.blocks.height), 2);
        compute_to_compute(cmd);
    }
    const Level& full = levels.levels[0];
    const RefinePush refine_push{as_int(extent.width), as_int(extent.height),
                                 as_int(full.blocks.width), as_int(full.blocks.height)};
    m_refine.dispatch(cmd, slot, &refine_push, sizeof refine_push, post_groups(extent.width),
                      post_groups(extent.height), 2);
    memory_barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                   VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, k_compute_and_copy,
                   VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT);

    // The fields into the images the interpolation samples.
    const VkDeviceSize frame_bytes = VkDeviceSize{extent.width} * extent.height * 4;
    for (std::uint32_t f = 0; f < 2; ++f) {
        for (const auto& [buffer, image] : {std::pair{m_motion.get(), m_motion_images[f].get()},
                                            std::pair{m_depth.get(), m_depth_images[f].get()}}) {
            image_barrier(cmd, image, VK_IMAGE_LAYOUT_UNDEFINED,
                          VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE,
                          VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            VkBufferImageCopy region{};
            region.bufferOffset = f * frame_bytes;
            region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
            region.imageExtent = {extent.width, extent.height, 1};
            vkCmdCopyBufferToImage(cmd, buffer, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                                   &region);
            image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                          VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
        }
    }
    m_device.end_label(cmd);
    return VK_SUCCESS;
}

ColourInterpolatePass::ColourInterpolatePass(const Device& device, VkExtent2D max_extent,
                                             std::uint32_t slots)
    : m_device(device), m_motion(device, max_extent, slots),
      m_interpolate(device, max_extent, slots), m_interpolated([&] {
          ImageDesc desc;
          desc.width = max_extent.width;
          desc.height = max_extent.height;
          desc.usage = VK_IMAGE_USAGE_STORAGE_BIT;
          desc.name = device.label() + " colour interpolate before the mix";
          return create_image(device, desc);
      }()),
      m_sampler(create_point_sampler(device, "colour interpolate sampler")),
      m_mix(device, shaders::post_motion_mix_comp(), k_mix_bindings, sizeof(MixPush), slots,
            m_sampler.get(), device.label() + " colour interpolate mix") {}

VkResult ColourInterpolatePass::record(VkCommandBuffer cmd, std::uint32_t slot, SampledInput a,
                                       SampledInput b, VkImageView output, VkExtent2D extent,
                                       const InterpolateParams& params) noexcept {
    if (!(params.t >= 0.0f && params.t <= 1.0f) || params.fill_radius > k_max_fill_radius) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    const std::array<ProgramResource, 5> mix{
        ProgramResource::sampled(a), ProgramResource::sampled(b),
        ProgramResource::storage_image(m_interpolated.view.get()),
        ProgramResource::storage_buffer(m_motion.confidence_buffer()),
        ProgramResource::storage_image(output)};
    if (!m_mix.bind(slot, mix)) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    if (const VkResult r = m_motion.record(cmd, slot, a, b, extent); r != VK_SUCCESS) {
        return r;
    }
    // The depths are 1 - confidence, all in 0..1: a hole is filled from every resolved texel
    // around it, not from the least confident alone.
    InterpolateParams p;
    p.t = params.t;
    p.fill_radius = params.fill_radius;
    p.depth_tolerance = 1.0f;
    p.reversed_depth = false;
    begin_intermediate(cmd, m_interpolated.get());
    if (const VkResult r =
            m_interpolate.record(cmd, slot, m_motion.frame(0, a), m_motion.frame(1, b),
                                 m_interpolated.view.get(), extent, p);
        r != VK_SUCCESS) {
        return r;
    }
    compute_to_compute(cmd);
    m_device.begin_label(cmd, "post colour interpolate mix");
    const MixPush push{as_int(extent.width), as_int(extent.height), params.t};
    m_mix.dispatch(cmd, slot, &push, sizeof push, post_groups(extent.width),
                   post_groups(extent.height));
    m_device.end_label(cmd);
    return VK_SUCCESS;
}

} // namespace tandem::detail
