#include "transfer/opaque_fd_memory.hpp"

#include <unistd.h>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

namespace {

VkMemoryDedicatedAllocateInfo dedicated_info(DedicatedTo dedicated) {
    VkMemoryDedicatedAllocateInfo ded{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    ded.image = dedicated.image;
    ded.buffer = dedicated.buffer;
    return ded;
}

bool is_dedicated(DedicatedTo dedicated) {
    return dedicated.image != VK_NULL_HANDLE || dedicated.buffer != VK_NULL_HANDLE;
}

// vkAllocateMemory of `size` bytes of `type` with the chain `next`.
VkResult allocate(const Device& device, VkDeviceSize size, std::uint32_t type, const void* next,
                  VkDeviceMemory& out) {
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = next;
    alloc.allocationSize = size;
    alloc.memoryTypeIndex = type;
    return vkAllocateMemory(device.handle(), &alloc, nullptr, &out);
}

} // namespace

Handle<VkDeviceMemory> allocate_exportable_memory(const Device& device, VkDeviceSize size,
                                                  std::uint32_t type, DedicatedTo dedicated,
                                                  const std::string& name, std::string_view hint) {
    const VkMemoryDedicatedAllocateInfo ded = dedicated_info(dedicated);
    VkExportMemoryAllocateInfo exp{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
    exp.handleTypes = k_opaque_fd_handle;
    exp.pNext = is_dedicated(dedicated) ? &ded : nullptr;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    const VkResult r = allocate(device, size, type, &exp, memory);
    // Owned before the check, so that an injected fault (core/vk_check.hpp) frees it.
    Handle<VkDeviceMemory> owned =
        r == VK_SUCCESS ? own_memory(device, memory, size) : Handle<VkDeviceMemory>{};
    vk_check(r, "vkAllocateMemory exportable " + name, hint);
    return owned;
}

int export_memory_fd(const Device& device, VkDeviceMemory memory, const std::string& name,
                     std::string_view hint) {
    VkMemoryGetFdInfoKHR info{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    info.memory = memory;
    info.handleType = k_opaque_fd_handle;
    int fd = -1;
    vk_check(device.fn().get_memory_fd(device.handle(), &info, &fd), "vkGetMemoryFdKHR " + name,
             hint);
    return fd;
}

Handle<VkDeviceMemory> import_memory_fd(const Device& device, int fd, VkDeviceSize size,
                                        std::uint32_t type, DedicatedTo dedicated,
                                        const std::string& name, std::string_view hint) {
    VkImportMemoryFdInfoKHR imp{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    imp.handleType = k_opaque_fd_handle;
    imp.fd = fd;
    const VkMemoryDedicatedAllocateInfo ded = dedicated_info(dedicated);
    imp.pNext = is_dedicated(dedicated) ? &ded : nullptr;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    const VkResult r = allocate(device, size, type, &imp, memory);
    if (r != VK_SUCCESS) {
        ::close(fd); // a failed import leaves the fd the caller's
    }
    // Owned before the check, so that an injected fault (core/vk_check.hpp) frees it, and the fd
    // with it.
    Handle<VkDeviceMemory> owned =
        r == VK_SUCCESS ? own_memory(device, memory, size) : Handle<VkDeviceMemory>{};
    vk_check(r, "vkAllocateMemory import " + name, hint);
    return owned;
}

ExportableBuffer create_exportable_buffer(const Device& device, VkDeviceSize size,
                                          const std::string& name, std::string_view hint) {
    ExportableBuffer out;
    out.buffer = create_external_buffer(
        device, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        k_opaque_fd_handle, name);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device.handle(), out.buffer.get(), &req);
    out.allocation = req.size;
    out.memory_type = device.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    out.memory =
        allocate_exportable_memory(device, req.size, out.memory_type,
                                   DedicatedTo{VK_NULL_HANDLE, out.buffer.get()}, name, hint);
    vk_check(vkBindBufferMemory(device.handle(), out.buffer.get(), out.memory.get(), 0),
             "vkBindBufferMemory " + name);
    return out;
}

} // namespace tandem::detail
