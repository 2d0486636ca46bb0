#include "core/capabilities.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/cuda_driver.hpp"
#include "core/embedding.hpp"
#include "core/vk_check.hpp"

namespace tandem {

std::string to_string(const Uuid& uuid) {
    std::string text;
    char buffer[3];
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            text += '-';
        }
        std::snprintf(buffer, sizeof buffer, "%02x", uuid[i]);
        text += buffer;
    }
    return text;
}

const char* to_string(TransferPath path) noexcept {
    switch (path) {
    case TransferPath::SameDevice:
        return "same-device";
    case TransferPath::ZeroCopy:
        return "zero-copy";
    case TransferPath::SharedMemory:
        return "shared-memory";
    case TransferPath::CudaPeer:
        return "cuda-peer";
    case TransferPath::HostImported:
        return "host-imported";
    case TransferPath::HostCopy:
        return "host-copy";
    }
    return "?";
}

std::optional<TransferPath> parse_transfer_path(std::string_view text) noexcept {
    for (TransferPath path : k_all_transfer_paths) {
        if (text == to_string(path)) {
            return path;
        }
    }
    return std::nullopt;
}

std::string transfer_path_names(std::string_view last) {
    std::string out;
    for (std::size_t i = 0; i < k_all_transfer_paths.size(); ++i) {
        if (i > 0) {
            out += i + 1 == k_all_transfer_paths.size() ? std::string(last) : std::string(", ");
        }
        out += to_string(k_all_transfer_paths[i]);
    }
    return out;
}

std::optional<TransferPath> PairInfo::best_path() const {
    for (const auto& p : paths) {
        if (p.available) {
            return p.path;
        }
    }
    return std::nullopt;
}

bool PairInfo::allows(TransferPath path) const {
    return std::any_of(paths.begin(), paths.end(),
                       [&](const auto& p) { return p.path == path && p.available; });
}

} // namespace tandem

namespace tandem::detail {

namespace {

std::string vendor_name(std::uint32_t id) {
    switch (id) {
    case 0x10DE:
        return "NVIDIA";
    case 0x1002:
        return "AMD";
    case 0x8086:
        return "Intel";
    case 0x13B5:
        return "ARM";
    case 0x5143:
        return "Qualcomm";
    case 0x1010:
        return "ImgTec";
    case 0x10005:
        return "Mesa";
    default:
        return "unknown";
    }
}

std::string type_name(VkPhysicalDeviceType type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return "cpu";
    default:
        return "other";
    }
}

std::string version_text(std::uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
           "." + std::to_string(VK_API_VERSION_PATCH(v));
}

// As lspci -D prints it, so users can copy it from either: "0000:3b:00.0".
std::string pci_address_text(std::uint32_t domain, std::uint32_t bus, std::uint32_t device,
                             std::uint32_t function) {
    char text[32];
    std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", domain, bus, device, function);
    return text;
}

// Vendors encode driverVersion differently; NVIDIA uses 10.8.8.6 bits.
std::string driver_version_text(std::uint32_t vendor, std::uint32_t v) {
    if (vendor == 0x10DE) {
        return std::to_string((v >> 22) & 0x3ff) + "." + std::to_string((v >> 14) & 0xff) + "." +
               std::to_string((v >> 6) & 0xff) + "." + std::to_string(v & 0x3f);
    }
    return version_text(v);
}

bool external_buffer_supported(VkPhysicalDevice physical,
                               VkExternalMemoryHandleTypeFlagBits handle_type) {
    VkPhysicalDeviceExternalBufferInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
    info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.handleType = handle_type;
    VkExternalBufferProperties props{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    vkGetPhysicalDeviceExternalBufferProperties(physical, &info, &props);
    const auto features = props.externalMemoryProperties.externalMemoryFeatures;
    if (handle_type == VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT) {
        return (features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) != 0;
    }
    return (features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) != 0 &&
           (features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) != 0;
}

bool external_semaphore_supported(VkPhysicalDevice physical, VkSemaphoreType type) {
    VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type_info.semaphoreType = type;
    VkPhysicalDeviceExternalSemaphoreInfo info{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO};
    info.pNext = &type_info;
    info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalSemaphoreProperties props{VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    vkGetPhysicalDeviceExternalSemaphoreProperties(physical, &info, &props);
    const auto features = props.externalSemaphoreFeatures;
    return (features & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) != 0 &&
           (features & VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT) != 0;
}

// What the zero-copy path exports and imports: an optimal 2D RGBA8 image of the slot usage.
bool external_image_supported(VkPhysicalDevice physical) {
    VkPhysicalDeviceExternalImageFormatInfo external{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO};
    external.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkPhysicalDeviceImageFormatInfo2 info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2};
    info.pNext = &external;
    info.format = VK_FORMAT_R8G8B8A8_UNORM;
    info.type = VK_IMAGE_TYPE_2D;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                 VK_IMAGE_USAGE_SAMPLED_BIT;
    VkExternalImageFormatProperties external_props{
        VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};
    VkImageFormatProperties2 props{VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2};
    props.pNext = &external_props;
    if (vkGetPhysicalDeviceImageFormatProperties2(physical, &info, &props) != VK_SUCCESS) {
        return false;
    }
    const auto features = external_props.externalMemoryProperties.externalMemoryFeatures;
    return (features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) != 0 &&
           (features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) != 0;
}

// The CUDA device with `info`'s device UUID, and the peers it can access. The NVIDIA driver gives
// a GPU the same UUID in Vulkan and in CUDA.
CudaDeviceInfo query_cuda(const DeviceInfo& info) {
    CudaDeviceInfo out;
    const CudaDriver& cuda = cuda_driver();
    if (!cuda.ready) {
        out.reason = cuda.error;
        return out;
    }
    if (info.vendor_id != 0x10DE) {
        out.reason = "not an NVIDIA GPU: CUDA does not drive it";
        return out;
    }
    int count = 0;
    if (const auto r = cuda.cuDeviceGetCount(&count); r != cuda::CUDA_SUCCESS) {
        out.reason = cuda.describe("cuDeviceGetCount", r);
        return out;
    }
    std::vector<std::pair<cuda::CUdevice, Uuid>> devices;
    for (int i = 0; i < count; ++i) {
        cuda::CUdevice device = 0;
        cuda::CUuuid uuid{};
        if (cuda.cuDeviceGet(&device, i) != cuda::CUDA_SUCCESS ||
            cuda.cuDeviceGetUuid(&uuid, device) != cuda::CUDA_SUCCESS) {
            continue;
        }
        Uuid id{};
        std::copy(std::begin(uuid.bytes), std::end(uuid.bytes), id.begin());
        if (id == info.device_uuid) {
            out.ordinal = i;
        }
        devices.emplace_back(device, id);
    }
    if (out.ordinal < 0) {
        out.reason = "none of the " + std::to_string(count) +
                     " CUDA devices has this GPU's device UUID (hidden by "
                     "CUDA_VISIBLE_DEVICES?)";
        return out;
    }
    const cuda::CUdevice self = devices[static_cast<std::size_t>(out.ordinal)].first;
    for (const auto& [device, id] : devices) {
        int can = 0;
        if (device != self &&
            cuda.cuDeviceCanAccessPeer(&can, self, device) == cuda::CUDA_SUCCESS && can != 0) {
            out.peers.push_back(id);
        }
    }
    out.present = true;
    out.reason = "CUDA device " + std::to_string(out.ordinal) + ", with peer access to " +
                 std::to_string(out.peers.size()) + " other GPU(s)";
    return out;
}

InteropAvailability cuda_peer(const DeviceInfo& worker, const DeviceInfo& primary) {
    InteropAvailability a;
    if (worker.index == primary.index) {
        a.reason = "not needed: worker and primary share one VkDevice";
    } else if (!worker.cuda.present || !primary.cuda.present) {
        const bool both = !worker.cuda.present && !primary.cuda.present &&
                          worker.cuda.reason == primary.cuda.reason;
        a.reason = both                   ? worker.cuda.reason
                   : !worker.cuda.present ? "the worker: " + worker.cuda.reason
                                          : "the primary: " + primary.cuda.reason;
    } else if (worker.device_uuid == primary.device_uuid) {
        a.reason = "one GPU (equal device UUIDs): there is no peer to copy to; zero-copy applies";
    } else if (std::find(worker.cuda.peers.begin(), worker.cuda.peers.end(), primary.device_uuid) ==
               worker.cuda.peers.end()) {
        a.reason = "CUDA reports no peer access from device " +
                   std::to_string(worker.cuda.ordinal) + " to device " +
                   std::to_string(primary.cuda.ordinal) + " (cuDeviceCanAccessPeer)";
    } else {
        a.present = true;
        a.reason = "CUDA devices " + std::to_string(worker.cuda.ordinal) + " -> " +
                   std::to_string(primary.cuda.ordinal) +
                   " with peer access: Vulkan memory imported into CUDA on each GPU, one peer "
                   "copy over NVLink/PCIe (tandem-bench-transfer --cuda-check)";
    }
    return a;
}

// Why one side of a pair lacks what `extension` gives: the application created that device
// without it (only an application's device lists what it left out), or `driver_reason`.
std::string lack_reason(const DeviceInfo& device, const char* side, const char* extension,
                        std::string driver_reason) {
    if (find_not_enabled(device, extension) != nullptr) {
        return std::string(extension) + " is not enabled on the " + side +
               " (the application's device was created without it)";
    }
    return driver_reason;
}

// The cuda-peer path: a peer copy between two GPUs, or a copy within one GPU opened twice.
PathAvailability cuda_path(const DeviceInfo& worker, const DeviceInfo& primary) {
    PathAvailability a;
    a.path = TransferPath::CudaPeer;
    const InteropAvailability peer = cuda_peer(worker, primary);
    const bool one_gpu = worker.index != primary.index && worker.cuda.present &&
                         primary.cuda.present && worker.cuda.ordinal == primary.cuda.ordinal;
    if (worker.index != primary.index &&
        (!worker.features.external_memory_fd || !primary.features.external_memory_fd)) {
        const bool on_worker = !worker.features.external_memory_fd;
        const char* side = on_worker ? "worker" : "primary";
        a.reason = lack_reason(
            on_worker ? worker : primary, side, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
            std::string("opaque-fd memory export (for CUDA's import) is missing on the ") + side);
    } else if (peer.present) {
        a.available = true;
        a.reason = "CUDA devices " + std::to_string(worker.cuda.ordinal) + " -> " +
                   std::to_string(primary.cuda.ordinal) +
                   " with peer access: each side's staging imported into CUDA on its GPU, a peer "
                   "copy over NVLink/PCIe into CUDA memory, then into the primary's staging" +
                   (both_export_timelines(worker, primary)
                        ? ", ordered on the GPUs by CUDA waiting and signalling the timelines"
                        : ", each copy run by the host bridge");
    } else if (one_gpu) {
        a.available = true;
        a.reason = "both adapters are CUDA device " + std::to_string(worker.cuda.ordinal) +
                   ": CUDA copies within it (zero-copy and shared memory come first)";
    } else {
        a.reason = peer.reason;
    }
    return a;
}

} // namespace

bool has_extension(const DeviceInfo& info, std::string_view extension) {
    return std::find(info.extensions.begin(), info.extensions.end(), extension) !=
           info.extensions.end();
}

namespace {

// query_device_info's parts, each filling its fields of `info`.

void read_extensions(VkPhysicalDevice physical, DeviceInfo& info) {
    std::uint32_t count = 0;
    vk_check(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr),
             "vkEnumerateDeviceExtensionProperties");
    std::vector<VkExtensionProperties> extensions(count);
    vk_check(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()),
             "vkEnumerateDeviceExtensionProperties");
    for (const auto& e : extensions) {
        info.extensions.emplace_back(e.extensionName);
    }
    std::sort(info.extensions.begin(), info.extensions.end());
}

// What the properties give beside `info`'s fields: the type, for UMA, and the host pointer
// alignment (VK_EXT_external_memory_host), for the features.
struct PropertiesRead {
    VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
    VkDeviceSize host_pointer_alignment = 0;
};

PropertiesRead read_properties(VkPhysicalDevice physical, DeviceInfo& info) {
    auto has = [&](const char* name) { return has_extension(info, name); };
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host_props{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceIDProperties id_props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceDriverProperties driver_props{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    id_props.pNext = &driver_props;
    if (has(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
        driver_props.pNext = &host_props;
    }
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci_props{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props2.pNext = &id_props;
    if (has(VK_EXT_PCI_BUS_INFO_EXTENSION_NAME)) {
        pci_props.pNext = props2.pNext;
        props2.pNext = &pci_props;
    }
    vkGetPhysicalDeviceProperties2(physical, &props2);
    if (has(VK_EXT_PCI_BUS_INFO_EXTENSION_NAME)) {
        info.pci_address = pci_address_text(pci_props.pciDomain, pci_props.pciBus,
                                            pci_props.pciDevice, pci_props.pciFunction);
    }
    const auto& props = props2.properties;

    info.name = props.deviceName;
    info.vendor_id = props.vendorID;
    info.vendor = vendor_name(props.vendorID);
    info.device_id = props.deviceID;
    info.type = type_name(props.deviceType);
    info.driver_name = driver_props.driverName;
    info.driver_info = driver_props.driverInfo;
    info.driver_version = driver_version_text(props.vendorID, props.driverVersion);
    info.api_version = version_text(props.apiVersion);
    std::copy(std::begin(id_props.deviceUUID), std::end(id_props.deviceUUID),
              info.device_uuid.begin());
    std::copy(std::begin(id_props.driverUUID), std::end(id_props.driverUUID),
              info.driver_uuid.begin());
    info.optimal_buffer_copy_row_pitch_alignment = props.limits.optimalBufferCopyRowPitchAlignment;
    info.optimal_buffer_copy_offset_alignment = props.limits.optimalBufferCopyOffsetAlignment;
    info.non_coherent_atom_size = props.limits.nonCoherentAtomSize;
    info.timestamp_period_ns = props.limits.timestampPeriod;

    return {props.deviceType, host_props.minImportedHostPointerAlignment};
}

void read_features(VkPhysicalDevice physical, VkDeviceSize host_pointer_alignment,
                   DeviceInfo& info) {
    auto has = [&](const char* name) { return has_extension(info, name); };
    VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.pNext = &f13;
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features2.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(physical, &features2);
    auto& f = info.features;
    f.timeline_semaphore = f12.timelineSemaphore == VK_TRUE;
    f.synchronization2 = f13.synchronization2 == VK_TRUE;
    f.dynamic_rendering = f13.dynamicRendering == VK_TRUE;
    f.external_memory_host =
        has(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) &&
        external_buffer_supported(physical, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT);
    f.min_imported_host_pointer_alignment = f.external_memory_host ? host_pointer_alignment : 0;
    f.external_memory_fd =
        has(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) &&
        external_buffer_supported(physical, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
    f.external_memory_fd_image =
        has(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) && external_image_supported(physical);
    f.external_memory_dma_buf = has(VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME);
    f.external_semaphore_fd = has(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    f.external_semaphore_fd_binary =
        f.external_semaphore_fd && external_semaphore_supported(physical, VK_SEMAPHORE_TYPE_BINARY);
    f.external_semaphore_fd_timeline =
        f.external_semaphore_fd && f.timeline_semaphore &&
        external_semaphore_supported(physical, VK_SEMAPHORE_TYPE_TIMELINE);
    f.calibrated_timestamps = has(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    f.host_query_reset = f12.hostQueryReset == VK_TRUE;
    f.global_priority =
        has(VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME) || has(VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME);
    f.memory_budget = has(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
}

void read_memory(VkPhysicalDevice physical, VkPhysicalDeviceType device_type, DeviceInfo& info) {
    const bool budgeted = info.features.memory_budget;
    // With budget where the driver reports it.
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 memory2{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    if (budgeted) {
        memory2.pNext = &budget;
    }
    vkGetPhysicalDeviceMemoryProperties2(physical, &memory2);
    const auto& memory = memory2.memoryProperties;
    for (std::uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
        MemoryHeapInfo heap;
        heap.size = memory.memoryHeaps[i].size;
        heap.device_local = (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
        if (budgeted) {
            heap.budget = budget.heapBudget[i];
            heap.usage = budget.heapUsage[i];
        }
        if (heap.device_local) {
            info.device_local_bytes += heap.size;
        }
        info.memory_heaps.push_back(heap);
    }
    bool all_device_local_host_visible = true;
    bool any_device_local = false;
    bool cached_coherent_device_local = false;
    for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
        const auto flags = memory.memoryTypes[i].propertyFlags;
        MemoryTypeInfo type;
        type.heap = memory.memoryTypes[i].heapIndex;
        type.device_local = (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
        type.host_visible = (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
        type.host_coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
        type.host_cached = (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
        if (type.device_local) {
            any_device_local = true;
            all_device_local_host_visible = all_device_local_host_visible && type.host_visible;
            cached_coherent_device_local =
                cached_coherent_device_local ||
                (type.host_visible && type.host_cached && type.host_coherent);
        }
        info.memory_types.push_back(type);
    }
    // Vulkan has no UMA query: a device whose device-local memory is all host-visible shares
    // memory with the CPU (integrated GPUs, CPU devices); coherent cached access makes it
    // cache-coherent UMA.
    info.uma = any_device_local && all_device_local_host_visible &&
               device_type != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    info.cache_coherent_uma = info.uma && cached_coherent_device_local;
}

void read_queue_families(VkPhysicalDevice physical, DeviceInfo& info) {
    std::uint32_t count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
    for (std::uint32_t i = 0; i < count; ++i) {
        QueueFamilyInfo family;
        family.index = i;
        family.count = families[i].queueCount;
        family.graphics = (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) != 0;
        family.compute = (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0;
        // Graphics and compute queues support transfer implicitly.
        family.transfer = (families[i].queueFlags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT |
                                                     VK_QUEUE_COMPUTE_BIT)) != 0;
        family.timestamp_valid_bits = families[i].timestampValidBits;
        info.queue_families.push_back(family);
    }
}

void read_formats(VkPhysicalDevice physical, DeviceInfo& info) {
    for (const auto& named : k_reported_formats) {
        VkFormatProperties3 p3{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_3};
        VkFormatProperties2 p2{VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2};
        p2.pNext = &p3;
        vkGetPhysicalDeviceFormatProperties2(physical, named.format, &p2);
        const auto optimal = p2.formatProperties.optimalTilingFeatures;
        FormatSupport support;
        support.format = named.format;
        support.name = named.name;
        support.color_attachment = (optimal & VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT) != 0;
        support.depth_attachment = (optimal & VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT) != 0;
        support.storage = (optimal & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT) != 0;
        support.sampled = (optimal & VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT) != 0;
        support.transfer_src = (optimal & VK_FORMAT_FEATURE_TRANSFER_SRC_BIT) != 0;
        support.transfer_dst = (optimal & VK_FORMAT_FEATURE_TRANSFER_DST_BIT) != 0;
        info.formats.push_back(support);
    }
}

} // namespace

DeviceInfo query_device_info(VkPhysicalDevice physical, std::uint32_t index,
                             std::uint32_t physical_index, std::uint32_t virtual_index) {
    DeviceInfo info;
    info.index = index;
    info.physical_index = physical_index;
    info.virtual_index = virtual_index;
    read_extensions(physical, info);
    const PropertiesRead props = read_properties(physical, info);
    read_features(physical, props.host_pointer_alignment, info);
    read_memory(physical, props.type, info);
    read_queue_families(physical, info);
    read_formats(physical, info);
    info.cuda = query_cuda(info);
    return info;
}

PairInfo query_pair_info(const DeviceInfo& worker, const DeviceInfo& primary) {
    PairInfo pair;
    pair.worker = worker.index;
    pair.primary = primary.index;
    const bool same_adapter = worker.index == primary.index;
    const bool same_uuids =
        worker.device_uuid == primary.device_uuid && worker.driver_uuid == primary.driver_uuid;

    for (TransferPath path : k_all_transfer_paths) {
        PathAvailability a;
        a.path = path;
        switch (path) {
        case TransferPath::SameDevice:
            a.available = same_adapter;
            a.reason = same_adapter ? "worker and primary are queues of one VkDevice: no copy, "
                                      "a queue-family ownership transfer"
                                    : "worker and primary are separate VkDevices";
            break;
        case TransferPath::ZeroCopy:
            if (same_adapter) {
                a.reason = "not needed: worker and primary share one VkDevice";
            } else if (!worker.features.external_memory_fd_image ||
                       !primary.features.external_memory_fd_image) {
                const bool on_worker = !worker.features.external_memory_fd_image;
                const char* side = on_worker ? "worker" : "primary";
                a.reason = lack_reason(
                    on_worker ? worker : primary, side, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                    std::string("opaque-fd image export/import is missing on the ") + side);
            } else if (!same_uuids) {
                a.reason = "opaque fd needs equal device and driver UUIDs, and these differ";
            } else {
                a.available = true;
                a.reason = "equal device and driver UUIDs: the worker renders into image memory "
                           "the primary imports; no copy, only an ownership hand-over";
            }
            break;
        case TransferPath::SharedMemory:
            if (same_adapter) {
                a.reason = "not needed: worker and primary share one VkDevice";
            } else if (!worker.features.external_memory_fd ||
                       !primary.features.external_memory_fd) {
                const bool on_worker = !worker.features.external_memory_fd;
                const char* side = on_worker ? "worker" : "primary";
                a.reason = lack_reason(
                    on_worker ? worker : primary, side, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                    std::string("opaque-fd memory export/import is missing on the ") + side);
            } else if (!same_uuids) {
                a.reason = "opaque fd needs equal device and driver UUIDs, and these differ";
            } else {
                a.available = true;
                a.reason = "equal device and driver UUIDs: one exportable allocation imported by "
                           "both devices";
            }
            break;
        case TransferPath::CudaPeer:
            a = cuda_path(worker, primary);
            break;
        case TransferPath::HostImported:
            if (same_adapter) {
                a.reason = "not needed: worker and primary share one VkDevice";
            } else if (!worker.features.external_memory_host ||
                       !primary.features.external_memory_host) {
                const bool on_worker = !worker.features.external_memory_host;
                const char* side = on_worker ? "worker" : "primary";
                a.reason = lack_reason(
                    on_worker ? worker : primary, side, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME,
                    std::string("VK_EXT_external_memory_host is missing on the ") + side);
            } else {
                a.available = true;
                a.reason =
                    "both import host allocations (alignment " +
                    std::to_string(std::max(worker.features.min_imported_host_pointer_alignment,
                                            primary.features.min_imported_host_pointer_alignment)) +
                    " bytes): the worker writes one pinned buffer, the primary reads it";
            }
            break;
        case TransferPath::HostCopy:
            if (same_adapter) {
                a.reason = "not needed: worker and primary share one VkDevice";
            } else {
                a.available = true;
                a.reason = "always possible: each device maps its own host-visible buffer and the "
                           "CPU copies between them";
            }
            break;
        }
        pair.paths.push_back(a);
    }
    pair.cuda_peer = cuda_peer(worker, primary);

    if (same_adapter) {
        pair.gpu_side_sync = true;
        pair.sync_reason = "one VkDevice: the primary waits on the worker's semaphore directly";
    } else if (!worker.features.external_semaphore_fd_timeline ||
               !primary.features.external_semaphore_fd_timeline) {
        const bool on_worker = !worker.features.external_semaphore_fd_timeline;
        const char* side = on_worker ? "worker" : "primary";
        pair.sync_reason =
            lack_reason(
                on_worker ? worker : primary, side, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
                std::string("opaque-fd timeline semaphore export/import is missing on the ") +
                    side) +
            ": a host bridge thread forwards the worker's timeline to the primary";
    } else if (!same_uuids) {
        pair.sync_reason = "opaque-fd semaphores need equal device and driver UUIDs, and these "
                           "differ: a host bridge thread forwards the worker's timeline";
    } else {
        pair.gpu_side_sync = true;
        pair.sync_reason = "equal UUIDs and opaque-fd timeline semaphores on both: the primary "
                           "waits GPU-side";
    }
    return pair;
}

} // namespace tandem::detail
