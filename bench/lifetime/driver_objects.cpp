// tandem-bench-driver-objects: what the driver keeps of each kind of Vulkan object a task's life
// creates and destroys. For each kind, --cycles create/destroy cycles on one opening of the
// first physical device (after a hundredth as many, at least 50, that warm up), and device
// memory (VK_EXT_memory_budget's heap usage, summed over heaps), host RSS (after malloc_trim)
// and the heap in use, after over before, as bytes per cycle; an empty batch is submitted and
// waited for before each measurement. The kinds are the objects a task instance holds: its slot
// images (a dedicated allocation each, as Tandem made them before its memory pool; from the
// pool, as create_image makes them now; bound into one long-lived block), staging buffers (from
// the pool), memory exported to a second opening and imported there (alone, and as the zero-copy
// path's slot images: an image on each side), timeline semaphores (local, and exported to a second
// opening), command pools, fences, a one-shot submission waited for (set-up work), timestamp pools,
// a compute pipeline, a descriptor pool, the whole pattern workload (whose pipeline the device's
// pipeline shelf keeps) and an empty batch signalling a timeline (a retirement marker). A kind
// whose growth per cycle is zero gives everything back.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <vulkan/vulkan.h>

#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "core/pipeline_shelf.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "harness/cpu_threads.hpp"
#include "shaders/embedded.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "transfer/opaque_fd_memory.hpp"
#include "workloads/pattern.hpp"

namespace {

using namespace tandem;
using namespace tandem::detail;

constexpr std::uint32_t k_width = 64;
constexpr std::uint32_t k_height = 48;

std::uint64_t rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Heap usage of `physical` over all its heaps (VK_EXT_memory_budget); nullopt without it.
std::optional<std::uint64_t> device_usage(const Adapter& adapter) {
    const auto& ext = adapter.info.extensions;
    if (std::find(ext.begin(), ext.end(), VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) == ext.end()) {
        return std::nullopt;
    }
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 memory{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    memory.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(adapter.physical, &memory);
    std::uint64_t total = 0;
    for (std::uint32_t h = 0; h < memory.memoryProperties.memoryHeapCount; ++h) {
        total += budget.heapUsage[h];
    }
    return total;
}

std::string fmt_bytes_per_cycle(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%+10.1f B/cycle", bytes);
    return text;
}

struct Kind {
    std::string name;
    std::function<void()> cycle; // creates the objects and destroys them again
};

VkImageCreateInfo slot_image_info() {
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = VK_FORMAT_R8G8B8A8_UNORM;
    info.extent = {k_width, k_height, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage =
        VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    return info;
}

// A view of `image` created and destroyed, as each slot image has one.
void view_cycle(const Device& device, VkImage image, VkFormat format) {
    VkImageViewCreateInfo view_info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view_info.image = image;
    view_info.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view_info.format = format;
    view_info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkImageView view = VK_NULL_HANDLE;
    vk_check(vkCreateImageView(device.handle(), &view_info, nullptr, &view), "vkCreateImageView");
    vkDestroyImageView(device.handle(), view, nullptr);
}

// An image and its view bound into `block` at offset 0: no allocation of its own.
void suballocated_image(const Device& device, VkDeviceMemory block) {
    const VkDevice dev = device.handle();
    const VkImageCreateInfo info = slot_image_info();
    VkImage image = VK_NULL_HANDLE;
    vk_check(vkCreateImage(dev, &info, nullptr, &image), "vkCreateImage suballocated");
    vk_check(vkBindImageMemory(dev, image, block, 0), "vkBindImageMemory suballocated");
    view_cycle(device, image, info.format);
    vkDestroyImage(dev, image, nullptr);
}

// A slot image with a dedicated allocation of its own (what create_image did before the memory
// pool), with its view.
void dedicated_image(const Device& device) {
    const VkDevice dev = device.handle();
    const VkImageCreateInfo info = slot_image_info();
    VkImage image = VK_NULL_HANDLE;
    vk_check(vkCreateImage(dev, &info, nullptr, &image), "vkCreateImage dedicated");
    VkMemoryRequirements req{};
    vkGetImageMemoryRequirements(dev, image, &req);
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.image = image;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = &dedicated;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex =
        device.memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(dev, &alloc, nullptr, &memory), "vkAllocateMemory dedicated");
    vk_check(vkBindImageMemory(dev, image, memory, 0), "vkBindImageMemory dedicated");
    view_cycle(device, image, info.format);
    vkDestroyImage(dev, image, nullptr);
    vkFreeMemory(dev, memory, nullptr);
}

// A slot's worth of memory exported as an opaque fd and imported on `second` (the zero-copy
// path's slot images between two openings of one GPU), both freed.
void exported_memory(const Device& device, const Device& second) {
    constexpr VkDeviceSize bytes = VkDeviceSize{k_width} * k_height * 4;
    const std::uint32_t type = device.memory_type(~0u, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    const Handle<VkDeviceMemory> exported =
        allocate_exportable_memory(device, bytes, type, {}, "exported");
    const int fd = export_memory_fd(device, exported.get(), "exported");
    const Handle<VkDeviceMemory> imported =
        import_memory_fd(second, fd, bytes, type, {}, "imported");
}

// An external-memory slot image on each opening, sharing one dedicated allocation exported
// from `device` and imported on `second` (as the zero-copy path makes a task's slot images),
// with their views.
void exported_image_pair(const Device& device, const Device& second) {
    VkExternalMemoryImageCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkImageCreateInfo info = slot_image_info();
    info.pNext = &external;
    VkImage images[2] = {};
    const Device* sides[2] = {&device, &second};
    for (int i = 0; i < 2; ++i) {
        vk_check(vkCreateImage(sides[i]->handle(), &info, nullptr, &images[i]),
                 "vkCreateImage exported");
    }
    VkMemoryRequirements req{};
    vkGetImageMemoryRequirements(device.handle(), images[0], &req);
    const std::uint32_t type =
        device.memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    {
        const Handle<VkDeviceMemory> exported =
            allocate_exportable_memory(device, req.size, type, {images[0]}, "exported image");
        const int fd = export_memory_fd(device, exported.get(), "exported image");
        const Handle<VkDeviceMemory> imported =
            import_memory_fd(second, fd, req.size, type, {images[1]}, "imported image");
        vk_check(vkBindImageMemory(device.handle(), images[0], exported.get(), 0),
                 "vkBindImageMemory exported");
        vk_check(vkBindImageMemory(second.handle(), images[1], imported.get(), 0),
                 "vkBindImageMemory imported");
        for (int i = 0; i < 2; ++i) {
            view_cycle(*sides[i], images[i], info.format);
            vkDestroyImage(sides[i]->handle(), images[i], nullptr);
        }
    }
}

// One long-lived block large enough for a slot image, device-local.
Handle<VkDeviceMemory> image_block(const Device& device) {
    const VkDevice dev = device.handle();
    const VkImageCreateInfo info = slot_image_info();
    VkImage probe = VK_NULL_HANDLE;
    vk_check(vkCreateImage(dev, &info, nullptr, &probe), "vkCreateImage probe");
    VkMemoryRequirements req{};
    vkGetImageMemoryRequirements(dev, probe, &req);
    vkDestroyImage(dev, probe, nullptr);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex =
        device.memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(dev, &alloc, nullptr, &memory), "vkAllocateMemory block");
    return Handle<VkDeviceMemory>(memory,
                                  [dev](VkDeviceMemory m) { vkFreeMemory(dev, m, nullptr); });
}

// The pattern shader's set layout: one storage image.
Handle<VkDescriptorSetLayout> storage_image_layout(VkDevice dev) {
    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    info.bindingCount = 1;
    info.pBindings = &binding;
    VkDescriptorSetLayout layout = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorSetLayout(dev, &info, nullptr, &layout),
             "vkCreateDescriptorSetLayout");
    return Handle<VkDescriptorSetLayout>(
        layout, [dev](VkDescriptorSetLayout l) { vkDestroyDescriptorSetLayout(dev, l, nullptr); });
}

// The pattern shader's set layout, pipeline layout and compute pipeline alone, created and
// destroyed (what each task made before the device's pipeline shelf).
void compute_pipeline(const Device& device) {
    const VkDescriptorSetLayoutBinding target{0, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 1,
                                              VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    (void)build_compute_pipeline(device, shaders::pattern_comp(), {&target, 1},
                                 3 * sizeof(std::uint32_t), "pattern pipeline");
}

// A descriptor pool of three storage-image sets (one per slot), allocated and destroyed.
void descriptor_pool(VkDevice dev, VkDescriptorSetLayout set_layout) {
    constexpr std::uint32_t slots = 3;
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, slots};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = slots;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(dev, &info, nullptr, &pool), "vkCreateDescriptorPool");
    const VkDescriptorSetLayout layouts[slots] = {set_layout, set_layout, set_layout};
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pool;
    alloc.descriptorSetCount = slots;
    alloc.pSetLayouts = layouts;
    VkDescriptorSet sets[slots] = {};
    vk_check(vkAllocateDescriptorSets(dev, &alloc, sets), "vkAllocateDescriptorSets");
    vkDestroyDescriptorPool(dev, pool, nullptr);
}

// An empty batch on the main queue signalling `marker`, waited for. Before each measurement too:
// a driver may defer destroying objects to its next submission (lavapipe does so for pipelines),
// and the runtime submits all the time.
void marker_batch(const Device& device, TimelineSemaphore& marker, std::uint64_t& value) {
    const VkSemaphoreSubmitInfo signal =
        marker.submit_info(++value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    vk_check(device.queue(QueueRole::Main).submit_one(VK_NULL_HANDLE, {}, std::span(&signal, 1)),
             "vkQueueSubmit2 marker");
    vk_check(marker.wait(value, std::chrono::seconds(10)), "marker wait");
}

std::vector<Kind> kinds(const Device& device, const Device* second, VkDeviceMemory block,
                        VkDescriptorSetLayout set_layout, TimelineSemaphore& marker,
                        std::uint64_t& marker_value) {
    std::vector<Kind> out;
    out.push_back({"slot_image_dedicated", [&device] { dedicated_image(device); }});
    out.push_back({"slot_image_pooled", [&device] {
                       ImageDesc desc;
                       desc.width = k_width;
                       desc.height = k_height;
                       desc.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                                    VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
                       desc.name = "slot";
                       (void)create_image(device, desc);
                   }});
    out.push_back(
        {"slot_image_suballocated", [&device, block] { suballocated_image(device, block); }});
    out.push_back({"staging_buffer_pooled", [&device] {
                       BufferDesc desc;
                       desc.size = std::uint64_t{k_width} * k_height * 4;
                       desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
                       desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
                       desc.name = "staging";
                       (void)create_buffer(device, desc);
                   }});
    if (second != nullptr && device.enabled(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) &&
        second->enabled(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
        out.push_back({"exported_memory", [&device, second] { exported_memory(device, *second); }});
        out.push_back(
            {"exported_image_pair", [&device, second] { exported_image_pair(device, *second); }});
    }
    out.push_back({"timeline_semaphore", [&device] { TimelineSemaphore t(device, "timeline"); }});
    bool exports_timelines = second != nullptr;
    if (exports_timelines) {
        try {
            const TimelineSemaphore probe(device, "export probe", 0, true);
        } catch (const Error& e) {
            std::fprintf(stderr, "timeline_semaphore_shared left out: %s\n", e.what());
            exports_timelines = false;
        }
    }
    if (exports_timelines) {
        out.push_back({"timeline_semaphore_shared", [&device, second] {
                           TimelineSemaphore t(device, "shared timeline", 0, true);
                           const TimelineSemaphore imported =
                               TimelineSemaphore::import_from(*second, t, "imported timeline");
                       }});
    }
    out.push_back({"command_pool", [&device] {
                       CommandPool pool(device, device.queue(QueueRole::Main).family(), "pool");
                       (void)pool.allocate("cmd");
                   }});
    out.push_back({"fence", [&device] { (void)create_fence(device, "fence"); }});
    out.push_back({"one_shot_submit", [&device] {
                       submit_and_wait(device, QueueRole::Main, [](VkCommandBuffer) {});
                   }});
    out.push_back({"timestamp_pool",
                   [&device] { (void)create_timestamp_pool(device, QueueRole::Main, 8, "ts"); }});
    out.push_back({"compute_pipeline", [&device] { compute_pipeline(device); }});
    out.push_back({"descriptor_pool",
                   [&device, set_layout] { descriptor_pool(device.handle(), set_layout); }});
    out.push_back({"pattern_workload", [&device] {
                       WorkloadParams params;
                       params.task_name = "churn";
                       params.width = k_width;
                       params.height = k_height;
                       PatternWorkload workload(device, params);
                   }});
    out.push_back({"marker_batch", [&device, &marker, &marker_value] {
                       marker_batch(device, marker, marker_value);
                   }});
    return out;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"tandem-bench-driver-objects: what the driver keeps of each kind of Vulkan object "
                 "a task creates and destroys"};
    std::uint64_t cycles = 10000;
    std::string only;
    std::string machine;
    std::string json_file;
    std::string validation = "off";
    app.add_option("--cycles", cycles, "create/destroy cycles per kind")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--kind", only, "only this kind (default: every kind)");
    app.add_option("--machine", machine, "A sentence describing the machine, for the JSON");
    app.add_option("--json", json_file, "Write the results as JSON to FILE");
    app.add_option("--validation", validation, "off, core or sync")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    tandem::harness::keep_cores_from_cpu_devices(); // before any instance: lavapipe reads it

    try {
        const auto level = parse_validation(validation);
        if (!level) {
            throw Error("--validation '" + validation + "' is not a level",
                        "Use off, core or sync");
        }
        InstanceOptions instance_options;
        instance_options.validation = *level;
        const Instance instance(instance_options);
        std::vector<Adapter> adapters = discover_adapters(instance, 2);
        if (adapters.empty()) {
            throw Error("No Vulkan device",
                        "Install a Vulkan driver (lavapipe: mesa-vulkan-drivers)");
        }
        DeviceOptions options;
        options.label = "device";
        const Device device(instance, adapters[0], options);
        std::optional<Device> second;
        if (adapters.size() > 1 && adapters[1].physical == adapters[0].physical) {
            options.label = "second opening";
            second.emplace(instance, adapters[1], options);
        }
        const Handle<VkDeviceMemory> block = image_block(device);
        TimelineSemaphore marker(device, "marker");
        std::uint64_t marker_value = 0;

        nlohmann::json rows = nlohmann::json::array();
        const std::uint64_t warm = std::max<std::uint64_t>(cycles / 100, 50);
        const Handle<VkDescriptorSetLayout> set_layout = storage_image_layout(device.handle());
        for (const Kind& kind : kinds(device, second ? &*second : nullptr, block.get(),
                                      set_layout.get(), marker, marker_value)) {
            if (!only.empty() && kind.name != only) {
                continue;
            }
            for (std::uint64_t i = 0; i < warm; ++i) {
                kind.cycle();
            }
            marker_batch(device, marker, marker_value);
            (void)malloc_trim(0);
            const auto device_before = device_usage(adapters[0]);
            const std::uint64_t rss_before = rss_bytes();
            const std::uint64_t heap_before = mallinfo2().uordblks;
            for (std::uint64_t i = 0; i < cycles; ++i) {
                kind.cycle();
            }
            marker_batch(device, marker, marker_value);
            (void)malloc_trim(0);
            const auto device_after = device_usage(adapters[0]);
            const std::uint64_t rss_after = rss_bytes();
            const std::uint64_t heap_after = mallinfo2().uordblks;
            const auto per_cycle = [cycles](std::uint64_t before, std::uint64_t after) {
                return (static_cast<double>(after) - static_cast<double>(before)) /
                       static_cast<double>(cycles);
            };
            nlohmann::json row = {{"name", kind.name},
                                  {"cycles", cycles},
                                  {"rss_before", rss_before},
                                  {"rss_after", rss_after},
                                  {"rss_bytes_per_cycle", per_cycle(rss_before, rss_after)},
                                  {"heap_bytes_per_cycle", per_cycle(heap_before, heap_after)}};
            if (device_before && device_after) {
                row["device_before"] = *device_before;
                row["device_after"] = *device_after;
                row["device_bytes_per_cycle"] = per_cycle(*device_before, *device_after);
            }
            const std::string device_text =
                row.contains("device_bytes_per_cycle")
                    ? fmt_bytes_per_cycle(row["device_bytes_per_cycle"].get<double>())
                    : std::string("(no memory budget)");
            std::fprintf(stderr, "%-26s device %s   RSS %s   heap %s\n", kind.name.c_str(),
                         device_text.c_str(),
                         fmt_bytes_per_cycle(row["rss_bytes_per_cycle"].get<double>()).c_str(),
                         fmt_bytes_per_cycle(row["heap_bytes_per_cycle"].get<double>()).c_str());
            rows.push_back(row);
        }
        if (instance.validation_messages() != 0) {
            throw Error("The validation layer reported " +
                            std::to_string(instance.validation_messages()) +
                            " message(s): " + instance.last_validation_message(),
                        "Each one is a bug in this benchmark or in Tandem");
        }
        const nlohmann::json doc = {
            {"benchmark", "driver_objects"},
            {"config",
             {{"cycles", cycles}, {"size", {k_width, k_height}}, {"validation", validation}}},
            {"machine",
             {{"description", machine},
              {"device", device.info().name},
              {"driver", device.info().driver_info},
              {"second_opening", second.has_value()}}},
            {"rows", rows}};
        if (!json_file.empty()) {
            std::ofstream(json_file) << doc.dump(2) << "\n";
        } else {
            std::printf("%s\n", doc.dump(2).c_str());
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tandem-bench-driver-objects: %s\n", e.what());
        return 1;
    }
}
