#include "workloads/pattern.hpp"

#include <cstring>

#include "core/mix_hash.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "shaders/embedded.hpp"
#include "tandem/error.hpp"
#include "tandem/pattern.hpp"

namespace tandem::detail {
namespace {

struct PatternPush {
    std::uint32_t generation;
    std::uint32_t width;
    std::uint32_t height;
};

} // namespace

std::uint32_t pattern_texel(std::uint64_t generation, std::uint32_t x, std::uint32_t y,
                            std::uint32_t width) noexcept {
    const std::uint32_t g = pattern_generation(generation);
    const std::uint32_t h = mix32(x + y * width + g * 0x9e3779b9u);
    const std::uint32_t r = (x + g) & 255u;
    const std::uint32_t gr = (y + 2u * g) & 255u;
    const std::uint32_t b = h & 255u;
    return r | (gr << 8) | (b << 16) | (255u << 24); // little-endian RGBA8 bytes
}

std::vector<std::uint8_t> pattern_reference(std::uint64_t generation, std::uint32_t width,
                                            std::uint32_t height) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(width) * height * 4);
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            const std::uint32_t t = pattern_texel(generation, x, y, width);
            std::uint8_t* p = out.data() + (static_cast<std::size_t>(y) * width + x) * 4;
            p[0] = static_cast<std::uint8_t>(t);
            p[1] = static_cast<std::uint8_t>(t >> 8);
            p[2] = static_cast<std::uint8_t>(t >> 16);
            p[3] = static_cast<std::uint8_t>(t >> 24);
        }
    }
    return out;
}

std::int64_t pattern_mismatch(const std::uint8_t* pixels, std::uint64_t generation,
                              std::uint32_t width, std::uint32_t height) noexcept {
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            const std::size_t i = static_cast<std::size_t>(y) * width + x;
            const std::uint8_t* p = pixels + i * 4;
            const std::uint32_t got =
                static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
            if (got != pattern_texel(generation, x, y, width)) {
                return static_cast<std::int64_t>(i);
            }
        }
    }
    return -1;
}

PatternWorkload::PatternWorkload(const Device& device, const WorkloadParams& params)
    : m_device(device) {
    if (params.format != VK_FORMAT_R8G8B8A8_UNORM) {
        throw Error(ErrorCategory::InvalidArgument, "The pattern workload writes RGBA8 only",
                    "Register the task with format RGBA8 (VK_FORMAT_R8G8B8A8_UNORM)");
    }
    const std::string label = device.label() + " pattern " + params.task_name;

    // One pipeline per device for every pattern task (core/pipeline_shelf.hpp).
    m_pipeline = device.pipelines().get("pattern.comp", [&device] {
        const VkDescriptorSetLayoutBinding target{0, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1,
                                                  VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
        return build_compute_pipeline(device, shaders::pattern_comp(), {&target, 1},
                                      sizeof(PatternPush), device.label() + " pattern pipeline");
    });

    const std::uint32_t slots = params.slots == 0 ? 1 : params.slots;
    const VkDescriptorPoolSize target{VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1};
    DescriptorSets sets =
        allocate_descriptor_sets(device, m_pipeline.set_layout(), {&target, 1}, slots, label);
    m_pool = std::move(sets.pool);
    m_sets = std::move(sets.sets);
    m_bound_views.assign(slots, VK_NULL_HANDLE);
}

VkResult PatternWorkload::record(VkCommandBuffer cmd, std::uint32_t slot,
                                 const WorkloadTarget& target, std::uint64_t generation,
                                 std::span<const std::byte> /*snapshot*/) noexcept {
    if (slot >= m_sets.size() || target.format != VK_FORMAT_R8G8B8A8_UNORM) {
        return VK_ERROR_FORMAT_NOT_SUPPORTED;
    }
    if (m_bound_views[slot] != target.view) {
        VkDescriptorImageInfo image{VK_NULL_HANDLE, target.view, VK_IMAGE_LAYOUT_GENERAL};
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = m_sets[slot];
        write.dstBinding = 0;
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        write.pImageInfo = &image;
        vkUpdateDescriptorSets(m_device.handle(), 1, &write, 0, nullptr);
        m_bound_views[slot] = target.view;
    }
    // Earlier readers of the image (the transfer's copy, the application's reads on a shared
    // image) are ordered before this submission by the semaphores the runtime waits on; the
    // barrier chains to those waits (ALL_COMMANDS) and discards the old contents.
    image_barrier(cmd, target.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL,
                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline.pipeline());
    VkDescriptorSet set = m_sets[slot];
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline.layout(), 0, 1, &set, 0,
                            nullptr);
    const PatternPush push{pattern_generation(generation), target.width, target.height};
    vkCmdPushConstants(cmd, m_pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push),
                       &push);
    vkCmdDispatch(cmd, (target.width + 7) / 8, (target.height + 7) / 8, 1);
    return VK_SUCCESS;
}

} // namespace tandem::detail

namespace tandem {

std::uint32_t pattern_texel(std::uint64_t generation, std::uint32_t x, std::uint32_t y,
                            std::uint32_t width) noexcept {
    return detail::pattern_texel(generation, x, y, width);
}

} // namespace tandem
