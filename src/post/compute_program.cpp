#include "post/compute_program.hpp"

#include <algorithm>
#include <array>

#include "core/pipeline_shelf.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

Handle<VkSampler> create_point_sampler(const Device& device, const std::string& name) {
    const VkDevice dev = device.handle();
    VkSamplerCreateInfo info{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    info.magFilter = VK_FILTER_NEAREST;
    info.minFilter = VK_FILTER_NEAREST;
    info.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
    info.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    info.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    info.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    info.maxLod = 0.0f;
    VkSampler sampler = VK_NULL_HANDLE;
    vk_check(vkCreateSampler(dev, &info, nullptr, &sampler), "vkCreateSampler " + name);
    device.name(sampler, VK_OBJECT_TYPE_SAMPLER, name);
    return Handle<VkSampler>(sampler, [dev](VkSampler s) { vkDestroySampler(dev, s, nullptr); });
}

ComputeProgram::ComputeProgram(const Device& device, std::span<const std::uint32_t> spirv,
                               std::span<const VkDescriptorType> bindings, std::uint32_t push_bytes,
                               std::uint32_t slots, VkSampler sampler, const std::string& name)
    : m_device(device), m_types(bindings.begin(), bindings.end()) {
    slots = std::max(slots, 1u);
    if (bindings.size() > k_max_program_bindings) {
        throw Error(ErrorCategory::InvalidArgument,
                    name + " has " + std::to_string(bindings.size()) + " bindings",
                    "A post-processing program has at most 8");
    }

    std::vector<VkDescriptorSetLayoutBinding> layout_bindings(bindings.size());
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        VkDescriptorSetLayoutBinding& b = layout_bindings[i];
        b.binding = static_cast<std::uint32_t>(i);
        b.descriptorType = bindings[i];
        b.descriptorCount = 1;
        b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        if (bindings[i] == VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER) {
            b.pImmutableSamplers = &sampler;
        }
    }
    PipelineObjects objects =
        build_compute_pipeline(device, spirv, layout_bindings, push_bytes, name);
    const VkDescriptorSetLayout set_layout = objects.set_layout.get();
    m_set_layout = std::move(objects.set_layout);
    m_pipeline_layout = std::move(objects.layout);
    m_pipeline = std::move(objects.pipeline);

    std::vector<VkDescriptorPoolSize> per_set;
    for (const VkDescriptorType type : m_types) {
        auto it = std::find_if(per_set.begin(), per_set.end(),
                               [type](const VkDescriptorPoolSize& s) { return s.type == type; });
        if (it == per_set.end()) {
            per_set.push_back({type, 0});
            it = per_set.end() - 1;
        }
        ++it->descriptorCount;
    }
    DescriptorSets sets = allocate_descriptor_sets(device, set_layout, per_set, slots, name);
    m_pool = std::move(sets.pool);
    m_sets = std::move(sets.sets);
    // Nothing bound yet: no view or buffer is null in a real binding.
    m_bound.assign(slots, std::vector<ProgramResource>(m_types.size()));
}

bool ComputeProgram::bind(std::uint32_t slot, std::span<const ProgramResource> resources) noexcept {
    if (slot >= m_sets.size() || resources.size() != m_types.size()) {
        return false;
    }
    std::vector<ProgramResource>& bound = m_bound[slot];
    if (std::equal(bound.begin(), bound.end(), resources.begin(), resources.end())) {
        return true;
    }
    // Fixed arrays: the per-frame path allocates nothing.
    std::array<VkDescriptorImageInfo, k_max_program_bindings> images{};
    std::array<VkDescriptorBufferInfo, k_max_program_bindings> buffers{};
    std::array<VkWriteDescriptorSet, k_max_program_bindings> writes{};
    for (std::size_t i = 0; i < m_types.size(); ++i) {
        VkWriteDescriptorSet& w = writes[i];
        w = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = m_sets[slot];
        w.dstBinding = static_cast<std::uint32_t>(i);
        w.descriptorCount = 1;
        w.descriptorType = m_types[i];
        if (m_types[i] == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER) {
            buffers[i] = {resources[i].buffer, 0, VK_WHOLE_SIZE};
            w.pBufferInfo = &buffers[i];
        } else {
            images[i] = {VK_NULL_HANDLE, resources[i].view, resources[i].layout};
            w.pImageInfo = &images[i];
        }
    }
    vkUpdateDescriptorSets(m_device.handle(), static_cast<std::uint32_t>(m_types.size()),
                           writes.data(), 0, nullptr);
    std::copy(resources.begin(), resources.end(), bound.begin());
    return true;
}

void ComputeProgram::dispatch(VkCommandBuffer cmd, std::uint32_t slot, const void* push,
                              std::uint32_t push_bytes, std::uint32_t groups_x,
                              std::uint32_t groups_y, std::uint32_t groups_z) const noexcept {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline.get());
    const VkDescriptorSet set = m_sets[slot];
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline_layout.get(), 0, 1,
                            &set, 0, nullptr);
    if (push_bytes > 0) {
        vkCmdPushConstants(cmd, m_pipeline_layout.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes,
                           push);
    }
    vkCmdDispatch(cmd, groups_x, groups_y, groups_z);
}

} // namespace tandem::detail
