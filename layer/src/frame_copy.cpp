#include "frame_copy.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace tandem::layer {

namespace {

// shaders/copy_frame.comp, compiled at build time (glslc -mfmt=c).
constexpr std::uint32_t k_copy_frame_spirv[] =
#include "copy_frame.comp.inc"
    ;

constexpr std::uint32_t k_group = 16; // the shader's local size in x and y

void check(VkResult result, const char* what) {
    if (result != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed (" + std::to_string(result) + ")");
    }
}

} // namespace

VkImageView rgba8_view(const DeviceDispatch& vk, VkDevice device, VkImage image,
                       VkImageUsageFlags usage) noexcept {
    VkImageViewUsageCreateInfo only{VK_STRUCTURE_TYPE_IMAGE_VIEW_USAGE_CREATE_INFO};
    only.usage = usage;
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.pNext = &only;
    view.image = image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = VK_FORMAT_R8G8B8A8_UNORM;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkImageView made = VK_NULL_HANDLE;
    if (vk.CreateImageView == nullptr ||
        vk.CreateImageView(device, &view, nullptr, &made) != VK_SUCCESS) {
        return VK_NULL_HANDLE;
    }
    return made;
}

FrameCopyPipeline::FrameCopyPipeline(const DeviceDispatch& vk, VkDevice device)
    : m_vk(vk), m_device(device) {
    if (vk.CreateShaderModule == nullptr || vk.CreateComputePipelines == nullptr ||
        vk.CreateImageView == nullptr || vk.CmdDispatch == nullptr) {
        throw std::runtime_error("the device lacks a function the compute copy needs");
    }
    try {
        VkShaderModuleCreateInfo module{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        module.codeSize = sizeof k_copy_frame_spirv;
        module.pCode = k_copy_frame_spirv;
        check(vk.CreateShaderModule(device, &module, nullptr, &m_shader), "vkCreateShaderModule");
        const std::array<VkDescriptorSetLayoutBinding, 2> bindings{{
            {0, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr},
            {1, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr},
        }};
        VkDescriptorSetLayoutCreateInfo set{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        set.bindingCount = static_cast<std::uint32_t>(bindings.size());
        set.pBindings = bindings.data();
        check(vk.CreateDescriptorSetLayout(device, &set, nullptr, &m_set_layout),
              "vkCreateDescriptorSetLayout");
        VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout.setLayoutCount = 1;
        layout.pSetLayouts = &m_set_layout;
        check(vk.CreatePipelineLayout(device, &layout, nullptr, &m_layout),
              "vkCreatePipelineLayout");
        VkComputePipelineCreateInfo pipeline{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        pipeline.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        pipeline.stage.module = m_shader;
        pipeline.stage.pName = "main";
        pipeline.layout = m_layout;
        check(vk.CreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline, nullptr, &m_pipeline),
              "vkCreateComputePipelines");
    } catch (...) {
        destroy();
        throw;
    }
}

FrameCopyPipeline::~FrameCopyPipeline() {
    destroy();
}

void FrameCopyPipeline::destroy() noexcept {
    if (m_pipeline != VK_NULL_HANDLE) {
        m_vk.DestroyPipeline(m_device, m_pipeline, nullptr);
    }
    if (m_layout != VK_NULL_HANDLE) {
        m_vk.DestroyPipelineLayout(m_device, m_layout, nullptr);
    }
    if (m_set_layout != VK_NULL_HANDLE) {
        m_vk.DestroyDescriptorSetLayout(m_device, m_set_layout, nullptr);
    }
    if (m_shader != VK_NULL_HANDLE) {
        m_vk.DestroyShaderModule(m_device, m_shader, nullptr);
    }
    m_pipeline = VK_NULL_HANDLE;
    m_layout = VK_NULL_HANDLE;
    m_set_layout = VK_NULL_HANDLE;
    m_shader = VK_NULL_HANDLE;
}

FrameCopy::FrameCopy(const DeviceDispatch& vk, VkDevice device, const FrameCopyPipeline& pipeline,
                     std::span<const VkImage> images, VkExtent2D extent, std::uint32_t slots)
    : m_vk(vk), m_device(device), m_pipeline(pipeline), m_extent(extent) {
    try {
        const std::array<VkDescriptorPoolSize, 2> sizes{{
            {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, slots},
            {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, slots},
        }};
        VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pool.maxSets = slots;
        pool.poolSizeCount = static_cast<std::uint32_t>(sizes.size());
        pool.pPoolSizes = sizes.data();
        check(vk.CreateDescriptorPool(device, &pool, nullptr, &m_pool), "vkCreateDescriptorPool");
        const std::vector<VkDescriptorSetLayout> layouts(slots, pipeline.set_layout());
        VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        allocate.descriptorPool = m_pool;
        allocate.descriptorSetCount = slots;
        allocate.pSetLayouts = layouts.data();
        m_sets.resize(slots);
        check(vk.AllocateDescriptorSets(device, &allocate, m_sets.data()),
              "vkAllocateDescriptorSets");
        for (const VkImage image : images) {
            const VkImageView made = rgba8_view(vk, device, image, VK_IMAGE_USAGE_STORAGE_BIT);
            if (made == VK_NULL_HANDLE) {
                throw std::runtime_error("vkCreateImageView of a swapchain image failed");
            }
            m_targets.push_back(made);
        }
    } catch (...) {
        destroy();
        throw;
    }
}

FrameCopy::~FrameCopy() {
    destroy();
}

void FrameCopy::destroy() noexcept {
    for (const VkImageView view : m_targets) {
        m_vk.DestroyImageView(m_device, view, nullptr);
    }
    m_targets.clear();
    if (m_pool != VK_NULL_HANDLE) {
        m_vk.DestroyDescriptorPool(m_device, m_pool, nullptr); // its sets with it
    }
    m_pool = VK_NULL_HANDLE;
}

void FrameCopy::record(VkCommandBuffer cmd, std::uint32_t slot, VkImageView source,
                       VkImageLayout source_layout, std::uint32_t target) const {
    // Written for every copy: the lease's view differs from one frame to the next.
    const std::array<VkDescriptorImageInfo, 2> images{{
        {VK_NULL_HANDLE, source, source_layout},
        {VK_NULL_HANDLE, m_targets.at(target), VK_IMAGE_LAYOUT_GENERAL},
    }};
    std::array<VkWriteDescriptorSet, 2> writes{};
    for (std::uint32_t i = 0; i < 2; ++i) {
        writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = m_sets.at(slot);
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType =
            i == 0 ? VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        writes[i].pImageInfo = &images[i];
    }
    m_vk.UpdateDescriptorSets(m_device, 2, writes.data(), 0, nullptr);
    m_vk.CmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline.pipeline());
    m_vk.CmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline.layout(), 0, 1,
                               &m_sets.at(slot), 0, nullptr);
    m_vk.CmdDispatch(cmd, (m_extent.width + k_group - 1) / k_group,
                     (m_extent.height + k_group - 1) / k_group, 1);
}

} // namespace tandem::layer
