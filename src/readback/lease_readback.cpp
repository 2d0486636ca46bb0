// tandem::LeaseReadback, built on what any application gets from the runtime
// (Runtime::device_vulkan()) and plain Vulkan: no internal device object, no adapter discovery.
#include "tandem/readback.hpp"

#include <mutex>
#include <optional>
#include <string>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/vk_check.hpp"
#include "readback/lease_copy.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"

namespace tandem {

using detail::Handle;
using detail::vk_check;

namespace {

// The host-visible memory type of `type_bits`, host-cached where there is one (the host reads
// every byte), else nullopt.
std::optional<std::uint32_t> host_memory_type(const VkPhysicalDeviceMemoryProperties& memory,
                                              std::uint32_t type_bits) {
    std::optional<std::uint32_t> visible;
    for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
        const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
        if ((type_bits & (1u << i)) == 0 || (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) == 0) {
            continue;
        }
        if ((flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0) {
            return i;
        }
        if (!visible) {
            visible = i;
        }
    }
    return visible;
}

} // namespace

struct LeaseReadback::State {
    DeviceVulkan vulkan;     // the device read on: the primary's, or a worker's
    bool on_primary = false; // it reads acquire()'s leases, else acquire_on_worker()'s there
    VkPhysicalDeviceMemoryProperties memory{};
    PFN_vkSetDebugUtilsObjectNameEXT set_name = nullptr;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label = nullptr;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label = nullptr;
    Handle<VkCommandPool> pool;
    VkCommandBuffer cmd = VK_NULL_HANDLE; // freed with the pool
    Handle<VkFence> fence;
    Handle<VkDeviceMemory> buffer_memory; // declared first: freed after the buffer is destroyed
    Handle<VkBuffer> buffer;
    VkDeviceSize capacity = 0;
    bool coherent = true;
    void* mapped = nullptr;
    // A batch was submitted and its fence not yet seen signalled (a read that timed out).
    bool pending = false;

    template <typename T>
    void name(T handle, VkObjectType type, const char* text) const {
        if (set_name != nullptr) {
            VkDebugUtilsObjectNameInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
            info.objectType = type;
            info.objectHandle = reinterpret_cast<std::uint64_t>(handle);
            info.pObjectName = text;
            (void)set_name(vulkan.device, &info);
        }
    }

    // Waits for the last batch, at most `timeout`.
    VkResult settle(std::chrono::nanoseconds timeout) {
        if (!pending) {
            return VK_SUCCESS;
        }
        const VkFence f = fence.get();
        const VkResult r = vkWaitForFences(vulkan.device, 1, &f, VK_TRUE,
                                           static_cast<std::uint64_t>(timeout.count()));
        if (r == VK_SUCCESS) {
            pending = false;
        }
        return r;
    }

    // A host-visible buffer of at least `bytes`, mapped (only when no batch is pending).
    void reserve(VkDeviceSize bytes) {
        if (bytes <= capacity) {
            return;
        }
        buffer.reset();
        buffer_memory.reset();
        capacity = 0;
        const VkDevice device = vulkan.device;
        VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bi.size = bytes;
        bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        VkBuffer b = VK_NULL_HANDLE;
        vk_check(vkCreateBuffer(device, &bi, nullptr, &b), "vkCreateBuffer lease readback");
        buffer = Handle<VkBuffer>(b, [device](VkBuffer h) { vkDestroyBuffer(device, h, nullptr); });
        name(b, VK_OBJECT_TYPE_BUFFER, "tandem lease readback buffer");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(device, b, &req);
        const std::optional<std::uint32_t> type = host_memory_type(memory, req.memoryTypeBits);
        if (!type) {
            throw Error(ErrorCategory::Unsupported,
                        "The device has no host-visible memory for a readback buffer",
                        "Read leases back on a device with host-visible memory");
        }
        VkMemoryAllocateInfo mi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mi.allocationSize = req.size;
        mi.memoryTypeIndex = *type;
        VkDeviceMemory m = VK_NULL_HANDLE;
        vk_check(vkAllocateMemory(device, &mi, nullptr, &m), "vkAllocateMemory lease readback");
        buffer_memory = Handle<VkDeviceMemory>(
            m, [device](VkDeviceMemory h) { vkFreeMemory(device, h, nullptr); });
        vk_check(vkBindBufferMemory(device, b, m, 0), "vkBindBufferMemory lease readback");
        vk_check(vkMapMemory(device, m, 0, VK_WHOLE_SIZE, 0, &mapped),
                 "vkMapMemory lease readback");
        coherent =
            (memory.memoryTypes[*type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
        capacity = bytes;
    }
};

LeaseReadback::LeaseReadback(const Runtime& runtime)
    : LeaseReadback(runtime, runtime.primary_vulkan().adapter) {}

LeaseReadback::LeaseReadback(const Runtime& runtime, std::uint32_t adapter)
    : m_state(std::make_unique<State>()) {
    State& s = *m_state;
    std::optional<DeviceVulkan> on = runtime.device_vulkan(adapter);
    if (!on) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Adapter " + std::to_string(adapter) + " is no device of this runtime",
                    "Read on the primary or one of Runtime::worker_devices() (DeviceInfo::index)");
    }
    s.vulkan = std::move(*on);
    s.on_primary = adapter == runtime.primary_device().index;
    const VkDevice device = s.vulkan.device;
    vkGetPhysicalDeviceMemoryProperties(s.vulkan.physical_device, &s.memory);
    if (s.vulkan.debug_utils) {
        s.set_name = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(
            vkGetInstanceProcAddr(s.vulkan.instance, "vkSetDebugUtilsObjectNameEXT"));
        if (!detail::validation_layer_races_on_labels(device)) {
            s.begin_label = reinterpret_cast<PFN_vkCmdBeginDebugUtilsLabelEXT>(
                vkGetInstanceProcAddr(s.vulkan.instance, "vkCmdBeginDebugUtilsLabelEXT"));
            s.end_label = reinterpret_cast<PFN_vkCmdEndDebugUtilsLabelEXT>(
                vkGetInstanceProcAddr(s.vulkan.instance, "vkCmdEndDebugUtilsLabelEXT"));
        }
    }
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = s.vulkan.queue_family;
    VkCommandPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateCommandPool(device, &pi, nullptr, &pool),
             "vkCreateCommandPool lease readback");
    s.pool = Handle<VkCommandPool>(
        pool, [device](VkCommandPool h) { vkDestroyCommandPool(device, h, nullptr); });
    s.name(pool, VK_OBJECT_TYPE_COMMAND_POOL, "tandem lease readback pool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk_check(vkAllocateCommandBuffers(device, &ai, &s.cmd),
             "vkAllocateCommandBuffers lease readback");
    s.name(s.cmd, VK_OBJECT_TYPE_COMMAND_BUFFER, "tandem lease readback");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    vk_check(vkCreateFence(device, &fi, nullptr, &fence), "vkCreateFence lease readback");
    s.fence = Handle<VkFence>(fence, [device](VkFence h) { vkDestroyFence(device, h, nullptr); });
    s.name(fence, VK_OBJECT_TYPE_FENCE, "tandem lease readback fence");
}

LeaseReadback::~LeaseReadback() {
    State& s = *m_state;
    // A copy that timed out may still run: wait for it, and if it never ends (a hung device),
    // leak its objects rather than destroy what the GPU may still use.
    if (s.settle(std::chrono::seconds(10)) != VK_SUCCESS && s.pending) {
        (void)s.pool.release();
        (void)s.fence.release();
        (void)s.buffer.release();
        (void)s.buffer_memory.release();
    }
}

ReadbackImage LeaseReadback::read(const Lease& lease, std::chrono::nanoseconds timeout) {
    State& s = *m_state;
    const std::uint32_t texel_bytes = detail::lease_texel_bytes(lease.format);
    if (lease.on_worker == s.on_primary || (lease.on_worker && lease.device != s.vulkan.adapter)) {
        throw Error(ErrorCategory::InvalidArgument,
                    std::string("The lease's image is on ") +
                        (lease.on_worker ? "worker adapter " + std::to_string(lease.device)
                                         : std::string("the primary")) +
                        ", this LeaseReadback reads on adapter " + std::to_string(s.vulkan.adapter),
                    "Read a lease with a LeaseReadback made for the device its image is on: "
                    "the primary for acquire()'s, Lease::device for acquire_on_worker()'s");
    }
    if (lease.queue_family != s.vulkan.queue_family) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The lease is readable by queue family " + std::to_string(lease.queue_family) +
                        ", the device's main queue is of family " +
                        std::to_string(s.vulkan.queue_family),
                    "Read leases of the runtime the LeaseReadback was made for");
    }
    const VkResult earlier = s.settle(timeout);
    if (earlier != VK_SUCCESS) {
        throw Error(earlier, "waiting for an earlier lease readback that had not finished",
                    "Destroy the LeaseReadback before releasing that lease");
    }
    ReadbackImage image;
    image.generation = lease.generation;
    image.device = lease.device;
    image.format = lease.format;
    image.extent = lease.extent;
    image.texel_bytes = texel_bytes;
    const VkDeviceSize bytes = VkDeviceSize{lease.extent.width} * lease.extent.height * texel_bytes;
    if (bytes == 0) {
        return image;
    }
    s.reserve(bytes);

    const VkDevice device = s.vulkan.device;
    const VkFence fence = s.fence.get();
    vk_check(vkResetFences(device, 1, &fence), "vkResetFences lease readback");
    vk_check(vkResetCommandBuffer(s.cmd, 0), "vkResetCommandBuffer lease readback");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(s.cmd, &begin), "vkBeginCommandBuffer lease readback");
    if (s.begin_label != nullptr) {
        VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
        label.pLabelName = "tandem lease readback";
        s.begin_label(s.cmd, &label);
    }
    detail::record_lease_copy(s.cmd, lease, s.buffer.get(), lease.extent);
    if (s.end_label != nullptr) {
        s.end_label(s.cmd);
    }
    vk_check(vkEndCommandBuffer(s.cmd), "vkEndCommandBuffer lease readback");

    const VkSemaphoreSubmitInfo wait = detail::lease_copy_wait(lease);
    VkCommandBufferSubmitInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cmd_info.commandBuffer = s.cmd;
    VkSubmitInfo2 batch{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    batch.waitSemaphoreInfoCount = 1;
    batch.pWaitSemaphoreInfos = &wait;
    batch.commandBufferInfoCount = 1;
    batch.pCommandBufferInfos = &cmd_info;
    VkResult submitted = VK_SUCCESS;
    {
        // Tandem (and an embedding engine) submit to this queue too; the lock covers the
        // submit alone, never the wait below.
        std::unique_lock<std::mutex> lock;
        if (s.vulkan.queue_mutex) {
            lock = std::unique_lock<std::mutex>(*s.vulkan.queue_mutex);
        }
        const PFN_vkQueueSubmit2 submit2 =
            s.vulkan.queue_submit2 != nullptr ? s.vulkan.queue_submit2 : vkQueueSubmit2;
        submitted = submit2(s.vulkan.queue, 1, &batch, fence);
    }
    vk_check(submitted, "vkQueueSubmit2 lease readback");
    s.pending = true;
    vk_check(s.settle(timeout), "vkWaitForFences lease readback",
             "The copy may still be pending: destroy the LeaseReadback before releasing the lease");
    if (!s.coherent) {
        VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
        range.memory = s.buffer_memory.get();
        range.size = VK_WHOLE_SIZE;
        vk_check(vkInvalidateMappedMemoryRanges(device, 1, &range),
                 "vkInvalidateMappedMemoryRanges lease readback");
    }
    const auto* first = static_cast<const std::uint8_t*>(s.mapped);
    image.bytes.assign(first, first + bytes);
    return image;
}

} // namespace tandem
