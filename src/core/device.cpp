#include "core/device.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include <dlfcn.h>

#include "core/capabilities.hpp"
#include "core/copy_queue.hpp"
#include "core/embedding.hpp"
#include "core/image_cache.hpp"
#include "core/instance.hpp"
#include "core/log.hpp"
#include "core/memory_pool.hpp"
#include "core/pipeline_shelf.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

VkResult Queue::submit(std::span<const VkSubmitInfo2> submits, VkFence fence) const {
    std::lock_guard lock(*m_lock);
    return vk_status(
        m_submit2(m_queue, static_cast<std::uint32_t>(submits.size()), submits.data(), fence),
        "vkQueueSubmit2");
}

VkResult Queue::submit_one(VkCommandBuffer cmd, std::span<const VkSemaphoreSubmitInfo> waits,
                           std::span<const VkSemaphoreSubmitInfo> signals, VkFence fence) const {
    VkCommandBufferSubmitInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cmd_info.commandBuffer = cmd;
    VkSubmitInfo2 batch{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    batch.waitSemaphoreInfoCount = static_cast<std::uint32_t>(waits.size());
    batch.pWaitSemaphoreInfos = waits.data();
    batch.commandBufferInfoCount = cmd != VK_NULL_HANDLE ? 1u : 0u;
    batch.pCommandBufferInfos = &cmd_info;
    batch.signalSemaphoreInfoCount = static_cast<std::uint32_t>(signals.size());
    batch.pSignalSemaphoreInfos = signals.data();
    return submit({&batch, 1}, fence);
}

VkResult Queue::wait_idle() const {
    std::lock_guard lock(*m_lock);
    return m_wait_idle(m_queue);
}

Device::Device(const Instance& instance, const Adapter& adapter, const DeviceOptions& options)
    : m_physical(adapter.physical), m_info(adapter.info), m_label(options.label),
      m_serialize_host_semaphores(instance.validation() != Validation::Off) {
    if (m_label.empty()) {
        m_label = "device" + std::to_string(m_info.index);
    }
    const auto& f = m_info.features;
    if (!f.timeline_semaphore || !f.synchronization2 || !f.dynamic_rendering) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    "Device " + std::to_string(m_info.index) + " (" + m_info.name +
                        ") lacks timeline semaphores, synchronization2 or dynamic rendering",
                    "Tandem needs a Vulkan 1.3 driver; update the driver or pick another device");
    }

    // Queue families: main = first graphics+compute family; transfer = first transfer-only one.
    std::uint32_t main_family = UINT32_MAX;
    std::uint32_t transfer_family = UINT32_MAX;
    std::uint32_t compute_family = UINT32_MAX;
    for (const auto& q : m_info.queue_families) {
        if (compute_family == UINT32_MAX && q.compute && !q.graphics) {
            compute_family = q.index;
        }
        if (main_family == UINT32_MAX && q.graphics && q.compute) {
            main_family = q.index;
        }
        if (transfer_family == UINT32_MAX && q.transfer && !q.graphics && !q.compute) {
            transfer_family = q.index;
        }
    }
    if (main_family == UINT32_MAX) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    "Device " + m_info.name + " has no queue family with graphics and compute",
                    "Pick another device; `tandem devices` lists the queue families");
    }
    if (!options.dedicated_transfer_queue) {
        transfer_family = UINT32_MAX;
    }
    m_dedicated_transfer = transfer_family != UINT32_MAX;
    const std::uint32_t main_count = m_info.queue_families[main_family].count;

    const float priorities[2] = {1.0f, 1.0f};
    std::vector<VkDeviceQueueCreateInfo> queue_infos;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = main_family;
    qi.queueCount = (!m_dedicated_transfer && main_count > 1) ? 2u : 1u;
    qi.pQueuePriorities = priorities;
    queue_infos.push_back(qi);
    std::uint32_t transfer_count = 0;
    if (m_dedicated_transfer) {
        transfer_count = std::min(2u, m_info.queue_families[transfer_family].count);
        qi.queueFamilyIndex = transfer_family;
        qi.queueCount = transfer_count;
        queue_infos.push_back(qi);
    }
    if (compute_family != UINT32_MAX) {
        qi.queueFamilyIndex = compute_family;
        qi.queueCount = 1;
        queue_infos.push_back(qi);
    }

    // Extensions and features: what exists of what Tandem can use (core/embedding.hpp says what
    // each is for), the same list an application's device is checked against.
    const std::vector<const char*> extensions = extensions_to_enable(m_info);
    m_enabled_extensions.assign(extensions.begin(), extensions.end());
    m_enabled_features = features_to_enable(m_info);
    VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    set_feature_structs(m_enabled_features, f12, f13);
    f12.pNext = &f13;
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features2.pNext = &f12;

    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &features2;
    info.queueCreateInfoCount = static_cast<std::uint32_t>(queue_infos.size());
    info.pQueueCreateInfos = queue_infos.data();
    info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    vk_check(vkCreateDevice(m_physical, &info, nullptr, &m_device),
             "vkCreateDevice on " + m_info.name);

    load_functions(instance, options);
    m_host_timed_queries =
        m_enabled_features.host_query_reset && m_fn.get_calibrated_timestamps != nullptr;

    VkQueue main_queue = VK_NULL_HANDLE;
    vkGetDeviceQueue(m_device, main_family, 0, &main_queue);
    auto main_lock = std::make_shared<std::mutex>();
    m_main = Queue(main_queue, main_family, 0, main_lock);
    if (m_dedicated_transfer) {
        VkQueue q = VK_NULL_HANDLE;
        vkGetDeviceQueue(m_device, transfer_family, 0, &q);
        m_transfer = Queue(q, transfer_family, 0, std::make_shared<std::mutex>());
        m_second_transfer = m_transfer;
        if (transfer_count > 1) {
            vkGetDeviceQueue(m_device, transfer_family, 1, &q);
            m_second_transfer = Queue(q, transfer_family, 1, std::make_shared<std::mutex>());
            name(q, VK_OBJECT_TYPE_QUEUE, m_label + " second transfer queue");
        }
    } else if (main_count > 1) {
        VkQueue q = VK_NULL_HANDLE;
        vkGetDeviceQueue(m_device, main_family, 1, &q);
        m_transfer = Queue(q, main_family, 1, std::make_shared<std::mutex>());
        m_second_transfer = m_transfer;
    } else {
        m_transfer = m_main;
        m_second_transfer = m_main;
    }
    if (compute_family != UINT32_MAX) {
        VkQueue q = VK_NULL_HANDLE;
        vkGetDeviceQueue(m_device, compute_family, 0, &q);
        m_compute = Queue(q, compute_family, 0, std::make_shared<std::mutex>());
        name(q, VK_OBJECT_TYPE_QUEUE, m_label + " compute queue");
    } else {
        m_compute = m_main;
    }
    name(m_device, VK_OBJECT_TYPE_DEVICE, m_label);
    name(m_main.handle(), VK_OBJECT_TYPE_QUEUE, m_label + " main queue");
    if (has_separate_transfer_queue()) {
        name(m_transfer.handle(), VK_OBJECT_TYPE_QUEUE, m_label + " transfer queue");
    }
    vkGetPhysicalDeviceMemoryProperties(m_physical, &m_memory);
    log_debug("device",
              "{}: opened {} (adapter {}), main queue family {}, transfer queue family {}{}",
              m_label, m_info.name, m_info.index, m_main.family(), m_transfer.family(),
              m_dedicated_transfer ? " (dedicated)" : "");
}

Device::Device(const Instance& instance, const Adapter& adapter, const AdoptedDevice& adopted,
               const DeviceOptions& options)
    : m_device(adopted.device), m_owned(false), m_physical(adapter.physical),
      m_label(options.label.empty() ? "application device" : options.label),
      m_enabled_extensions(adopted.enabled_extensions),
      m_enabled_features(adopted.enabled_features),
      m_serialize_host_semaphores(instance.validation() != Validation::Off) {
    if (m_device == VK_NULL_HANDLE) {
        throw Error("The application's VkDevice is null",
                    "Create the device before handing it to Tandem");
    }
    VkPhysicalDeviceProperties props{};
    vkGetPhysicalDeviceProperties(m_physical, &props);
    check_embedded_device(adapter.info, props.apiVersion, m_enabled_extensions, m_enabled_features);
    // From here on Tandem sees only what the application enabled: the pair matrix, negotiation
    // and the self-tests never reach for an extension the device was created without.
    m_info = enabled_view(adapter.info, m_enabled_extensions, m_enabled_features);
    for (const NotEnabled& n : m_info.not_enabled) {
        log_debug("device", "{}: created without {}, which {}", m_label, n.name, n.rules_out);
    }
    if (adopted.queue_family >= m_info.queue_families.size() ||
        adopted.queue_index >= m_info.queue_families[adopted.queue_family].count) {
        throw Error(VK_ERROR_INITIALIZATION_FAILED,
                    "Queue " + std::to_string(adopted.queue_index) + " of family " +
                        std::to_string(adopted.queue_family) + " does not exist on " + m_info.name,
                    "Pass a queue the application created with the device");
    }
    const auto& family = m_info.queue_families[adopted.queue_family];
    if (!family.graphics || !family.compute) {
        throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                    "Queue family " + std::to_string(adopted.queue_family) +
                        " lacks graphics or compute",
                    "Hand Tandem a queue of a graphics+compute family");
    }
    if (adopted.get_instance_proc_addr != nullptr) {
        m_get_instance_proc_addr = adopted.get_instance_proc_addr;
    }
    if (adopted.get_device_proc_addr != nullptr) {
        m_get_device_proc_addr = adopted.get_device_proc_addr;
    }
    load_functions(instance, options);
    m_host_timed_queries =
        m_info.features.host_query_reset && m_fn.get_calibrated_timestamps != nullptr;
    auto lock = adopted.queue_lock ? adopted.queue_lock : std::make_shared<std::mutex>();
    // The queue calls go where the get-proc-addr functions say (a layer's: the next layer down),
    // the queue's lookup too: a layer that keeps the program's queues never takes Tandem's for
    // one of them. Without them, the loader's exported vkGetDeviceQueue, which also sets the
    // queue's loader data (the queue may be one the application never got).
    const auto get_queue = adopted.get_device_proc_addr != nullptr
                               ? reinterpret_cast<PFN_vkGetDeviceQueue>(
                                     m_get_device_proc_addr(m_device, "vkGetDeviceQueue"))
                               : &vkGetDeviceQueue;
    const auto submit2 =
        reinterpret_cast<PFN_vkQueueSubmit2>(m_get_device_proc_addr(m_device, "vkQueueSubmit2"));
    const auto wait_idle =
        reinterpret_cast<PFN_vkQueueWaitIdle>(m_get_device_proc_addr(m_device, "vkQueueWaitIdle"));
    const auto missing = [](const std::string& name) {
        return Error(ErrorCategory::Unsupported,
                     "vkGetDeviceProcAddr(device, \"" + name + "\") answered null",
                     "Create the device with Vulkan 1.3 (or pass the get-proc-addr functions of "
                     "the device's chain in EmbedInfo)");
    };
    if (get_queue == nullptr) {
        throw missing("vkGetDeviceQueue");
    }
    if (submit2 == nullptr) {
        throw missing("vkQueueSubmit2");
    }
    VkQueue queue = VK_NULL_HANDLE;
    get_queue(m_device, adopted.queue_family, adopted.queue_index, &queue);
    m_main = Queue(queue, adopted.queue_family, adopted.queue_index, lock, submit2, wait_idle);
    m_transfer = m_main;
    m_second_transfer = m_main;
    vkGetPhysicalDeviceMemoryProperties(m_physical, &m_memory);
}

void Device::load_functions(const Instance& instance, const DeviceOptions& options) {
    auto load = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
            m_get_device_proc_addr(m_device, name));
    };
    if (enabled(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
        load(m_fn.get_memory_fd, "vkGetMemoryFdKHR");
    }
    if (enabled(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
        load(m_fn.get_memory_host_pointer_properties, "vkGetMemoryHostPointerPropertiesEXT");
    }
    if (enabled(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
        load(m_fn.get_semaphore_fd, "vkGetSemaphoreFdKHR");
        load(m_fn.import_semaphore_fd, "vkImportSemaphoreFdKHR");
    }
    if (enabled(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) {
        // Only where the device calibrates against CLOCK_MONOTONIC (steady_clock's clock).
        // The loader's: the physical device is the application's handle, which a layer's next
        // functions (EmbedInfo::get_instance_proc_addr) would not know.
        auto domains_of = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
            vkGetInstanceProcAddr(instance.handle(),
                                  "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
        std::uint32_t count = 0;
        std::vector<VkTimeDomainEXT> domains;
        if (domains_of != nullptr && domains_of(m_physical, &count, nullptr) == VK_SUCCESS) {
            domains.resize(count);
            if (domains_of(m_physical, &count, domains.data()) != VK_SUCCESS) {
                domains.clear();
            }
        }
        auto has_domain = [&](VkTimeDomainEXT d) {
            return std::find(domains.begin(), domains.end(), d) != domains.end();
        };
        if (has_domain(VK_TIME_DOMAIN_DEVICE_EXT) &&
            has_domain(VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT)) {
            load(m_fn.get_calibrated_timestamps, "vkGetCalibratedTimestampsEXT");
        }
    }
    if (instance.has_debug_utils()) {
        auto iload = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
                m_get_instance_proc_addr(instance.handle(), name));
        };
        if (options.name_objects) {
            iload(m_fn.set_object_name, "vkSetDebugUtilsObjectNameEXT");
        }
        if (validation_layer_races_on_labels(m_device)) {
            log_info("device",
                     "{}: no command-buffer debug labels: the validation layer in use "
                     "races on them across threads (fixed in its 1.3.243)",
                     m_label);
        } else {
            iload(m_fn.cmd_begin_label, "vkCmdBeginDebugUtilsLabelEXT");
            iload(m_fn.cmd_end_label, "vkCmdEndDebugUtilsLabelEXT");
        }
        iload(m_fn.queue_begin_label, "vkQueueBeginDebugUtilsLabelEXT");
        iload(m_fn.queue_end_label, "vkQueueEndDebugUtilsLabelEXT");
    }
}

Device::~Device() {
    if (m_device == VK_NULL_HANDLE) {
        return;
    }
    if (m_owned) {
        vkDeviceWaitIdle(m_device);
    }
    ImageCache::forget_partner(*this); // other devices' idle pairs with an image here
    m_image_cache.reset();             // its images hold ranges of the pool
    m_pipelines.reset();
    m_memory_pool.reset();
    // An application's device is not waited for: of settle()'s leftover fences, only the
    // signalled ones may go (a pending one stays with a GPU that never finished).
    for (VkFence fence : m_unsettled) {
        if (m_owned || vkGetFenceStatus(m_device, fence) != VK_NOT_READY) {
            vkDestroyFence(m_device, fence, nullptr);
        }
    }
    if (m_owned && !m_leave_open) {
        vkDestroyDevice(m_device, nullptr);
    }
}

MemoryPool& Device::memory_pool() const {
    std::call_once(m_memory_pool_once,
                   [this] { m_memory_pool = std::make_unique<MemoryPool>(*this); });
    return *m_memory_pool;
}

ImageCache& Device::image_cache() const {
    std::call_once(m_image_cache_once,
                   [this] { m_image_cache = std::make_unique<ImageCache>(*this); });
    return *m_image_cache;
}

PipelineShelf& Device::pipelines() const {
    std::call_once(m_pipelines_once, [this] { m_pipelines = std::make_unique<PipelineShelf>(); });
    return *m_pipelines;
}

VkResult Device::settle(std::chrono::nanoseconds timeout) const noexcept {
    std::vector<VkFence> fences;
    VkResult result = VK_SUCCESS;
    std::vector<VkQueue> seen;
    for (const Queue* q : {&m_main, &m_transfer, &m_second_transfer, &m_compute}) {
        if (q->handle() == VK_NULL_HANDLE ||
            std::find(seen.begin(), seen.end(), q->handle()) != seen.end()) {
            continue; // roles share VkQueues
        }
        seen.push_back(q->handle());
        VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence = VK_NULL_HANDLE;
        result = vkCreateFence(m_device, &info, nullptr, &fence);
        if (result != VK_SUCCESS) {
            break;
        }
        result = q->submit_one(VK_NULL_HANDLE, {}, {}, fence);
        if (result != VK_SUCCESS) {
            vkDestroyFence(m_device, fence, nullptr); // not submitted
            break;
        }
        fences.push_back(fence);
    }
    if (!fences.empty()) {
        const VkResult waited = vkWaitForFences(
            m_device, static_cast<std::uint32_t>(fences.size()), fences.data(), VK_TRUE,
            static_cast<std::uint64_t>(
                std::max<std::int64_t>(0, static_cast<std::int64_t>(timeout.count()))));
        if (waited == VK_TIMEOUT) {
            // A pending fence must not be destroyed: kept until it is signalled.
            std::lock_guard lock(m_unsettled_lock);
            m_unsettled.insert(m_unsettled.end(), fences.begin(), fences.end());
            return VK_TIMEOUT;
        }
        if (result == VK_SUCCESS) {
            result = waited;
        }
    }
    for (VkFence fence : fences) {
        vkDestroyFence(m_device, fence, nullptr);
    }
    // Fences an earlier call gave up on go once signalled (all of them, after a success here:
    // they were submitted before these).
    std::lock_guard lock(m_unsettled_lock);
    std::erase_if(m_unsettled, [&](VkFence fence) {
        if (vkGetFenceStatus(m_device, fence) == VK_NOT_READY) {
            return false;
        }
        vkDestroyFence(m_device, fence, nullptr);
        return true;
    });
    return result;
}

std::optional<TimestampCalibration> Device::calibrate_timestamps() const {
    if (!m_host_timed_queries) {
        return std::nullopt;
    }
    VkCalibratedTimestampInfoEXT infos[2] = {{VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT},
                                             {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT}};
    infos[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
    infos[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    std::uint64_t stamps[2] = {0, 0};
    std::uint64_t deviation = 0; // the call requires it; nothing here uses it
    if (m_fn.get_calibrated_timestamps(m_device, 2, infos, stamps, &deviation) != VK_SUCCESS) {
        return std::nullopt;
    }
    TimestampCalibration c;
    c.device_ticks = stamps[0];
    c.host_ns = static_cast<std::int64_t>(stamps[1]);
    c.period_ns = m_info.timestamp_period_ns;
    return c;
}

bool Device::enabled(std::string_view extension) const {
    return std::find(m_enabled_extensions.begin(), m_enabled_extensions.end(), extension) !=
           m_enabled_extensions.end();
}

std::uint32_t Device::memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred) const {
    for (int pass = 0; pass < 2; ++pass) {
        const VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
        for (std::uint32_t i = 0; i < m_memory.memoryTypeCount; ++i) {
            if ((type_bits & (1u << i)) != 0 &&
                (m_memory.memoryTypes[i].propertyFlags & want) == want) {
                return i;
            }
        }
    }
    throw Error(VK_ERROR_FEATURE_NOT_PRESENT,
                "Device " + m_info.name + " has no memory type with the properties needed",
                "Pick another device; `tandem devices --json` lists its memory types");
}

VkMemoryPropertyFlags Device::memory_flags(std::uint32_t type) const noexcept {
    return type < m_memory.memoryTypeCount ? m_memory.memoryTypes[type].propertyFlags : 0;
}

void Device::set_name(VkObjectType type, std::uint64_t handle, const std::string& text) const {
    if (m_fn.set_object_name == nullptr || handle == 0) {
        return;
    }
    VkDebugUtilsObjectNameInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
    info.objectType = type;
    info.objectHandle = handle;
    info.pObjectName = text.c_str();
    m_fn.set_object_name(m_device, &info);
}

void Device::begin_label(VkCommandBuffer cmd, const char* text) const {
    if (m_fn.cmd_begin_label == nullptr) {
        return;
    }
    VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
    label.pLabelName = text;
    m_fn.cmd_begin_label(cmd, &label);
}

void Device::end_label(VkCommandBuffer cmd) const {
    if (m_fn.cmd_end_label != nullptr) {
        m_fn.cmd_end_label(cmd);
    }
}

bool validation_layer_races_on_labels(VkDevice device) noexcept {
    // Whose entry point the device's label command is: the first layer that intercepts it.
    const PFN_vkVoidFunction entry = vkGetDeviceProcAddr(device, "vkCmdBeginDebugUtilsLabelEXT");
    Dl_info where{};
    if (entry == nullptr || dladdr(reinterpret_cast<void*>(entry), &where) == 0 ||
        where.dli_fname == nullptr ||
        std::string_view(where.dli_fname).find("VkLayer_khronos_validation") ==
            std::string_view::npos) {
        return false;
    }
    std::uint32_t count = 0;
    std::vector<VkLayerProperties> layers;
    try {
        if (vkEnumerateInstanceLayerProperties(&count, nullptr) == VK_SUCCESS) {
            layers.resize(count);
            if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) {
                count = 0;
            }
        }
    } catch (...) {
        count = 0;
    }
    for (std::uint32_t i = 0; i < count && i < layers.size(); ++i) {
        if (std::string_view(layers[i].layerName) == "VK_LAYER_KHRONOS_validation") {
            return layers[i].specVersion < VK_MAKE_API_VERSION(0, 1, 3, 243);
        }
    }
    return true; // its version unknown: as the old one
}

} // namespace tandem::detail
