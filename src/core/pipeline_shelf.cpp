#include "core/pipeline_shelf.hpp"

#include <utility>

#include "core/device.hpp"
#include "core/vk_check.hpp"

namespace tandem::detail {

PipelineObjects build_compute_pipeline(const Device& device, std::span<const std::uint32_t> spirv,
                                       std::span<const VkDescriptorSetLayoutBinding> bindings,
                                       std::uint32_t push_bytes, const std::string& name,
                                       const char* entry) {
    const VkDevice dev = device.handle();
    PipelineObjects out;
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = static_cast<std::uint32_t>(bindings.size());
    set_info.pBindings = bindings.data();
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorSetLayout(dev, &set_info, nullptr, &set_layout),
             "vkCreateDescriptorSetLayout " + name);
    out.set_layout = Handle<VkDescriptorSetLayout>(set_layout, [dev](VkDescriptorSetLayout l) {
        vkDestroyDescriptorSetLayout(dev, l, nullptr);
    });

    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
    layout_info.pPushConstantRanges = &push;
    VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(dev, &layout_info, nullptr, &pipeline_layout),
             "vkCreatePipelineLayout " + name);
    out.layout = Handle<VkPipelineLayout>(
        pipeline_layout, [dev](VkPipelineLayout l) { vkDestroyPipelineLayout(dev, l, nullptr); });

    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = spirv.size_bytes();
    module_info.pCode = spirv.data();
    VkShaderModule module = VK_NULL_HANDLE;
    vk_check(vkCreateShaderModule(dev, &module_info, nullptr, &module),
             "vkCreateShaderModule " + name);
    const Handle<VkShaderModule> module_owner(
        module, [dev](VkShaderModule m) { vkDestroyShaderModule(dev, m, nullptr); });

    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = entry;
    pipeline_info.layout = pipeline_layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    vk_check(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline),
             "vkCreateComputePipelines " + name);
    out.pipeline =
        Handle<VkPipeline>(pipeline, [dev](VkPipeline p) { vkDestroyPipeline(dev, p, nullptr); });
    device.name(pipeline, VK_OBJECT_TYPE_PIPELINE, name);
    return out;
}

struct PipelineShelf::Shared::Entry {
    PipelineObjects objects;
    std::uint32_t users = 0;
    std::uint64_t last_used = 0;
};

PipelineShelf::Shared::Shared(Shared&& other) noexcept
    : m_shelf(std::exchange(other.m_shelf, nullptr)),
      m_entry(std::exchange(other.m_entry, nullptr)) {}

PipelineShelf::Shared& PipelineShelf::Shared::operator=(Shared&& other) noexcept {
    if (this != &other) {
        reset();
        m_shelf = std::exchange(other.m_shelf, nullptr);
        m_entry = std::exchange(other.m_entry, nullptr);
    }
    return *this;
}

VkDescriptorSetLayout PipelineShelf::Shared::set_layout() const noexcept {
    return m_entry->objects.set_layout.get();
}

VkPipelineLayout PipelineShelf::Shared::layout() const noexcept {
    return m_entry->objects.layout.get();
}

VkPipeline PipelineShelf::Shared::pipeline() const noexcept {
    return m_entry->objects.pipeline.get();
}

void PipelineShelf::Shared::reset() noexcept {
    if (m_entry != nullptr) {
        m_shelf->release(m_entry);
    }
    m_shelf = nullptr;
    m_entry = nullptr;
}

PipelineShelf::PipelineShelf() = default;
PipelineShelf::~PipelineShelf() = default;

PipelineShelf::Shared PipelineShelf::get(const std::string& key, const Build& build) {
    std::lock_guard lock(m_lock);
    auto it = m_entries.find(key);
    if (it == m_entries.end()) {
        auto entry = std::make_unique<Shared::Entry>();
        entry->objects = build();
        ++m_builds;
        it = m_entries.emplace(key, std::move(entry)).first;
    }
    Shared::Entry* entry = it->second.get();
    ++entry->users;
    entry->last_used = ++m_tick;
    return Shared(this, entry);
}

void PipelineShelf::release(Shared::Entry* entry) noexcept {
    std::lock_guard lock(m_lock);
    --entry->users;
    entry->last_used = ++m_tick;
    std::size_t idle = 0;
    for (const auto& [key, e] : m_entries) {
        idle += e->users == 0 ? 1 : 0;
    }
    while (idle > k_idle_kept) {
        auto oldest = m_entries.end();
        for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
            if (it->second->users == 0 &&
                (oldest == m_entries.end() || it->second->last_used < oldest->second->last_used)) {
                oldest = it;
            }
        }
        m_entries.erase(oldest);
        --idle;
    }
}

std::size_t PipelineShelf::size() const {
    std::lock_guard lock(m_lock);
    return m_entries.size();
}

std::uint64_t PipelineShelf::builds() const {
    std::lock_guard lock(m_lock);
    return m_builds;
}

} // namespace tandem::detail
