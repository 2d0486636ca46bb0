#include "render/renderer.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "core/vk_check.hpp"
#include "render/frustum.hpp"
#include "shaders/embedded.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

struct InstanceData {
    glm::vec4 model[4];
    glm::vec4 normal[3]; // inverse-transpose of the model's upper 3x3, column by column
};
static_assert(sizeof(InstanceData) == 112);

// The instance data of the motion pipeline: the same, then the previous model matrix.
struct MotionInstanceData {
    InstanceData now;
    glm::vec4 previous_model[4];
};
static_assert(sizeof(MotionInstanceData) == 176 && offsetof(MotionInstanceData, now) == 0);

// Set 1 of the motion pipeline (std140): what the previous frame saw from where, and the size
// of the image, for NDC to pixels.
struct MotionUniform {
    glm::mat4 previous_view_proj;
    glm::vec4 extent; // xy: width, height
};
static_assert(sizeof(MotionUniform) == 80);

struct Push {
    glm::mat4 view_proj;
    glm::vec4 light_dir; // w: 1 = unlit
    glm::vec4 light_color;
    glm::vec4 ambient;
    glm::vec4 base_color;
};
static_assert(sizeof(Push) == 128, "128 bytes is the guaranteed push-constant size");

Handle<VkShaderModule> shader(const Device& device, std::span<const std::uint32_t> code,
                              const char* name) {
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code.size_bytes();
    info.pCode = code.data();
    VkShaderModule module = VK_NULL_HANDLE;
    const VkDevice dev = device.handle();
    vk_check(vkCreateShaderModule(dev, &info, nullptr, &module),
             std::string("vkCreateShaderModule ") + name);
    return Handle<VkShaderModule>(
        module, [dev](VkShaderModule m) { vkDestroyShaderModule(dev, m, nullptr); });
}

// Set 1 of the motion pipeline: the MotionUniform, vertex and fragment stages. The pipeline and
// each RenderTarget make their own, defined the same (so compatible).
Handle<VkDescriptorSetLayout> create_motion_layout(const Device& device) {
    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
    VkDescriptorSetLayoutCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    info.bindingCount = 1;
    info.pBindings = &binding;
    VkDescriptorSetLayout layout = VK_NULL_HANDLE;
    const VkDevice dev = device.handle();
    vk_check(vkCreateDescriptorSetLayout(dev, &info, nullptr, &layout),
             "vkCreateDescriptorSetLayout motion");
    return Handle<VkDescriptorSetLayout>(
        layout, [dev](VkDescriptorSetLayout l) { vkDestroyDescriptorSetLayout(dev, l, nullptr); });
}

} // namespace

const char* to_string(RenderStatus status) noexcept {
    switch (status) {
    case RenderStatus::Ok:
        return "ok";
    case RenderStatus::ExtentMismatch:
        return "the colour target and the render target differ in size";
    case RenderStatus::UnknownMesh:
        return "a snapshot names a mesh that is not in the device's cache";
    case RenderStatus::TooManyInstances:
        return "more visible instances than the render target holds";
    case RenderStatus::UnknownSurface:
        return "an instance names an external texture that was not given";
    case RenderStatus::DescriptorFailure:
        return "no descriptor set left for an external texture";
    case RenderStatus::DeviceFailure:
        return "the device refused to flush a render target's buffer";
    case RenderStatus::NoMotionOutputs:
        return "motion targets given to a renderer or render target made without motion outputs";
    }
    return "unknown";
}

RenderTarget::RenderTarget(const Renderer& renderer, VkExtent2D extent, std::uint32_t max_instances,
                           std::uint32_t max_surfaces, const std::string& name)
    : m_max_instances(std::max(max_instances, 1u)), m_max_surfaces(std::max(max_surfaces, 1u)) {
    const Device& device = renderer.device();
    // Depth lives only during the pass (cleared on load, not stored): a transient attachment.
    m_depth = create_image(device, {extent.width,
                                    extent.height,
                                    renderer.depth_format(),
                                    VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT |
                                        VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT,
                                    name + " depth",
                                    {},
                                    /*transient=*/true});
    const bool motion = renderer.outputs() == RenderOutputs::ColorDepthMotion;
    const VkDeviceSize stride = motion ? sizeof(MotionInstanceData) : sizeof(InstanceData);
    m_instances = create_buffer(
        device, {VkDeviceSize{m_max_instances} * stride, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                 name + " instances"});
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, m_max_surfaces};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = m_max_surfaces;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    VkDescriptorPool p = VK_NULL_HANDLE;
    const VkDevice dev = device.handle();
    vk_check(vkCreateDescriptorPool(dev, &pool, nullptr, &p), "vkCreateDescriptorPool " + name);
    m_pool = Handle<VkDescriptorPool>(
        p, [dev](VkDescriptorPool x) { vkDestroyDescriptorPool(dev, x, nullptr); });
    device.name(p, VK_OBJECT_TYPE_DESCRIPTOR_POOL, name + " surfaces");
    if (!motion) {
        return;
    }
    m_motion_uniform =
        create_buffer(device, {sizeof(MotionUniform), VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, name + " previous frame"});
    m_motion_layout = create_motion_layout(device);
    VkDescriptorPoolSize uniform_size{VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1};
    VkDescriptorPoolCreateInfo motion_pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    motion_pool.maxSets = 1;
    motion_pool.poolSizeCount = 1;
    motion_pool.pPoolSizes = &uniform_size;
    VkDescriptorPool mp = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(dev, &motion_pool, nullptr, &mp),
             "vkCreateDescriptorPool " + name + " previous frame");
    m_motion_pool = Handle<VkDescriptorPool>(
        mp, [dev](VkDescriptorPool x) { vkDestroyDescriptorPool(dev, x, nullptr); });
    device.name(mp, VK_OBJECT_TYPE_DESCRIPTOR_POOL, name + " previous frame");
    // One set for the target's life: only the buffer's content changes from record to record.
    VkDescriptorSetLayout layout = m_motion_layout.get();
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = mp;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    vk_check(vkAllocateDescriptorSets(dev, &alloc, &m_motion_set),
             "vkAllocateDescriptorSets " + name + " previous frame");
    VkDescriptorBufferInfo buffer{m_motion_uniform.get(), 0, sizeof(MotionUniform)};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = m_motion_set;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    write.pBufferInfo = &buffer;
    vkUpdateDescriptorSets(dev, 1, &write, 0, nullptr);
}

namespace {

// The mesh pipeline for `color` and `depth` attachments, with its layouts; with `motion`, the
// variant that also writes depth and motion (attachments 1 and 2) and has set 1.
PipelineObjects build_mesh_pipeline(const Device& device, VkFormat color, VkFormat depth,
                                    bool motion) {
    const VkDevice dev = device.handle();
    VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                             sizeof(Push)};
    PipelineObjects out;
    // Its own material layout, defined as the cache's: sets of any cache bind to it.
    out.set_layout = create_material_layout(device);
    // The motion layout is needed only while the pipeline layout is made (a set layout given to
    // a create call is not used after it); the targets' sets use their own, defined the same.
    Handle<VkDescriptorSetLayout> motion_layout;
    if (motion) {
        motion_layout = create_motion_layout(device);
    }
    const VkDescriptorSetLayout set_layouts[2] = {out.set_layout.get(), motion_layout.get()};
    VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout.setLayoutCount = motion ? 2 : 1;
    layout.pSetLayouts = set_layouts;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &push;
    VkPipelineLayout l = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(dev, &layout, nullptr, &l), "vkCreatePipelineLayout mesh");
    out.layout = Handle<VkPipelineLayout>(
        l, [dev](VkPipelineLayout x) { vkDestroyPipelineLayout(dev, x, nullptr); });

    auto vert = motion ? shader(device, shaders::mesh_motion_vert(), "mesh_motion.vert")
                       : shader(device, shaders::mesh_vert(), "mesh.vert");
    auto frag = motion ? shader(device, shaders::mesh_motion_frag(), "mesh_motion.frag")
                       : shader(device, shaders::mesh_frag(), "mesh.frag");
    VkPipelineShaderStageCreateInfo stages[2]{};
    stages[0] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
    stages[0].module = vert.get();
    stages[0].pName = "main";
    stages[1] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[1].module = frag.get();
    stages[1].pName = "main";

    const VkVertexInputBindingDescription bindings[2] = {
        {0, sizeof(Vertex), VK_VERTEX_INPUT_RATE_VERTEX},
        {1,
         motion ? std::uint32_t{sizeof(MotionInstanceData)} : std::uint32_t{sizeof(InstanceData)},
         VK_VERTEX_INPUT_RATE_INSTANCE}};
    std::vector<VkVertexInputAttributeDescription> attributes = {
        {0, 0, VK_FORMAT_R32G32B32_SFLOAT, offsetof(Vertex, position)},
        {1, 0, VK_FORMAT_R32G32B32_SFLOAT, offsetof(Vertex, normal)},
        {2, 0, VK_FORMAT_R32G32_SFLOAT, offsetof(Vertex, uv)}};
    // Model and normal matrices; the motion variant's previous model matrix follows them.
    const std::uint32_t columns = motion ? 11 : 7;
    for (std::uint32_t i = 0; i < columns; ++i) {
        attributes.push_back({3 + i, 1, VK_FORMAT_R32G32B32A32_SFLOAT, i * 16});
    }
    VkPipelineVertexInputStateCreateInfo input{
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    input.vertexBindingDescriptionCount = 2;
    input.pVertexBindingDescriptions = bindings;
    input.vertexAttributeDescriptionCount = static_cast<std::uint32_t>(attributes.size());
    input.pVertexAttributeDescriptions = attributes.data();
    VkPipelineInputAssemblyStateCreateInfo assembly{
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkPipelineViewportStateCreateInfo viewport{
        VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    viewport.viewportCount = 1;
    viewport.scissorCount = 1;
    VkPipelineRasterizationStateCreateInfo raster{
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    raster.polygonMode = VK_POLYGON_MODE_FILL;
    raster.cullMode = VK_CULL_MODE_NONE; // glTF double-sided materials and mirrored quads
    raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
    raster.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo multisample{
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineDepthStencilStateCreateInfo depth_state{
        VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
    depth_state.depthTestEnable = VK_TRUE;
    depth_state.depthWriteEnable = VK_TRUE;
    depth_state.depthCompareOp = VK_COMPARE_OP_LESS;
    VkPipelineColorBlendAttachmentState blend_attachments[3]{};
    for (auto& a : blend_attachments) {
        a.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                           VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    }
    const std::uint32_t attachments = motion ? 3 : 1;
    VkPipelineColorBlendStateCreateInfo blend{
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    blend.attachmentCount = attachments;
    blend.pAttachments = blend_attachments;
    const VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
    dynamic.dynamicStateCount = 2;
    dynamic.pDynamicStates = dynamic_states;
    VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
    const VkFormat formats[3] = {color, k_depth_output_format, k_motion_format};
    rendering.colorAttachmentCount = attachments;
    rendering.pColorAttachmentFormats = formats;
    rendering.depthAttachmentFormat = depth;

    VkGraphicsPipelineCreateInfo info{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    info.pNext = &rendering;
    info.stageCount = 2;
    info.pStages = stages;
    info.pVertexInputState = &input;
    info.pInputAssemblyState = &assembly;
    info.pViewportState = &viewport;
    info.pRasterizationState = &raster;
    info.pMultisampleState = &multisample;
    info.pDepthStencilState = &depth_state;
    info.pColorBlendState = &blend;
    info.pDynamicState = &dynamic;
    info.layout = out.layout.get();
    VkPipeline pipeline = VK_NULL_HANDLE;
    vk_check(vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline),
             motion ? "vkCreateGraphicsPipelines mesh motion" : "vkCreateGraphicsPipelines mesh");
    out.pipeline =
        Handle<VkPipeline>(pipeline, [dev](VkPipeline p) { vkDestroyPipeline(dev, p, nullptr); });
    device.name(pipeline, VK_OBJECT_TYPE_PIPELINE,
                device.label() + (motion ? " mesh motion pipeline" : " mesh pipeline"));
    return out;
}

} // namespace

Renderer::Renderer(const MeshCache& cache, VkFormat color, VkFormat depth, RenderOutputs outputs)
    : m_cache(cache), m_color(color), m_depth(depth), m_outputs(outputs) {
    const Device& device = cache.device();
    // One pipeline per device and formats for every capture (core/pipeline_shelf.hpp).
    const std::string formats = std::to_string(color) + " " + std::to_string(depth);
    m_pipeline = device.pipelines().get("mesh " + formats, [&device, color, depth] {
        return build_mesh_pipeline(device, color, depth, false);
    });
    if (outputs == RenderOutputs::ColorDepthMotion) {
        m_motion_pipeline =
            device.pipelines().get("mesh motion " + formats, [&device, color, depth] {
                return build_mesh_pipeline(device, color, depth, true);
            });
    }
}

RenderStatus Renderer::record(VkCommandBuffer cmd, RenderTarget& target, const ColorTarget& color,
                              const FrameSnapshot& snapshot,
                              std::span<const ExternalTexture> external, RenderStats* stats) const {
    return record_frame(cmd, target, color, nullptr, snapshot, external, stats);
}

RenderStatus Renderer::record(VkCommandBuffer cmd, RenderTarget& target, const ColorTarget& color,
                              const MotionTargets& motion, const FrameSnapshot& snapshot,
                              std::span<const ExternalTexture> external, RenderStats* stats) const {
    if (!m_motion_pipeline || target.m_motion_set == VK_NULL_HANDLE) {
        return RenderStatus::NoMotionOutputs;
    }
    return record_frame(cmd, target, color, &motion, snapshot, external, stats);
}

struct Renderer::FramePlan {
    struct Group {
        std::uint32_t mesh;
        std::optional<std::uint32_t> surface;
        std::vector<std::uint32_t> instances;
    };
    glm::mat4 view_proj{1.0f};
    std::vector<Group> groups;                 // in order of first appearance: deterministic
    std::vector<VkDescriptorSet> surface_sets; // per external texture; null where none samples it
    std::vector<std::uint32_t> first_instance; // per group: its range's first record
    RenderStats stats;
};

RenderStatus Renderer::record_frame(VkCommandBuffer cmd, RenderTarget& target,
                                    const ColorTarget& color, const MotionTargets* motion,
                                    const FrameSnapshot& snapshot,
                                    std::span<const ExternalTexture> external,
                                    RenderStats* stats) const {
    if (color.extent.width != target.extent().width ||
        color.extent.height != target.extent().height) {
        return RenderStatus::ExtentMismatch;
    }
    // Plan first, record after: nothing is recorded unless the whole frame can be.
    FramePlan plan;
    RenderStatus status = plan_frame(snapshot, external, target, plan);
    if (status == RenderStatus::Ok) {
        status = bind_surfaces(target, external, plan);
    }
    if (status == RenderStatus::Ok) {
        status = write_instances(target, color, motion, snapshot, plan);
    }
    if (status != RenderStatus::Ok) {
        return status;
    }

    const Device& device = m_cache.device();
    device.begin_label(cmd, "tandem render");
    begin_rendering(cmd, target, color, motion, snapshot.clear_color);
    draw_groups(cmd, target, plan, snapshot, motion);
    vkCmdEndRendering(cmd);
    if (color.final_layout != VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL ||
        color.final_stage != VK_PIPELINE_STAGE_2_NONE) {
        image_barrier(cmd, color.image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                      color.final_layout, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                      VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, color.final_stage,
                      color.final_access);
    }
    if (motion != nullptr && (motion->final_layout != VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL ||
                              motion->final_stage != VK_PIPELINE_STAGE_2_NONE)) {
        for (VkImage image : {motion->depth_image, motion->motion_image}) {
            image_barrier(cmd, image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                          motion->final_layout, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                          VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, motion->final_stage,
                          motion->final_access);
        }
    }
    device.end_label(cmd);
    if (stats != nullptr) {
        *stats = plan.stats;
    }
    return RenderStatus::Ok;
}

RenderStatus Renderer::plan_frame(const FrameSnapshot& snapshot,
                                  std::span<const ExternalTexture> external,
                                  const RenderTarget& target, FramePlan& plan) const {
    plan.view_proj = snapshot.camera.projection * snapshot.camera.view;
    const Frustum frustum = frustum_from(plan.view_proj);
    std::map<std::pair<std::uint32_t, std::int64_t>, std::size_t> group_of;
    plan.stats.instances = static_cast<std::uint32_t>(snapshot.instances.size());
    std::uint32_t visible = 0;
    for (std::size_t i = 0; i < snapshot.instances.size(); ++i) {
        const InstanceSnapshot& inst = snapshot.instances[i];
        const GpuMesh* mesh = m_cache.mesh(inst.mesh);
        if (mesh == nullptr) {
            return RenderStatus::UnknownMesh;
        }
        if (inst.surface && *inst.surface >= external.size()) {
            return RenderStatus::UnknownSurface;
        }
        if (mesh->primitives.empty() ||
            !intersects(frustum, mesh->bounds.transformed(inst.transform))) {
            ++plan.stats.culled;
            continue;
        }
        const std::pair<std::uint32_t, std::int64_t> key{
            inst.mesh, inst.surface ? static_cast<std::int64_t>(*inst.surface) : -1};
        auto [it, fresh] = group_of.try_emplace(key, plan.groups.size());
        if (fresh) {
            plan.groups.push_back({inst.mesh, inst.surface, {}});
        }
        plan.groups[it->second].instances.push_back(static_cast<std::uint32_t>(i));
        ++visible;
    }
    return visible > target.m_max_instances ? RenderStatus::TooManyInstances : RenderStatus::Ok;
}

RenderStatus Renderer::bind_surfaces(RenderTarget& target,
                                     std::span<const ExternalTexture> external,
                                     FramePlan& plan) const {
    // The pool is reset: the target is not in flight, by contract.
    const Device& device = m_cache.device();
    plan.surface_sets.assign(external.size(), VK_NULL_HANDLE);
    if (vk_status(vkResetDescriptorPool(device.handle(), target.m_pool.get(), 0),
                  "vkResetDescriptorPool render target") != VK_SUCCESS) {
        return RenderStatus::DescriptorFailure;
    }
    for (const FramePlan::Group& g : plan.groups) {
        if (!g.surface || plan.surface_sets[*g.surface] != VK_NULL_HANDLE) {
            continue;
        }
        VkDescriptorSetLayout layout = m_cache.texture_layout();
        VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        alloc.descriptorPool = target.m_pool.get();
        alloc.descriptorSetCount = 1;
        alloc.pSetLayouts = &layout;
        VkDescriptorSet set = VK_NULL_HANDLE;
        if (vk_status(vkAllocateDescriptorSets(device.handle(), &alloc, &set),
                      "vkAllocateDescriptorSets surface") != VK_SUCCESS) {
            return RenderStatus::DescriptorFailure;
        }
        const ExternalTexture& tex = external[*g.surface];
        VkDescriptorImageInfo image{m_cache.sampler(), tex.view, tex.layout};
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = set;
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
        write.pImageInfo = &image;
        vkUpdateDescriptorSets(device.handle(), 1, &write, 0, nullptr);
        plan.surface_sets[*g.surface] = set;
    }
    return RenderStatus::Ok;
}

RenderStatus Renderer::write_instances(RenderTarget& target, const ColorTarget& color,
                                       const MotionTargets* motion, const FrameSnapshot& snapshot,
                                       FramePlan& plan) const {
    // The motion pipeline's records are MotionInstanceData (the target was sized for them).
    auto* out = static_cast<InstanceData*>(target.m_instances.mapped);
    auto* motion_out = static_cast<MotionInstanceData*>(target.m_instances.mapped);
    std::uint32_t written = 0;
    for (const FramePlan::Group& g : plan.groups) {
        plan.first_instance.push_back(written);
        for (std::uint32_t i : g.instances) {
            const InstanceSnapshot& inst = snapshot.instances[i];
            const glm::mat4& m = inst.transform;
            const glm::mat3 n = glm::transpose(glm::inverse(glm::mat3(m)));
            InstanceData& d = motion != nullptr ? motion_out[written].now : out[written];
            for (int c = 0; c < 4; ++c) {
                d.model[c] = m[c];
            }
            for (int c = 0; c < 3; ++c) {
                d.normal[c] = glm::vec4(n[c], 0.0f);
            }
            if (motion != nullptr) {
                const glm::mat4& before = inst.transform_before();
                for (int c = 0; c < 4; ++c) {
                    motion_out[written].previous_model[c] = before[c];
                }
            }
            ++written;
        }
    }
    if (motion != nullptr) {
        const CameraSnapshot& before = snapshot.camera_before();
        MotionUniform uniform{};
        uniform.previous_view_proj = before.projection * before.view;
        uniform.extent = glm::vec4(static_cast<float>(color.extent.width),
                                   static_cast<float>(color.extent.height), 0.0f, 0.0f);
        std::memcpy(target.m_motion_uniform.mapped, &uniform, sizeof(uniform));
    }
    for (const Buffer* buffer : {&target.m_instances, &target.m_motion_uniform}) {
        if (buffer->mapped == nullptr || buffer->host_coherent()) {
            continue;
        }
        VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        range.memory = buffer->memory.get();
        range.size = VK_WHOLE_SIZE;
        if (vk_status(vkFlushMappedMemoryRanges(m_cache.device().handle(), 1, &range),
                      "vkFlushMappedMemoryRanges render target") != VK_SUCCESS) {
            return RenderStatus::DeviceFailure;
        }
    }
    return RenderStatus::Ok;
}

void Renderer::begin_rendering(VkCommandBuffer cmd, const RenderTarget& target,
                               const ColorTarget& color, const MotionTargets* motion,
                               const glm::vec4& clear) {
    // Colour: discard old content (cleared on load). Depth: same, every frame.
    VkImageMemoryBarrier2 barriers[4]{};
    barriers[0] = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    barriers[0].srcStageMask = color.previous_stage;
    barriers[0].srcAccessMask = color.previous_access;
    barriers[0].dstStageMask = VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT;
    barriers[0].dstAccessMask = VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT;
    barriers[0].oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    barriers[0].newLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    barriers[0].srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barriers[0].dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barriers[0].image = color.image;
    barriers[0].subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    barriers[1] = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    barriers[1].srcStageMask =
        VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT;
    barriers[1].srcAccessMask = VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
    barriers[1].dstStageMask = barriers[1].srcStageMask;
    barriers[1].dstAccessMask = VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                                VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT;
    barriers[1].oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    barriers[1].newLayout = VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL;
    barriers[1].srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barriers[1].dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barriers[1].image = target.m_depth.get();
    barriers[1].subresourceRange = {VK_IMAGE_ASPECT_DEPTH_BIT, 0, 1, 0, 1};
    if (motion != nullptr) {
        // The depth and motion outputs: discarded and cleared like the colour.
        barriers[2] = barriers[0];
        barriers[2].srcStageMask = motion->previous_stage;
        barriers[2].srcAccessMask = motion->previous_access;
        barriers[2].image = motion->depth_image;
        barriers[3] = barriers[2];
        barriers[3].image = motion->motion_image;
    }
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.imageMemoryBarrierCount = motion != nullptr ? 4 : 2;
    dep.pImageMemoryBarriers = barriers;
    vkCmdPipelineBarrier2(cmd, &dep);

    VkRenderingAttachmentInfo color_attachments[3]{};
    VkRenderingAttachmentInfo& color_attachment = color_attachments[0];
    color_attachment = {VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    color_attachment.imageView = color.view;
    color_attachment.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    color_attachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    color_attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    color_attachment.clearValue.color = {{clear.r, clear.g, clear.b, clear.a}};
    if (motion != nullptr) {
        // Background: the far plane's depth and no motion.
        color_attachments[1] = color_attachment;
        color_attachments[1].imageView = motion->depth_view;
        color_attachments[1].clearValue.color = {{1.0f, 0.0f, 0.0f, 0.0f}};
        color_attachments[2] = color_attachment;
        color_attachments[2].imageView = motion->motion_view;
        color_attachments[2].clearValue.color = {{0.0f, 0.0f, 0.0f, 0.0f}};
    }
    VkRenderingAttachmentInfo depth_attachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    depth_attachment.imageView = target.m_depth.view.get();
    depth_attachment.imageLayout = VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL;
    depth_attachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    depth_attachment.storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE; // never read afterwards
    depth_attachment.clearValue.depthStencil = {1.0f, 0};
    VkRenderingInfo rendering{VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea = {{0, 0}, color.extent};
    rendering.layerCount = 1;
    rendering.colorAttachmentCount = motion != nullptr ? 3 : 1;
    rendering.pColorAttachments = color_attachments;
    rendering.pDepthAttachment = &depth_attachment;
    vkCmdBeginRendering(cmd, &rendering);
}

void Renderer::draw_groups(VkCommandBuffer cmd, const RenderTarget& target, FramePlan& plan,
                           const FrameSnapshot& snapshot, const MotionTargets* motion) const {
    const PipelineShelf::Shared& pipeline = motion != nullptr ? m_motion_pipeline : m_pipeline;
    const VkExtent2D extent = target.extent(); // the colour target's too (record_frame)
    const VkViewport viewport{
        0.0f, 0.0f, static_cast<float>(extent.width), static_cast<float>(extent.height),
        0.0f, 1.0f};
    const VkRect2D scissor{{0, 0}, extent};
    vkCmdSetViewport(cmd, 0, 1, &viewport);
    vkCmdSetScissor(cmd, 0, 1, &scissor);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline.pipeline());
    if (motion != nullptr) {
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline.layout(), 1, 1,
                                &target.m_motion_set, 0, nullptr);
    }
    Push push{};
    push.view_proj = plan.view_proj;
    push.light_dir = glm::vec4(snapshot.light.direction, 0.0f);
    push.light_color = glm::vec4(snapshot.light.color, 1.0f);
    push.ambient = glm::vec4(snapshot.light.ambient, 1.0f);
    const VkShaderStageFlags stages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
    vkCmdPushConstants(cmd, pipeline.layout(), stages, 0, sizeof(Push), &push);

    VkBuffer instance_buffer = target.m_instances.get();
    for (std::size_t gi = 0; gi < plan.groups.size(); ++gi) {
        const FramePlan::Group& g = plan.groups[gi];
        const GpuMesh& mesh = *m_cache.mesh(g.mesh);
        const VkBuffer buffers[2] = {mesh.vertices.get(), instance_buffer};
        const VkDeviceSize offsets[2] = {0, 0};
        vkCmdBindVertexBuffers(cmd, 0, 2, buffers, offsets);
        vkCmdBindIndexBuffer(cmd, mesh.indices.get(), 0, VK_INDEX_TYPE_UINT32);
        for (const GpuPrimitive& prim : mesh.primitives) {
            const GpuMaterial& material = m_cache.material(prim.material);
            VkDescriptorSet set = g.surface ? plan.surface_sets[*g.surface] : material.texture_set;
            const glm::vec4 base = g.surface ? glm::vec4(1.0f) : material.base_color;
            const glm::vec4 light_dir(snapshot.light.direction, g.surface ? 1.0f : 0.0f);
            vkCmdPushConstants(cmd, pipeline.layout(), stages, offsetof(Push, light_dir),
                               sizeof(glm::vec4), &light_dir);
            vkCmdPushConstants(cmd, pipeline.layout(), stages, offsetof(Push, base_color),
                               sizeof(glm::vec4), &base);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline.layout(), 0, 1,
                                    &set, 0, nullptr);
            vkCmdDrawIndexed(cmd, prim.index_count, static_cast<std::uint32_t>(g.instances.size()),
                             prim.first_index, prim.vertex_offset, plan.first_instance[gi]);
            ++plan.stats.draws;
        }
    }
}

} // namespace tandem::detail
