// Device memory shared between two openings of one GPU through an opaque fd, as the zero-copy
// (images) and shared-memory (buffers) paths share it: an exportable allocation on one device,
// its fd, and its import on the other. Each throws tandem::Error from vk_check with the context
// "<call> <name>" and `hint` (empty: the generic hint). Set-up only; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"

namespace tandem::detail {

// The handle type every allocation here is exported and imported as.
inline constexpr VkExternalMemoryHandleTypeFlagBits k_opaque_fd_handle =
    VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;

// The image or buffer an allocation is dedicated to; both null: not dedicated.
struct DedicatedTo {
    VkImage image = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
};

// `size` bytes of memory type `type`, exportable as an opaque fd ("vkAllocateMemory exportable").
[[nodiscard]] Handle<VkDeviceMemory>
allocate_exportable_memory(const Device& device, VkDeviceSize size, std::uint32_t type,
                           DedicatedTo dedicated, const std::string& name,
                           std::string_view hint = {});

// A new opaque fd of `memory` ("vkGetMemoryFdKHR"); the caller owns it.
[[nodiscard]] int export_memory_fd(const Device& device, VkDeviceMemory memory,
                                   const std::string& name, std::string_view hint = {});

// The memory behind `fd` on `device` ("vkAllocateMemory import"), allocated as the export was.
// A successful import owns the fd; a failed one closes it.
[[nodiscard]] Handle<VkDeviceMemory>
import_memory_fd(const Device& device, int fd, VkDeviceSize size, std::uint32_t type,
                 DedicatedTo dedicated, const std::string& name, std::string_view hint = {});

// A device-local buffer of `size` bytes (TRANSFER_SRC and TRANSFER_DST) bound at offset 0 to a
// dedicated allocation of its own, exportable as an opaque fd: what another API (CUDA) imports.
struct ExportableBuffer {
    Handle<VkBuffer> buffer;
    Handle<VkDeviceMemory> memory;
    VkDeviceSize allocation = 0; // the allocation's size, as an import must name it
    std::uint32_t memory_type = 0;
};
[[nodiscard]] ExportableBuffer create_exportable_buffer(const Device& device, VkDeviceSize size,
                                                        const std::string& name,
                                                        std::string_view hint = {});

} // namespace tandem::detail
