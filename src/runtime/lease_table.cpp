#include "runtime/lease_table.hpp"

#include <algorithm>

namespace tandem::detail {

std::optional<Lease> LeaseTable::lease(TaskInstance& instance, TaskId task,
                                       std::uint64_t at_least) const noexcept {
    if (!instance.prepared()) {
        return std::nullopt;
    }
    std::lock_guard lock(instance.mutex);
    const auto current = instance.registry.current();
    if (!current || current->generation < at_least) {
        return std::nullopt;
    }
    SlotRecord& s = instance.ring[current->slot];
    if (!instance.ring.apply(current->slot, SlotEvent::Lease)) {
        return std::nullopt;
    }
    ++s.leases;
    const Image& image = instance.slots[current->slot].primary_image;
    Lease lease;
    lease.task = task;
    lease.instance = instance.serial;
    lease.slot = current->slot;
    lease.generation = s.generation;
    lease.device = instance.device();
    lease.image = image.get();
    lease.view = image.view.get();
    lease.layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    lease.format = image.format;
    lease.extent = image.extent;
    lease.wait_semaphore = instance.transport->primary_semaphore();
    lease.wait_value = s.primary_value;
    lease.queue_family = m_primary_family;
    return lease;
}

bool LeaseTable::release(TaskInstance& instance, const Lease& lease,
                         std::uint64_t primary_value) const noexcept {
    if (lease.slot >= instance.ring.size()) {
        return false;
    }
    std::lock_guard lock(instance.mutex);
    SlotRecord& s = instance.ring[lease.slot];
    if (s.generation != lease.generation || s.leases == 0 || s.trial) {
        return false;
    }
    --s.leases;
    s.release_value = std::max(s.release_value, primary_value);
    finish_reads(instance, lease.slot, m_reads_seen.load(std::memory_order_relaxed));
    return true;
}

void LeaseTable::observe_reads(std::uint64_t reads) noexcept {
    // Keep the maximum: pump() and the completion thread may store out of order. Relaxed: it
    // is a lower bound of the semaphore's value, which orders nothing by itself.
    std::uint64_t seen = m_reads_seen.load(std::memory_order_relaxed);
    while (seen < reads &&
           !m_reads_seen.compare_exchange_weak(seen, reads, std::memory_order_relaxed)) {
    }
}

void LeaseTable::finish_reads(TaskInstance& instance, std::uint32_t slot,
                              std::uint64_t reads) noexcept {
    SlotRecord& s = instance.ring[slot];
    if (s.state == SlotState::Leased && s.leases == 0 && reads >= s.release_value) {
        (void)instance.ring.apply(slot, SlotEvent::ReadsDone);
        if (!s.published) {
            recycle(instance, slot);
        }
    }
}

} // namespace tandem::detail
