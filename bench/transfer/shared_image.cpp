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
// and again with storage added (a compute workload's output). Plain Vulkan: no Tandem library.
//
//   tandem-bench-shared-image [--device NAME-PART] [--size WxH] [--runs N] [--json FILE]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <vulkan/vulkan.h>

#include "core/stats.hpp"

namespace {

constexpr VkFormat k_format = VK_FORMAT_R8G8B8A8_UNORM;
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
        vkDestroyFence(m_a.device, m_fence, nullptr);
        vkDestroyQueryPool(m_a.device, m_queries, nullptr);
        vkDestroyCommandPool(m_a.device, m_pool, nullptr);
        vkDestroyDevice(m_a.device, nullptr);
        vkDestroyDevice(m_b.device, nullptr);
    }
    Bench(const Bench&) = delete;
    Bench& operator=(const Bench&) = delete;

    [[nodiscard]] bool has_copy_family() const noexcept { return m_a.copy_family.has_value(); }

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
        const double bytes = 4.0 * m_options.width * m_options.height;
        for (const bool into : {true, false}) {
            std::vector<double> us;
            for (std::uint32_t r = 0; r < m_options.runs + 2; ++r) {
                const double t =
                    time_copy(into ? plain.image : shared.image, into ? shared.image : plain.image,
                              variant.acquired, shared.image);
                if (r >= 2) { // two warm-up copies
                    us.push_back(t);
                }
            }
            const double p50 = tandem::detail::median(us);
            nlohmann::json d;
            d["gpu_us_p50"] = p50;
            d["gpu_us_min"] = *std::min_element(us.begin(), us.end());
            d["gpu_us_max"] = *std::max_element(us.begin(), us.end());
            d["frame_gbps"] = bytes / (p50 * 1e3);
            d["n"] = us.size();
            row[into ? "copy_into" : "copy_out_of"] = d;
        }
        destroy(plain);
        destroy(shared);
        return row;
    }

private:
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

    double time_copy(VkImage from, VkImage to, bool acquire, VkImage shared) {
        begin();
        vkCmdResetQueryPool(m_cmd, m_queries, 0, 2);
        vkCmdWriteTimestamp2(m_cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, m_queries, 0);
        if (acquire) {
            VkImageMemoryBarrier2 b =
                barrier(shared, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL);
            b.srcStageMask = VK_PIPELINE_STAGE_2_NONE;
            b.srcAccessMask = VK_ACCESS_2_NONE;
            b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
            b.dstQueueFamilyIndex = m_a.main_family;
            pipeline_barriers(m_cmd, {b});
        }
        VkImageCopy region{};
        region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.dstSubresource = region.srcSubresource;
        region.extent = {m_options.width, m_options.height, 1};
        vkCmdCopyImage(m_cmd, from, VK_IMAGE_LAYOUT_GENERAL, to, VK_IMAGE_LAYOUT_GENERAL, 1,
                       &region);
        // The copy's writes finish before the second timestamp.
        pipeline_barriers(m_cmd, {barrier(to, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL)});
        vkCmdWriteTimestamp2(m_cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, m_queries, 1);
        check(vkEndCommandBuffer(m_cmd), "vkEndCommandBuffer");
        submit_and_wait();
        std::uint64_t ticks[2] = {};
        check(vkGetQueryPoolResults(m_a.device, m_queries, 0, 2, sizeof(ticks), ticks,
                                    sizeof(std::uint64_t),
                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
        return static_cast<double>(ticks[1] - ticks[0]) * m_tick_ns / 1e3;
    }

    const Options& m_options;
    Opening m_a;
    Opening m_b;
    VkPhysicalDeviceMemoryProperties m_memory{};
    double m_tick_ns = 1;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_cmd = VK_NULL_HANDLE;
    VkQueryPool m_queries = VK_NULL_HANDLE;
    VkFence m_fence = VK_NULL_HANDLE;
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
    }
    vkDestroyInstance(instance, nullptr);
    if (!options.json.empty()) {
        std::ofstream(options.json) << out.dump(2) << "\n";
    }
    return 0;
}
