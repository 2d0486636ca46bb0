#include "core/memory_pool.hpp"

#include <algorithm>

#include "core/device.hpp"
#include "core/vk_check.hpp"

namespace tandem::detail {
namespace {

constexpr VkDeviceSize k_block_granularity = VkDeviceSize{2} << 20;

} // namespace

MemoryPool::MemoryPool(const Device& device) : m_device(device) {}

MemoryPool::~MemoryPool() {
    for (auto& [key, pool] : m_pools) {
        for (auto& block : pool.blocks) {
            free_block(*block);
        }
    }
}

void MemoryPool::free_block(Block& block) const noexcept {
    if (block.memory != VK_NULL_HANDLE) {
        vkFreeMemory(m_device.handle(), block.memory, nullptr); // unmaps
        block.memory = VK_NULL_HANDLE;
    }
}

bool MemoryPool::take(Block& block, VkDeviceSize size, VkDeviceSize alignment,
                      VkDeviceSize& offset) {
    for (auto it = block.free.begin(); it != block.free.end(); ++it) {
        const VkDeviceSize start = align_up(it->first, alignment);
        const VkDeviceSize end = it->first + it->second;
        if (start + size > end) {
            continue;
        }
        const VkDeviceSize head = start - it->first;
        const VkDeviceSize tail = end - (start + size);
        const VkDeviceSize free_start = it->first;
        block.free.erase(it);
        if (head > 0) {
            block.free.emplace(free_start, head);
        }
        if (tail > 0) {
            block.free.emplace(start + size, tail);
        }
        block.used += size;
        offset = start;
        return true;
    }
    return false;
}

MemoryRange MemoryPool::allocate(const VkMemoryRequirements& req, std::uint32_t type, bool linear,
                                 const std::string& name) {
    const std::uint64_t key = (std::uint64_t{type} << 1) | (linear ? 1u : 0u);
    const VkDeviceSize size = std::max<VkDeviceSize>(req.size, 1);
    std::lock_guard lock(m_lock);
    Pool& pool = m_pools[key];
    Block* chosen = nullptr;
    VkDeviceSize offset = 0;
    for (auto& block : pool.blocks) {
        if (take(*block, size, req.alignment, offset)) {
            chosen = block.get();
            break;
        }
    }
    if (chosen == nullptr) {
        auto block = std::make_unique<Block>();
        block->size = std::max(kPoolBlock, align_up(size, k_block_granularity));
        VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        alloc.allocationSize = block->size;
        alloc.memoryTypeIndex = type;
        vk_check(vkAllocateMemory(m_device.handle(), &alloc, nullptr, &block->memory),
                 "vkAllocateMemory pool block for " + name,
                 "The device is out of memory: unregister tasks or use smaller sizes");
        m_device.name(block->memory, VK_OBJECT_TYPE_DEVICE_MEMORY,
                      m_device.label() + " memory pool block");
        if ((m_device.memory_flags(type) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0) {
            const VkResult mapped =
                vkMapMemory(m_device.handle(), block->memory, 0, VK_WHOLE_SIZE, 0, &block->mapped);
            if (mapped != VK_SUCCESS) {
                free_block(*block);
                vk_check(mapped, "vkMapMemory pool block for " + name);
            }
        }
        block->free.emplace(0, block->size);
        const bool fits = take(*block, size, req.alignment, offset);
        (void)fits; // a new block starts at offset 0, aligned for anything, and holds `size`
        chosen = block.get();
        pool.blocks.push_back(std::move(block));
    }
    MemoryRange out;
    out.offset = offset;
    out.size = size;
    out.mapped =
        chosen->mapped == nullptr ? nullptr : static_cast<std::byte*>(chosen->mapped) + offset;
    const Device* device = &m_device;
    out.memory = Handle<VkDeviceMemory>(chosen->memory,
                                        [this, device, key, chosen, offset, size](VkDeviceMemory) {
                                            give_back(key, chosen, offset, size);
                                            device->count_allocation(-1, size);
                                        });
    m_device.count_allocation(+1, size);
    return out;
}

void MemoryPool::give_back(std::uint64_t key, Block* block, VkDeviceSize offset,
                           VkDeviceSize size) {
    std::lock_guard lock(m_lock);
    auto next = block->free.lower_bound(offset);
    VkDeviceSize start = offset;
    VkDeviceSize length = size;
    if (next != block->free.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
            start = prev->first;
            length += prev->second;
            block->free.erase(prev);
        }
    }
    if (next != block->free.end() && offset + size == next->first) {
        length += next->second;
        block->free.erase(next);
    }
    block->free.emplace(start, length);
    block->used -= size;
    if (block->used != 0) {
        return;
    }
    // Keep one empty block per pool for the next task; free any other.
    Pool& pool = m_pools[key];
    const auto empty = std::count_if(pool.blocks.begin(), pool.blocks.end(),
                                     [](const auto& b) { return b->used == 0; });
    if (empty > 1) {
        free_block(*block);
        std::erase_if(pool.blocks, [block](const auto& b) { return b.get() == block; });
    }
}

std::uint64_t MemoryPool::blocks() const {
    std::lock_guard lock(m_lock);
    std::uint64_t n = 0;
    for (const auto& [key, pool] : m_pools) {
        n += pool.blocks.size();
    }
    return n;
}

std::uint64_t MemoryPool::block_bytes() const {
    std::lock_guard lock(m_lock);
    std::uint64_t bytes = 0;
    for (const auto& [key, pool] : m_pools) {
        for (const auto& block : pool.blocks) {
            bytes += block->size;
        }
    }
    return bytes;
}

} // namespace tandem::detail
