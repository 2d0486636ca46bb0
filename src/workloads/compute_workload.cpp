// tandem::compute_workload (tandem/compute.hpp): the module checked with SPIRV-Tools and
// reflected with SPIRV-Cross once, when the factory is made; then, per device, a compute
// pipeline over the reflected interface, built with the public WorkerContext alone.
#include "tandem/compute.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <spirv-tools/libspirv.h>
#include <spirv_cross/spirv_cross_c.h>

#include "core/pipeline_shelf.hpp"
#include "core/resources.hpp"
#include "tandem/error.hpp"
#include "workloads/application_workload.hpp"

namespace tandem {
namespace {

constexpr const char* k_fix = "Check the module and the ComputeTaskDesc against tandem/compute.hpp";

[[noreturn]] void refuse(const std::string& what) {
    throw Error("The compute task's SPIR-V " + what, k_fix);
}

void validate(const std::vector<std::uint32_t>& words) {
    if (words.empty()) {
        refuse("is empty");
    }
    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
    spv_const_binary_t binary{words.data(), words.size()};
    spv_diagnostic diagnostic = nullptr;
    const spv_result_t result = spvValidate(context, &binary, &diagnostic);
    std::string why =
        diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "";
    spvDiagnosticDestroy(diagnostic);
    spvContextDestroy(context);
    if (result != SPV_SUCCESS) {
        refuse("is not valid for Vulkan 1.3 (SPIRV-Tools: " + (why.empty() ? "error" : why) + ")");
    }
}

// What the module's interface is, from SPIRV-Cross.
struct Reflection {
    std::array<std::uint32_t, 3> local_size{1, 1, 1};
};

class Reflector {
public:
    explicit Reflector(const std::vector<std::uint32_t>& words) {
        spvc_context_create(&m_context);
        spvc_parsed_ir ir = nullptr;
        if (spvc_context_parse_spirv(m_context, words.data(), words.size(), &ir) != SPVC_SUCCESS ||
            spvc_context_create_compiler(m_context, SPVC_BACKEND_NONE, ir,
                                         SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                         &m_compiler) != SPVC_SUCCESS) {
            const std::string why = spvc_context_get_last_error_string(m_context);
            spvc_context_destroy(m_context);
            refuse("cannot be reflected (SPIRV-Cross: " + why + ")");
        }
    }
    ~Reflector() { spvc_context_destroy(m_context); }
    Reflector(const Reflector&) = delete;
    Reflector& operator=(const Reflector&) = delete;

    Reflection check(const ComputeTaskDesc& desc) {
        select_entry_point(desc.entry_point);
        Reflection out;
        for (unsigned i = 0; i < 3; ++i) {
            out.local_size[i] = spvc_compiler_get_execution_mode_argument_by_index(
                m_compiler, SpvExecutionModeLocalSize, i);
        }
        for (unsigned i = 0; i < 3; ++i) {
            if (desc.workgroup_size[i] != 0 && desc.workgroup_size[i] != out.local_size[i]) {
                refuse("declares workgroup size " + size3(out.local_size) + ", the description " +
                       size3(desc.workgroup_size));
            }
        }
        if (out.local_size[0] == 0 || out.local_size[2] != 1) {
            refuse("declares workgroup size " + size3(out.local_size) +
                   ": a 2D image task needs LocalSize x y 1 with x, y > 0");
        }
        spvc_resources resources = nullptr;
        if (spvc_compiler_create_shader_resources(m_compiler, &resources) != SPVC_SUCCESS) {
            refuse("has resources SPIRV-Cross cannot list");
        }
        check_push_constants(resources, desc.push_constant_bytes);
        check_output(resources);
        check_inputs(resources, desc.input_bytes);
        return out;
    }

private:
    static std::string size3(const std::array<std::uint32_t, 3>& s) {
        return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
    }

    void select_entry_point(const std::string& name) {
        const spvc_entry_point* entries = nullptr;
        std::size_t count = 0;
        spvc_compiler_get_entry_points(m_compiler, &entries, &count);
        std::string found;
        for (std::size_t i = 0; i < count; ++i) {
            if (name == entries[i].name &&
                entries[i].execution_model == SpvExecutionModelGLCompute) {
                spvc_compiler_set_entry_point(m_compiler, name.c_str(), SpvExecutionModelGLCompute);
                return;
            }
            found +=
                (found.empty() ? "" : ", ") + std::string(entries[i].name) +
                (entries[i].execution_model == SpvExecutionModelGLCompute ? "" : " (not compute)");
        }
        refuse("has no compute entry point '" + name +
               "' (it has: " + (found.empty() ? "none" : found) + ")");
    }

    std::vector<spvc_reflected_resource> list(spvc_resources resources, spvc_resource_type type) {
        const spvc_reflected_resource* items = nullptr;
        std::size_t count = 0;
        spvc_resources_get_resource_list_for_type(resources, type, &items, &count);
        return {items, items + count};
    }

    std::uint32_t decoration(spvc_variable_id id, SpvDecoration d) {
        return spvc_compiler_get_decoration(m_compiler, id, d);
    }

    void check_push_constants(spvc_resources resources, std::uint32_t declared) {
        const auto blocks = list(resources, SPVC_RESOURCE_TYPE_PUSH_CONSTANT);
        std::size_t size = 0;
        if (!blocks.empty()) {
            spvc_type type = spvc_compiler_get_type_handle(m_compiler, blocks[0].base_type_id);
            spvc_compiler_get_declared_struct_size(m_compiler, type, &size);
        }
        if (size != declared) {
            refuse("has a push-constant block of " + std::to_string(size) +
                   " bytes; the description says " + std::to_string(declared));
        }
    }

    void check_output(spvc_resources resources) {
        for (const auto& image : list(resources, SPVC_RESOURCE_TYPE_STORAGE_IMAGE)) {
            if (decoration(image.id, SpvDecorationDescriptorSet) == 0 &&
                decoration(image.id, SpvDecorationBinding) == 0) {
                return;
            }
        }
        refuse("has no storage image at set 0, binding 0 (the task's output)");
    }

    void check_inputs(spvc_resources resources, const std::vector<std::uint32_t>& declared) {
        if (declared.size() > k_max_compute_inputs) {
            throw Error("The compute task has " + std::to_string(declared.size()) + " inputs",
                        "Use at most 8 storage buffers");
        }
        const auto buffers = list(resources, SPVC_RESOURCE_TYPE_STORAGE_BUFFER);
        for (const auto& b : buffers) {
            const std::uint32_t binding = decoration(b.id, SpvDecorationBinding);
            if (decoration(b.id, SpvDecorationDescriptorSet) != 0 || binding == 0 ||
                binding > declared.size()) {
                refuse("reads a storage buffer at set " +
                       std::to_string(decoration(b.id, SpvDecorationDescriptorSet)) + ", binding " +
                       std::to_string(binding) + ", which the description's " +
                       std::to_string(declared.size()) + " input(s) (bindings 1.." +
                       std::to_string(declared.size()) + ") do not provide");
            }
            spvc_type type = spvc_compiler_get_type_handle(m_compiler, b.base_type_id);
            std::size_t fixed = 0;
            std::size_t with_one = 0;
            spvc_compiler_get_declared_struct_size(m_compiler, type, &fixed);
            spvc_compiler_get_declared_struct_size_runtime_array(m_compiler, type, 1, &with_one);
            const std::size_t size = declared[binding - 1];
            const std::size_t stride = with_one - fixed;
            const bool fits =
                stride == 0 ? size == fixed : size >= fixed && (size - fixed) % stride == 0;
            if (!fits) {
                refuse("declares input " + std::to_string(binding) + " (binding " +
                       std::to_string(binding) + ") as " + std::to_string(fixed) + " bytes" +
                       (stride == 0 ? "" : " plus elements of " + std::to_string(stride)) +
                       "; the description gives it " + std::to_string(size));
            }
        }
    }

    spvc_context m_context = nullptr;
    spvc_compiler m_compiler = nullptr;
};

void check_vk(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw Error(r, std::string(what) + " for the compute task",
                    "Check the device with `tandem devices`");
    }
}

// The module's pipeline on one device, with one descriptor set and one set of input buffers
// per slot. Raw Vulkan over the public WorkerContext, destroyed in reverse.
class ComputeWorkload final : public Workload {
public:
    ComputeWorkload(const WorkerContext& context, const ComputeTaskDesc& desc,
                    const Reflection& reflection)
        : m_device(context.device), m_runtime_device(detail::application_device(context.device)),
          m_desc(desc), m_local(reflection.local_size), m_slots(context.slots) {
        try {
            build(context);
        } catch (...) {
            destroy();
            throw;
        }
    }
    ~ComputeWorkload() override { destroy(); }

    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_STORAGE_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
    }

    std::string check(std::span<const std::byte> bytes) const override {
        std::size_t expected = m_desc.push_constant_bytes;
        for (std::uint32_t b : m_desc.input_bytes) {
            expected += b;
        }
        if (bytes.size() == expected) {
            return {};
        }
        return "a job of the compute task submitted " + std::to_string(bytes.size()) +
               " bytes; it takes " + std::to_string(m_desc.push_constant_bytes) +
               " push-constant bytes and its inputs, " + std::to_string(expected) + " in all";
    }

    void record(const RecordContext& job) override {
        // submit() checked the bytes already; a trial job replays checked bytes too.
        if (std::string why = check(job.bytes); !why.empty()) {
            throw std::invalid_argument(why);
        }
        // The slot's previous job completed (Tandem records a slot again only then), so its
        // buffers and descriptor set are free. Host writes before the submit are visible to it.
        std::size_t offset = m_desc.push_constant_bytes;
        for (std::size_t i = 0; i < m_desc.input_bytes.size(); ++i) {
            std::memcpy(m_mapped[job.slot][i], job.bytes.data() + offset, m_desc.input_bytes[i]);
            offset += m_desc.input_bytes[i];
        }
        VkDescriptorImageInfo image{VK_NULL_HANDLE, job.view, VK_IMAGE_LAYOUT_GENERAL};
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = m_sets[job.slot];
        write.dstBinding = 0;
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        write.pImageInfo = &image;
        vkUpdateDescriptorSets(m_device, 1, &write, 0, nullptr);

        // Every texel is written: the old contents (UNDEFINED) are not needed.
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
        vkCmdBindPipeline(job.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline);
        vkCmdBindDescriptorSets(job.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_layout, 0, 1,
                                &m_sets[job.slot], 0, nullptr);
        if (m_desc.push_constant_bytes > 0) {
            vkCmdPushConstants(job.cmd, m_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                               m_desc.push_constant_bytes, job.bytes.data());
        }
        vkCmdDispatch(job.cmd, (job.extent.width + m_local[0] - 1) / m_local[0],
                      (job.extent.height + m_local[1] - 1) / m_local[1], 1);
    }

private:
    // The module, layouts and pipeline: made here, or (inside a runtime) shared with every task
    // instance on the device that runs the same code (core/pipeline_shelf.hpp).
    detail::PipelineObjects build_pipeline(const std::string& name) const {
        const VkDevice dev = m_device;
        detail::PipelineObjects out;
        VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        mi.codeSize = m_desc.spirv.size() * sizeof(std::uint32_t);
        mi.pCode = m_desc.spirv.data();
        VkShaderModule module = VK_NULL_HANDLE;
        check_vk(vkCreateShaderModule(dev, &mi, nullptr, &module), "vkCreateShaderModule");
        const detail::Handle<VkShaderModule> module_owner(
            module, [dev](VkShaderModule m) { vkDestroyShaderModule(dev, m, nullptr); });

        std::vector<VkDescriptorSetLayoutBinding> bindings;
        bindings.push_back(
            {0, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        for (std::uint32_t i = 0; i < m_desc.input_bytes.size(); ++i) {
            bindings.push_back({i + 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        }
        VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        li.bindingCount = static_cast<std::uint32_t>(bindings.size());
        li.pBindings = bindings.data();
        VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
        check_vk(vkCreateDescriptorSetLayout(dev, &li, nullptr, &set_layout),
                 "vkCreateDescriptorSetLayout");
        out.set_layout =
            detail::Handle<VkDescriptorSetLayout>(set_layout, [dev](VkDescriptorSetLayout l) {
                vkDestroyDescriptorSetLayout(dev, l, nullptr);
            });
        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, m_desc.push_constant_bytes};
        VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        pli.setLayoutCount = 1;
        pli.pSetLayouts = &set_layout;
        pli.pushConstantRangeCount = m_desc.push_constant_bytes > 0 ? 1 : 0;
        pli.pPushConstantRanges = &range;
        VkPipelineLayout layout = VK_NULL_HANDLE;
        check_vk(vkCreatePipelineLayout(dev, &pli, nullptr, &layout), "vkCreatePipelineLayout");
        out.layout = detail::Handle<VkPipelineLayout>(
            layout, [dev](VkPipelineLayout l) { vkDestroyPipelineLayout(dev, l, nullptr); });
        VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        ci.stage.module = module;
        ci.stage.pName = m_desc.entry_point.c_str();
        ci.layout = layout;
        VkPipeline pipeline = VK_NULL_HANDLE;
        check_vk(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline),
                 "vkCreateComputePipelines");
        out.pipeline = detail::Handle<VkPipeline>(
            pipeline, [dev](VkPipeline p) { vkDestroyPipeline(dev, p, nullptr); });
        if (m_runtime_device != nullptr) {
            m_runtime_device->name(pipeline, VK_OBJECT_TYPE_PIPELINE, name);
        }
        return out;
    }

    // What makes two of these pipelines different: the code, its entry point and its layout.
    [[nodiscard]] std::string pipeline_key() const {
        std::string key = "compute " + m_desc.entry_point + " " +
                          std::to_string(m_desc.push_constant_bytes) + " " +
                          std::to_string(m_desc.input_bytes.size()) + " ";
        const auto* code = reinterpret_cast<const char*>(m_desc.spirv.data());
        key.append(code, m_desc.spirv.size() * sizeof(std::uint32_t));
        return key;
    }

    void build(const WorkerContext& context) {
        const std::string name = context.task_name + " compute pipeline";
        if (m_runtime_device != nullptr) {
            m_shared = m_runtime_device->pipelines().get(
                pipeline_key(), [this, &name] { return build_pipeline(name); });
            m_set_layout = m_shared.set_layout();
            m_layout = m_shared.layout();
            m_pipeline = m_shared.pipeline();
        } else {
            m_own = build_pipeline(name);
            m_set_layout = m_own.set_layout.get();
            m_layout = m_own.layout.get();
            m_pipeline = m_own.pipeline.get();
        }

        const std::uint32_t inputs = static_cast<std::uint32_t>(m_desc.input_bytes.size());
        std::vector<VkDescriptorPoolSize> sizes{{VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, m_slots}};
        if (inputs > 0) {
            sizes.push_back({VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, m_slots * inputs});
        }
        VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        dpi.maxSets = m_slots;
        dpi.poolSizeCount = static_cast<std::uint32_t>(sizes.size());
        dpi.pPoolSizes = sizes.data();
        check_vk(vkCreateDescriptorPool(m_device, &dpi, nullptr, &m_pool),
                 "vkCreateDescriptorPool");
        m_sets.resize(m_slots);
        std::vector<VkDescriptorSetLayout> layouts(m_slots, m_set_layout);
        VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        ai.descriptorPool = m_pool;
        ai.descriptorSetCount = m_slots;
        ai.pSetLayouts = layouts.data();
        check_vk(vkAllocateDescriptorSets(m_device, &ai, m_sets.data()),
                 "vkAllocateDescriptorSets");

        m_mapped.assign(m_slots, std::vector<void*>(inputs, nullptr));
        for (std::uint32_t s = 0; s < m_slots; ++s) {
            for (std::uint32_t i = 0; i < inputs; ++i) {
                add_input(context, s, i);
            }
        }
    }

    // The slot's input buffer: host-visible and coherent, device-local where the device has
    // such memory. Inside a runtime, a range of the device's memory pool.
    void add_input(const WorkerContext& context, std::uint32_t slot, std::uint32_t input) {
        const VkDeviceSize size = std::max<VkDeviceSize>(m_desc.input_bytes[input], 4);
        const VkMemoryPropertyFlags required =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        const char* no_memory = "The device has no host-visible coherent memory for compute inputs";
        VkBuffer buffer = VK_NULL_HANDLE;
        if (m_runtime_device != nullptr) {
            try {
                m_pooled.push_back(detail::create_buffer(
                    *m_runtime_device,
                    {size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, required,
                     VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, context.task_name + " compute input"}));
            } catch (const Error& e) {
                throw Error(std::string(no_memory) + ": " + e.what(),
                            "Place the task on another device");
            }
            buffer = m_pooled.back().get();
            m_mapped[slot][input] = m_pooled.back().mapped;
        } else {
            VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
            bi.size = size;
            bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
            check_vk(vkCreateBuffer(m_device, &bi, nullptr, &buffer), "vkCreateBuffer");
            m_buffers.push_back(buffer);
            VkMemoryRequirements req;
            vkGetBufferMemoryRequirements(m_device, buffer, &req);
            const auto type = context.find_memory_type(req.memoryTypeBits, required,
                                                       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
            if (!type) {
                throw Error(no_memory, "Place the task on another device");
            }
            VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            mai.allocationSize = req.size;
            mai.memoryTypeIndex = *type;
            VkDeviceMemory memory = VK_NULL_HANDLE;
            check_vk(vkAllocateMemory(m_device, &mai, nullptr, &memory), "vkAllocateMemory");
            m_memory.push_back(memory);
            check_vk(vkBindBufferMemory(m_device, buffer, memory, 0), "vkBindBufferMemory");
            check_vk(vkMapMemory(m_device, memory, 0, VK_WHOLE_SIZE, 0, &m_mapped[slot][input]),
                     "vkMapMemory");
        }
        VkDescriptorBufferInfo info{buffer, 0, VK_WHOLE_SIZE};
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = m_sets[slot];
        write.dstBinding = input + 1;
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        write.pBufferInfo = &info;
        vkUpdateDescriptorSets(m_device, 1, &write, 0, nullptr);
    }

    void destroy() noexcept {
        m_pooled.clear();
        for (VkBuffer b : m_buffers) {
            vkDestroyBuffer(m_device, b, nullptr);
        }
        for (VkDeviceMemory m : m_memory) {
            vkFreeMemory(m_device, m, nullptr); // unmaps
        }
        m_buffers.clear();
        m_memory.clear();
        vkDestroyDescriptorPool(m_device, m_pool, nullptr);
        m_pool = VK_NULL_HANDLE;
        m_shared.reset();
        m_own = {};
        m_pipeline = VK_NULL_HANDLE;
        m_layout = VK_NULL_HANDLE;
        m_set_layout = VK_NULL_HANDLE;
    }

    VkDevice m_device;
    // The runtime's Device behind m_device (its memory pool and pipeline shelf); null when the
    // factory is called outside a runtime.
    const detail::Device* m_runtime_device;
    ComputeTaskDesc m_desc;
    std::array<std::uint32_t, 3> m_local;
    std::uint32_t m_slots;
    detail::PipelineShelf::Shared m_shared; // inside a runtime
    detail::PipelineObjects m_own;          // outside one
    VkDescriptorSetLayout m_set_layout = VK_NULL_HANDLE;
    VkPipelineLayout m_layout = VK_NULL_HANDLE;
    VkPipeline m_pipeline = VK_NULL_HANDLE;
    VkDescriptorPool m_pool = VK_NULL_HANDLE;
    std::vector<VkDescriptorSet> m_sets;
    std::vector<detail::Buffer> m_pooled; // inside a runtime
    std::vector<VkBuffer> m_buffers;      // outside one, with their memory
    std::vector<VkDeviceMemory> m_memory;
    std::vector<std::vector<void*>> m_mapped; // [slot][input]
};

} // namespace

WorkloadFactory compute_workload(const ComputeTaskDesc& desc) {
    validate(desc.spirv);
    const Reflection reflection = Reflector(desc.spirv).check(desc);
    return [desc, reflection](const WorkerContext& context) -> std::unique_ptr<Workload> {
        return std::make_unique<ComputeWorkload>(context, desc, reflection);
    };
}

} // namespace tandem
