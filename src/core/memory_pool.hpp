// MemoryPool: where Tandem's buffers and images get their device memory. Each device has one
// (Device::memory_pool()). Allocations are ranges of a few large VkDeviceMemory blocks per memory
// type, so a task that comes and goes thousands of times does not allocate and free memory of
// its own each time: some drivers keep part of every freed allocation (the NVIDIA driver 580,
// about 100-200 bytes of device memory and RSS per dedicated image; bench/README.md,
// tandem-bench-driver-objects).
//
// Blocks are kPoolBlock bytes, or the allocation rounded up to 2 MiB when it is larger. Buffers
// and images live in separate blocks (bufferImageGranularity never matters). A block that
// empties is kept for reuse while it is its pool's only empty block and freed otherwise, so the
// pool never holds more than one empty block per (memory type, linear or optimal) beyond what
// is in use. create_buffer and create_image (core/resources.hpp) allocate here, except what
// keeps a VkDeviceMemory of its own: what the driver requires to be dedicated, lazily allocated
// (transient) images and host-visible memory that is not coherent (whose flushes cover whole
// allocations). Exported and imported memory never comes from here.
//
// Device::live_allocations() counts allocations as objects see them (a range of a block counts
// as one, with its size); the blocks themselves are counted by blocks() and block_bytes().
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/handle.hpp"

namespace tandem::detail {

class Device;

inline constexpr VkDeviceSize kPoolBlock = VkDeviceSize{32} << 20;

// `value` rounded up to a multiple of `alignment` (0 or 1: unchanged).
[[nodiscard]] constexpr VkDeviceSize align_up(VkDeviceSize value, VkDeviceSize alignment) {
    return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
}

// Memory for one buffer or image: `memory` owns the range (its deleter gives it back), bound
// at `offset`; `mapped` points at the range's first byte when the memory is host-visible.
struct MemoryRange {
    Handle<VkDeviceMemory> memory;
    VkDeviceSize offset = 0;
    VkDeviceSize size = 0;
    void* mapped = nullptr;
};

class MemoryPool {
public:
    explicit MemoryPool(const Device& device);
    // Frees every block. Every range must have been given back (their objects destroyed).
    ~MemoryPool();
    MemoryPool(const MemoryPool&) = delete;
    MemoryPool& operator=(const MemoryPool&) = delete;

    // A range for `req` in memory type `type` (host-visible types must be coherent); `linear`:
    // for a buffer. Maps host-visible blocks. Throws Error when the driver refuses a block.
    [[nodiscard]] MemoryRange allocate(const VkMemoryRequirements& req, std::uint32_t type,
                                       bool linear, const std::string& name);

    // The blocks held now (in use or kept empty for reuse), and their bytes.
    [[nodiscard]] std::uint64_t blocks() const;
    [[nodiscard]] std::uint64_t block_bytes() const;

private:
    struct Block {
        VkDeviceMemory memory = VK_NULL_HANDLE;
        VkDeviceSize size = 0;
        VkDeviceSize used = 0;
        void* mapped = nullptr;
        std::map<VkDeviceSize, VkDeviceSize> free; // offset -> size, coalesced
    };
    struct Pool {
        std::vector<std::unique_ptr<Block>> blocks;
    };

    [[nodiscard]] static bool take(Block& block, VkDeviceSize size, VkDeviceSize alignment,
                                   VkDeviceSize& offset);
    void give_back(std::uint64_t key, Block* block, VkDeviceSize offset, VkDeviceSize size);
    void free_block(Block& block) const noexcept;

    const Device& m_device;
    mutable std::mutex m_lock;
    std::map<std::uint64_t, Pool> m_pools; // key: memory type << 1 | linear
};

} // namespace tandem::detail
