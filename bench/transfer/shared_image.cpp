// tandem-bench-shared-image: what touching an image shared between two openings of one GPU
// costs, against a plain image, and which of the ways the zero-copy path makes its images is
// behind it. On one physical device opened twice (A measures, B exports where a variant is
// imported), it times on A's main queue (GPU timestamps around the commands alone) a copy of a
// plain image into each variant and out of it, at one size:
//
//   plain       exclusive, no external memory: the ceiling
//   concurrent  shared by A's main family and its transfer-only family (as the path's images are)
//   exportable  made with VkExternalMemoryImageCreateInfo (opaque fd), its memory exportable
//   exportable+concurrent
//   imported    made and exported on B, imported into A: the zero-copy path's image on the primary
//   imported+concurrent
//   imported+concurrent, acquired: the path's own commands, a queue-family acquire from
//               VK_QUEUE_FAMILY_EXTERNAL before the copy
//
// each with the slot images' usage (sampled, transfer source and destination, colour attachment)
// and again with storage added (a compute workload's output). Then, on the plain image and the
// imported+concurrent one (storage added), how the copy is made:
//
//   copy, general           vkCmdCopyImage with both images in GENERAL (the table above)
//   copy, transfer layouts  vkCmdCopyImage from TRANSFER_SRC_OPTIMAL into TRANSFER_DST_OPTIMAL
//   compute                 a compute shader, one texel an invocation (imageLoad, imageStore)
//   buffer copy             vkCmdCopyBuffer of as many bytes between two device-local buffers:
//                           what the memory moves when no image is involved
//
// Plain Vulkan: no Tandem library.
//
//   tandem-bench-shared-image [--device NAME-PART] [--size WxH] [--runs N] [--json FILE]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <vulkan/vulkan.h>

#include "core/stats.hpp"

namespace {

constexpr VkFormat k_format = VK_FORMAT_R8G8B8A8_UNORM;
// shaders/copy_image.comp, compiled at build time.
constexpr std::uint32_t k_copy_image_spirv[] =
#include "copy_image.comp.inc"
    ;
constexpr VkExternalMemoryHandleTypeFlagBits k_handle =
    VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "tandem-bench-shared-image: %s\n", what.c_str());
    std::exit(1);
}

void check(VkResult result, const char* call) {
    if (result != VK_SUCCESS) {
        fail(std::string(call) + " failed (" + std::to_string(result) + ")");
    }
}

struct Options {
    std::string device;
    std::uint32_t width = 1920;
    std::uint32_t height = 1080;
    std::uint32_t runs = 40;
    std::string json;
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                fail(arg + " needs a value");
            }
            return argv[++i];
        };
        if (arg == "--device") {
            o.device = value();
        } else if (arg == "--size") {
            const std::string v = value();
            if (std::sscanf(v.c_str(), "%ux%u", &o.width, &o.height) != 2 || o.width == 0 ||
                o.height == 0 || o.width > 16384 || o.height > 16384) {
                fail("--size takes WxH, each from 1 to 16384 (got '" + v + "')");
            }
        } else if (arg == "--runs") {
            o.runs = static_cast<std::uint32_t>(std::strtoul(value().c_str(), nullptr, 10));
            if (o.runs < 3) {
                fail("--runs takes 3 or more");
            }
        } else if (arg == "--json") {
            o.json = value();
        } else if (arg == "--help" || arg == "-h") {
            std::printf("tandem-bench-shared-image [--device NAME-PART] [--size WxH] [--runs N] "
                        "[--json FILE]\n"
                        "Times, on one GPU opened twice, a copy into and out of an image shared "
                        "between the two openings\n(exportable, imported, concurrent), beside a "
                        "plain image's. Prints a table; --json writes the rows.\n");
            std::exit(0);
        } else {
            fail("unknown argument '" + arg + "' (--help lists them)");
        }
    }
    return o;
}

// One opening of the physical device: its main (graphics) queue and, where there is one, the
// family of a transfer-only queue.
struct Opening {
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    std::uint32_t main_family = 0;
    std::optional<std::uint32_t> copy_family;
    PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
};

Opening open(VkPhysicalDevice physical) {
    std::uint32_t count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
    Opening o;
    bool main_found = false;
    for (std::uint32_t i = 0; i < count; ++i) {
        const VkQueueFlags f = families[i].queueFlags;
        if (!main_found && (f & VK_QUEUE_GRAPHICS_BIT) != 0 && families[i].timestampValidBits > 0) {
            o.main_family = i;
            main_found = true;
        } else if (!o.copy_family && (f & VK_QUEUE_TRANSFER_BIT) != 0 &&
                   (f & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) == 0) {
            o.copy_family = i;
        }
    }
    if (!main_found) {
        fail("the device has no graphics queue with timestamps");
    }
    const float priority = 1.0f;
    std::vector<VkDeviceQueueCreateInfo> queues;
    for (const std::optional<std::uint32_t> family :
         {std::optional(o.main_family), o.copy_family}) {
        if (family) {
            VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
            q.queueFamilyIndex = *family;
            q.queueCount = 1;
            q.pQueuePriorities = &priority;
            queues.push_back(q);
        }
    }
    const char* extensions[] = {"VK_KHR_external_memory_fd"};
    VkPhysicalDeviceSynchronization2Features sync2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
    sync2.synchronization2 = VK_TRUE;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &sync2;
    info.queueCreateInfoCount = static_cast<std::uint32_t>(queues.size());
    info.pQueueCreateInfos = queues.data();
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = extensions;
    check(vkCreateDevice(physical, &info, nullptr, &o.device), "vkCreateDevice");
    vkGetDeviceQueue(o.device, o.main_family, 0, &o.queue);
    o.get_memory_fd =
        reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(o.device, "vkGetMemoryFdKHR"));
    if (o.get_memory_fd == nullptr) {
        fail("vkGetMemoryFdKHR is missing");
    }
    return o;
}

struct Variant {
    const char* name;
    bool external = false;
    bool concurrent = false;
    bool imported = false; // made and exported on the second opening
    bool acquired = false; // an acquire from VK_QUEUE_FAMILY_EXTERNAL before each copy
};

struct Made {
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImage exporter_image = VK_NULL_HANDLE; // imported: B's image and memory, kept alive
    VkDeviceMemory exporter_memory = VK_NULL_HANDLE;
    std::uint32_t memory_type = 0;
    bool dedicated = false;
};

class Bench {
public:
    Bench(VkPhysicalDevice physical, const Options& options)
        : m_options(options), m_a(open(physical)), m_b(open(physical)) {
        vkGetPhysicalDeviceMemoryProperties(physical, &m_memory);
        VkPhysicalDeviceProperties props{};
        vkGetPhysicalDeviceProperties(physical, &props);
        m_tick_ns = props.limits.timestampPeriod;
        VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool.queueFamilyIndex = m_a.main_family;
        check(vkCreateCommandPool(m_a.device, &pool, nullptr, &m_pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = m_pool;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(m_a.device, &alloc, &m_cmd), "vkAllocateCommandBuffers");
        VkQueryPoolCreateInfo query{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        query.queryType = VK_QUERY_TYPE_TIMESTAMP;
        query.queryCount = 2;
        check(vkCreateQueryPool(m_a.device, &query, nullptr, &m_queries), "vkCreateQueryPool");
        VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check(vkCreateFence(m_a.device, &fence, nullptr, &m_fence), "vkCreateFence");
    }
    ~Bench() {
        vkDeviceWaitIdle(m_a.device);
        vkDestroyDescriptorPool(m_a.device, m_descriptor_pool, nullptr);
        vkDestroyPipeline(m_a.device, m_pipeline, nullptr);
        vkDestroyPipelineLayout(m_a.device, m_pipeline_layout, nullptr);
        vkDestroyDescriptorSetLayout(m_a.device, m_set_layout, nullptr);
        vkDestroyFence(m_a.device, m_fence, nullptr);
        vkDestroyQueryPool(m_a.device, m_queries, nullptr);
        vkDestroyCommandPool(m_a.device, m_pool, nullptr);
        vkDestroyDevice(m_a.device, nullptr);
        vkDestroyDevice(m_b.device, nullptr);
    }
    Bench(const Bench&) = delete;
    Bench& operator=(const Bench&) = delete;

    [[nodiscard]] bool has_copy_family() const noexcept { return m_a.copy_family.has_value(); }

    // How the copy into `variant` and out of it is made (the methods in the header), each
    // `runs` times: a row per method and direction. `usage` must include storage.
    nlohmann::json measure_methods(const Variant& variant, VkImageUsageFlags usage) {
        Made plain = make(Variant{"plain"}, usage);
        Made shared = make(variant, usage);
        first_layouts(plain.image, shared.image);
        const VkImageView plain_view = view(plain.image);
        const VkImageView shared_view = view(shared.image);
        nlohmann::json rows = nlohmann::json::array();
        for (const bool into : {true, false}) {
            const VkImage from = into ? plain.image : shared.image;
            const VkImage to = into ? shared.image : plain.image;
            const VkImageView from_view = into ? plain_view : shared_view;
            const VkImageView to_view = into ? shared_view : plain_view;
            auto row = [&](const char* method, const std::function<double()>& time) {
                nlohmann::json r = summary(time);
                r["variant"] = variant.name;
                r["method"] = method;
                r["direction"] = into ? "into" : "out of";
                rows.push_back(std::move(r));
            };
            row("copy, general", [&] { return time_copy(from, to, false, to); });
            row("copy, transfer layouts", [&] { return time_copy_optimal(from, to); });
            row("compute", [&] { return time_compute(from_view, to_view); });
        }
        vkDestroyImageView(m_a.device, plain_view, nullptr);
        vkDestroyImageView(m_a.device, shared_view, nullptr);
        destroy(plain);
        destroy(shared);
        return rows;
    }

    // vkCmdCopyBuffer of one frame's bytes between two device-local buffers.
    nlohmann::json measure_buffer_copy() {
        const VkDeviceSize bytes = VkDeviceSize{4} * m_options.width * m_options.height;
        VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        info.size = bytes;
        info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        VkBuffer buffers[2] = {};
        VkDeviceMemory memory[2] = {};
        for (int i = 0; i < 2; ++i) {
            check(vkCreateBuffer(m_a.device, &info, nullptr, &buffers[i]), "vkCreateBuffer");
            VkMemoryRequirements req{};
            vkGetBufferMemoryRequirements(m_a.device, buffers[i], &req);
            VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            alloc.allocationSize = req.size;
            alloc.memoryTypeIndex = device_local_type(req.memoryTypeBits);
            check(vkAllocateMemory(m_a.device, &alloc, nullptr, &memory[i]), "vkAllocateMemory");
            check(vkBindBufferMemory(m_a.device, buffers[i], memory[i], 0), "vkBindBufferMemory");
        }
        nlohmann::json row = summary([&] {
            return time_commands([&](VkCommandBuffer cmd) {
                const VkBufferCopy region{0, 0, bytes};
                vkCmdCopyBuffer(cmd, buffers[0], buffers[1], 1, &region);
            });
        });
        row["variant"] = "device-local buffers";
        row["method"] = "buffer copy";
        row["direction"] = "between";
        vkDeviceWaitIdle(m_a.device);
        for (int i = 0; i < 2; ++i) {
            vkDestroyBuffer(m_a.device, buffers[i], nullptr);
            vkFreeMemory(m_a.device, memory[i], nullptr);
        }
        return row;
    }

    // The copy into `variant` and out of it, each `runs` times: p50, min and max in us.
    nlohmann::json measure(const Variant& variant, VkImageUsageFlags usage) {
        Made plain = make(Variant{"plain"}, usage);
        Made shared = make(variant, usage);
        nlohmann::json row;
        row["variant"] = variant.name;
        row["storage_usage"] = (usage & VK_IMAGE_USAGE_STORAGE_BIT) != 0;
        row["memory_type"] = shared.memory_type;
        row["memory_flags"] = m_memory.memoryTypes[shared.memory_type].propertyFlags;
        row["dedicated"] = shared.dedicated;
        first_layouts(plain.image, shared.image);
        for (const bool into : {true, false}) {
            row[into ? "copy_into" : "copy_out_of"] = summary([&] {
                return time_copy(into ? plain.image : shared.image,
                                 into ? shared.image : plain.image, variant.acquired, shared.image);
            });
        }
        destroy(plain);
        destroy(shared);
        return row;
    }

private:
    // `time` called runs + 2 times, the first two a warm-up: p50, min and max in us, and the
    // frame's bytes over the p50.
    nlohmann::json summary(const std::function<double()>& time) const {
        std::vector<double> us;
        for (std::uint32_t r = 0; r < m_options.runs + 2; ++r) {
            const double t = time();
            if (r >= 2) {
                us.push_back(t);
            }
        }
        const double p50 = tandem::detail::median(us);
        nlohmann::json d;
        d["gpu_us_p50"] = p50;
        d["gpu_us_min"] = *std::min_element(us.begin(), us.end());
        d["gpu_us_max"] = *std::max_element(us.begin(), us.end());
        d["frame_gbps"] = 4.0 * m_options.width * m_options.height / (p50 * 1e3);
        d["n"] = us.size();
        return d;
    }

    VkImageView view(VkImage image) const {
        VkImageViewCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        info.image = image;
        info.viewType = VK_IMAGE_VIEW_TYPE_2D;
        info.format = k_format;
        info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkImageView v = VK_NULL_HANDLE;
        check(vkCreateImageView(m_a.device, &info, nullptr, &v), "vkCreateImageView");
        return v;
    }

    // The compute copy's pipeline, its layouts and a descriptor set, made on first use.
    void make_compute() {
        if (m_pipeline != VK_NULL_HANDLE) {
            return;
        }
        VkDescriptorSetLayoutBinding bindings[2] = {};
        for (std::uint32_t i = 0; i < 2; ++i) {
            bindings[i].binding = i;
            bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
            bindings[i].descriptorCount = 1;
            bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        }
        VkDescriptorSetLayoutCreateInfo set_info{
            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        set_info.bindingCount = 2;
        set_info.pBindings = bindings;
        check(vkCreateDescriptorSetLayout(m_a.device, &set_info, nullptr, &m_set_layout),
              "vkCreateDescriptorSetLayout");
        VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout_info.setLayoutCount = 1;
        layout_info.pSetLayouts = &m_set_layout;
        check(vkCreatePipelineLayout(m_a.device, &layout_info, nullptr, &m_pipeline_layout),
              "vkCreatePipelineLayout");
        VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        module_info.codeSize = sizeof(k_copy_image_spirv);
        module_info.pCode = k_copy_image_spirv;
        VkShaderModule module = VK_NULL_HANDLE;
        check(vkCreateShaderModule(m_a.device, &module_info, nullptr, &module),
              "vkCreateShaderModule");
        VkComputePipelineCreateInfo pipeline{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        pipeline.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        pipeline.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        pipeline.stage.module = module;
        pipeline.stage.pName = "main";
        pipeline.layout = m_pipeline_layout;
        const VkResult made = vkCreateComputePipelines(m_a.device, VK_NULL_HANDLE, 1, &pipeline,
                                                       nullptr, &m_pipeline);
        vkDestroyShaderModule(m_a.device, module, nullptr);
        check(made, "vkCreateComputePipelines");
        const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 2};
        VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pool.maxSets = 1;
        pool.poolSizeCount = 1;
        pool.pPoolSizes = &size;
        check(vkCreateDescriptorPool(m_a.device, &pool, nullptr, &m_descriptor_pool),
              "vkCreateDescriptorPool");
        VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        alloc.descriptorPool = m_descriptor_pool;
        alloc.descriptorSetCount = 1;
        alloc.pSetLayouts = &m_set_layout;
        check(vkAllocateDescriptorSets(m_a.device, &alloc, &m_set), "vkAllocateDescriptorSets");
    }

    Made make(const Variant& v, VkImageUsageFlags usage) {
        Made m;
        const Opening& owner = v.imported ? m_b : m_a;
        const std::vector<std::uint32_t> families =
            v.concurrent && owner.copy_family
                ? std::vector<std::uint32_t>{owner.main_family, *owner.copy_family}
                : std::vector<std::uint32_t>{};
        VkExternalMemoryImageCreateInfo external{
            VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
        external.handleTypes = k_handle;
        VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        info.pNext = v.external || v.imported ? &external : nullptr;
        info.imageType = VK_IMAGE_TYPE_2D;
        info.format = k_format;
        info.extent = {m_options.width, m_options.height, 1};
        info.mipLevels = 1;
        info.arrayLayers = 1;
        info.samples = VK_SAMPLE_COUNT_1_BIT;
        info.tiling = VK_IMAGE_TILING_OPTIMAL;
        info.usage = usage;
        info.sharingMode =
            families.empty() ? VK_SHARING_MODE_EXCLUSIVE : VK_SHARING_MODE_CONCURRENT;
        info.queueFamilyIndexCount = static_cast<std::uint32_t>(families.size());
        info.pQueueFamilyIndices = families.data();
        info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        check(vkCreateImage(m_a.device, &info, nullptr, &m.image), "vkCreateImage");
        VkImage source = m.image;
        if (v.imported) {
            check(vkCreateImage(m_b.device, &info, nullptr, &m.exporter_image), "vkCreateImage");
            source = m.exporter_image;
        }
        const VkDevice source_device = v.imported ? m_b.device : m_a.device;
        VkMemoryDedicatedRequirements dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
        VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
        req.pNext = &dedicated;
        VkImageMemoryRequirementsInfo2 req_info{VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2};
        req_info.image = source;
        vkGetImageMemoryRequirements2(source_device, &req_info, &req);
        m.dedicated = dedicated.prefersDedicatedAllocation == VK_TRUE ||
                      dedicated.requiresDedicatedAllocation == VK_TRUE;
        m.memory_type = device_local_type(req.memoryRequirements.memoryTypeBits);

        VkMemoryDedicatedAllocateInfo dedicate{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
        dedicate.image = source;
        VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
        export_info.handleTypes = k_handle;
        export_info.pNext = m.dedicated ? &dedicate : nullptr;
        VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        alloc.allocationSize = req.memoryRequirements.size;
        alloc.memoryTypeIndex = m.memory_type;
        if (v.external || v.imported) {
            alloc.pNext = &export_info;
        } else if (m.dedicated) {
            alloc.pNext = &dedicate;
        }
        VkDeviceMemory& exported = v.imported ? m.exporter_memory : m.memory;
        check(vkAllocateMemory(source_device, &alloc, nullptr, &exported), "vkAllocateMemory");
        check(vkBindImageMemory(source_device, source, exported, 0), "vkBindImageMemory");
        if (v.imported) {
            VkMemoryGetFdInfoKHR get{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
            get.memory = m.exporter_memory;
            get.handleType = k_handle;
            int fd = -1;
            check(m_b.get_memory_fd(m_b.device, &get, &fd), "vkGetMemoryFdKHR");
            VkMemoryDedicatedAllocateInfo dedicate_a{
                VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
            dedicate_a.image = m.image;
            VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
            import.handleType = k_handle;
            import.fd = fd; // owned by the driver once the import succeeds
            import.pNext = m.dedicated ? &dedicate_a : nullptr;
            alloc.pNext = &import;
            check(vkAllocateMemory(m_a.device, &alloc, nullptr, &m.memory),
                  "vkAllocateMemory (import)");
            check(vkBindImageMemory(m_a.device, m.image, m.memory, 0), "vkBindImageMemory");
        }
        return m;
    }

    void destroy(Made& m) {
        vkDeviceWaitIdle(m_a.device);
        vkDestroyImage(m_a.device, m.image, nullptr);
        vkFreeMemory(m_a.device, m.memory, nullptr);
        if (m.exporter_image != VK_NULL_HANDLE) {
            vkDestroyImage(m_b.device, m.exporter_image, nullptr);
            vkFreeMemory(m_b.device, m.exporter_memory, nullptr);
        }
    }

    std::uint32_t device_local_type(std::uint32_t bits) const {
        for (std::uint32_t i = 0; i < m_memory.memoryTypeCount; ++i) {
            if ((bits & (1u << i)) != 0 && (m_memory.memoryTypes[i].propertyFlags &
                                            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0) {
                return i;
            }
        }
        fail("no device-local memory type can hold the image");
    }

    static VkImageMemoryBarrier2 barrier(VkImage image, VkImageLayout from, VkImageLayout to) {
        VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
        b.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        b.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
        b.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        b.dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
        b.oldLayout = from;
        b.newLayout = to;
        b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.image = image;
        b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        return b;
    }

    void pipeline_barriers(VkCommandBuffer cmd, const std::vector<VkImageMemoryBarrier2>& b) {
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.imageMemoryBarrierCount = static_cast<std::uint32_t>(b.size());
        dep.pImageMemoryBarriers = b.data();
        vkCmdPipelineBarrier2(cmd, &dep);
    }

    void submit_and_wait() {
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &m_cmd;
        check(vkQueueSubmit(m_a.queue, 1, &submit, m_fence), "vkQueueSubmit");
        check(vkWaitForFences(m_a.device, 1, &m_fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        check(vkResetFences(m_a.device, 1, &m_fence), "vkResetFences");
    }

    void begin() {
        check(vkResetCommandBuffer(m_cmd, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(m_cmd, &begin), "vkBeginCommandBuffer");
    }

    // Both images to GENERAL, where every copy leaves them (one layout: no transition is timed).
    void first_layouts(VkImage a, VkImage b) {
        begin();
        pipeline_barriers(m_cmd, {barrier(a, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL),
                                  barrier(b, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL)});
        check(vkEndCommandBuffer(m_cmd), "vkEndCommandBuffer");
        submit_and_wait();
    }

    // GPU time of the commands `record` makes, between two timestamps (with a barrier after
    // them, so that their writes finish first); `before` and `after` record outside them.
    double time_commands(const std::function<void(VkCommandBuffer)>& record,
                         const std::function<void(VkCommandBuffer)>& before = {},
                         const std::function<void(VkCommandBuffer)>& after = {}) {
        begin();
        vkCmdResetQueryPool(m_cmd, m_queries, 0, 2);
        if (before) {
            before(m_cmd);
        }
        vkCmdWriteTimestamp2(m_cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, m_queries, 0);
        record(m_cmd);
        VkMemoryBarrier2 done{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
        done.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        done.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
        done.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        done.dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.memoryBarrierCount = 1;
        dep.pMemoryBarriers = &done;
        vkCmdPipelineBarrier2(m_cmd, &dep);
        vkCmdWriteTimestamp2(m_cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, m_queries, 1);
        if (after) {
            after(m_cmd);
        }
        check(vkEndCommandBuffer(m_cmd), "vkEndCommandBuffer");
        submit_and_wait();
        std::uint64_t ticks[2] = {};
        check(vkGetQueryPoolResults(m_a.device, m_queries, 0, 2, sizeof(ticks), ticks,
                                    sizeof(std::uint64_t),
                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
        return static_cast<double>(ticks[1] - ticks[0]) * m_tick_ns / 1e3;
    }

    static void copy_image(VkCommandBuffer cmd, VkImage from, VkImageLayout from_layout, VkImage to,
                           VkImageLayout to_layout, VkExtent2D extent) {
        VkImageCopy region{};
        region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.dstSubresource = region.srcSubresource;
        region.extent = {extent.width, extent.height, 1};
        vkCmdCopyImage(cmd, from, from_layout, to, to_layout, 1, &region);
    }

    // Both images in GENERAL; `shared` acquired from VK_QUEUE_FAMILY_EXTERNAL first (timed too)
    // with `acquire`.
    double time_copy(VkImage from, VkImage to, bool acquire, VkImage shared) {
        return time_commands([&](VkCommandBuffer cmd) {
            if (acquire) {
                VkImageMemoryBarrier2 b =
                    barrier(shared, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL);
                b.srcStageMask = VK_PIPELINE_STAGE_2_NONE;
                b.srcAccessMask = VK_ACCESS_2_NONE;
                b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
                b.dstQueueFamilyIndex = m_a.main_family;
                pipeline_barriers(cmd, {b});
            }
            copy_image(cmd, from, VK_IMAGE_LAYOUT_GENERAL, to, VK_IMAGE_LAYOUT_GENERAL, extent());
        });
    }

    // From TRANSFER_SRC_OPTIMAL into TRANSFER_DST_OPTIMAL; the transitions there and back to
    // GENERAL are not timed.
    double time_copy_optimal(VkImage from, VkImage to) {
        return time_commands(
            [&](VkCommandBuffer cmd) {
                copy_image(cmd, from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to,
                           VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, extent());
            },
            [&](VkCommandBuffer cmd) {
                pipeline_barriers(
                    cmd,
                    {barrier(from, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL),
                     barrier(to, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)});
            },
            [&](VkCommandBuffer cmd) {
                pipeline_barriers(
                    cmd,
                    {barrier(from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL),
                     barrier(to, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL)});
            });
    }

    // The compute shader's copy, both images in GENERAL.
    double time_compute(VkImageView from, VkImageView to) {
        make_compute();
        VkDescriptorImageInfo images[2] = {{VK_NULL_HANDLE, from, VK_IMAGE_LAYOUT_GENERAL},
                                           {VK_NULL_HANDLE, to, VK_IMAGE_LAYOUT_GENERAL}};
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = m_set;
        write.descriptorCount = 2;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
        write.pImageInfo = images;
        vkUpdateDescriptorSets(m_a.device, 1, &write, 0, nullptr);
        return time_commands([&](VkCommandBuffer cmd) {
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_pipeline_layout, 0, 1,
                                    &m_set, 0, nullptr);
            vkCmdDispatch(cmd, (m_options.width + 15) / 16, (m_options.height + 15) / 16, 1);
        });
    }

    [[nodiscard]] VkExtent2D extent() const noexcept { return {m_options.width, m_options.height}; }

    const Options& m_options;
    Opening m_a;
    Opening m_b;
    VkPhysicalDeviceMemoryProperties m_memory{};
    double m_tick_ns = 1;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_cmd = VK_NULL_HANDLE;
    VkQueryPool m_queries = VK_NULL_HANDLE;
    VkFence m_fence = VK_NULL_HANDLE;
    VkDescriptorSetLayout m_set_layout = VK_NULL_HANDLE;
    VkPipelineLayout m_pipeline_layout = VK_NULL_HANDLE;
    VkPipeline m_pipeline = VK_NULL_HANDLE;
    VkDescriptorPool m_descriptor_pool = VK_NULL_HANDLE;
    VkDescriptorSet m_set = VK_NULL_HANDLE; // freed with its pool
};

} // namespace

int main(int argc, char** argv) {
    const Options options = parse(argc, argv);
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "tandem-bench-shared-image";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instance_info.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    check(vkCreateInstance(&instance_info, nullptr, &instance), "vkCreateInstance");
    std::uint32_t count = 0;
    check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> physicals(count);
    check(vkEnumeratePhysicalDevices(instance, &count, physicals.data()),
          "vkEnumeratePhysicalDevices");
    VkPhysicalDevice chosen = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties props{};
    for (VkPhysicalDevice p : physicals) {
        vkGetPhysicalDeviceProperties(p, &props);
        if (std::string(props.deviceName).find(options.device) != std::string::npos) {
            chosen = p;
            break;
        }
    }
    if (chosen == VK_NULL_HANDLE) {
        fail("no Vulkan device's name contains '" + options.device + "'");
    }
    nlohmann::json out;
    out["benchmark"] = "shared-image";
    out["device"] = props.deviceName;
    out["size"] = std::to_string(options.width) + "x" + std::to_string(options.height);
    out["runs"] = options.runs;
    out["percentile_rule"] = "nearest rank";
    {
        Bench bench(chosen, options);
        std::vector<Variant> variants = {
            {"plain"},
            {"concurrent", false, true},
            {"exportable", true},
            {"exportable+concurrent", true, true},
            {"imported", false, false, true},
            {"imported+concurrent", false, true, true},
            {"imported+concurrent, acquired", false, true, true, true},
        };
        if (!bench.has_copy_family()) {
            out["note"] = "no transfer-only queue family: the concurrent variants are exclusive";
        }
        const VkImageUsageFlags slot_usage =
            VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
            VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
        std::printf("%-32s %-8s %14s %14s\n", "variant", "storage", "into (us, GB/s)",
                    "out of (us, GB/s)");
        for (const VkImageUsageFlags usage :
             {slot_usage, slot_usage | VK_IMAGE_USAGE_STORAGE_BIT}) {
            for (const Variant& v : variants) {
                nlohmann::json row = bench.measure(v, usage);
                std::printf("%-32s %-8s %7.1f %6.1f %7.1f %6.1f\n", v.name,
                            (usage & VK_IMAGE_USAGE_STORAGE_BIT) != 0 ? "yes" : "no",
                            row["copy_into"]["gpu_us_p50"].get<double>(),
                            row["copy_into"]["frame_gbps"].get<double>(),
                            row["copy_out_of"]["gpu_us_p50"].get<double>(),
                            row["copy_out_of"]["frame_gbps"].get<double>());
                std::fflush(stdout);
                out["rows"].push_back(std::move(row));
            }
        }
        // How the copy is made, on the plain image and on the zero-copy path's.
        std::printf("\n%-32s %-24s %14s %14s\n", "variant (storage)", "method", "into (us, GB/s)",
                    "out of (us, GB/s)");
        const VkImageUsageFlags storage = slot_usage | VK_IMAGE_USAGE_STORAGE_BIT;
        for (const Variant& v : {variants[0], variants[5]}) {
            const nlohmann::json rows = bench.measure_methods(v, storage);
            const std::size_t methods = rows.size() / 2;
            for (std::size_t m = 0; m < methods; ++m) {
                const nlohmann::json& into = rows[m];
                const nlohmann::json& out_of = rows[m + methods];
                std::printf("%-32s %-24s %7.1f %6.1f %7.1f %6.1f\n", v.name,
                            into["method"].get<std::string>().c_str(),
                            into["gpu_us_p50"].get<double>(), into["frame_gbps"].get<double>(),
                            out_of["gpu_us_p50"].get<double>(), out_of["frame_gbps"].get<double>());
            }
            for (const nlohmann::json& r : rows) {
                out["methods"].push_back(r);
            }
        }
        const nlohmann::json buffers = bench.measure_buffer_copy();
        std::printf("%-32s %-24s %7.1f %6.1f\n", "device-local buffers", "buffer copy",
                    buffers["gpu_us_p50"].get<double>(), buffers["frame_gbps"].get<double>());
        out["methods"].push_back(buffers);
    }
    vkDestroyInstance(instance, nullptr);
    if (!options.json.empty()) {
        std::ofstream(options.json) << out.dump(2) << "\n";
    }
    return 0;
}
