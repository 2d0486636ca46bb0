#include "runtime/lease_table.hpp"

#include <algorithm>

namespace tandem::detail {

std::optional<Lease> LeaseTable::acquire(TaskId id, std::uint64_t at_least) noexcept {
    Task* task = m_tasks.find(id);
    if (task == nullptr) {
        return std::nullopt;
    }
    std::lock_guard lock(task->mutex);
    const auto current = task->registry.current();
    if (!current || current->generation < at_least) {
        return std::nullopt;
    }
    SlotRecord& s = task->ring[current->slot];
    if (!task->ring.apply(current->slot, SlotEvent::Lease)) {
        return std::nullopt;
    }
    ++s.leases;
    const Image& image = task->slots[current->slot].primary_image;
    Lease lease;
    lease.task = id;
    lease.slot = current->slot;
    lease.generation = s.generation;
    lease.device = task->worker->device().info().index;
    lease.image = image.get();
    lease.view = image.view.get();
    lease.layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    lease.format = image.format;
    lease.extent = image.extent;
    lease.wait_semaphore = task->transport->primary_semaphore();
    lease.wait_value = s.primary_value;
    lease.queue_family = m_primary_family;
    return lease;
}

bool LeaseTable::release(const Lease& lease, std::uint64_t primary_value) noexcept {
    Task* task = m_tasks.find(lease.task);
    if (task == nullptr || lease.slot >= task->ring.size()) {
        return false;
    }
    std::lock_guard lock(task->mutex);
    SlotRecord& s = task->ring[lease.slot];
    if (s.generation != lease.generation || s.leases == 0) {
        return false;
    }
    --s.leases;
    s.release_value = std::max(s.release_value, primary_value);
    finish_reads(*task, lease.slot, m_reads_seen.load(std::memory_order_relaxed));
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

void LeaseTable::finish_reads(Task& task, std::uint32_t slot, std::uint64_t reads) noexcept {
    SlotRecord& s = task.ring[slot];
    if (s.state == SlotState::Leased && s.leases == 0 && reads >= s.release_value) {
        (void)task.ring.apply(slot, SlotEvent::ReadsDone);
        if (!s.published) {
            recycle(task, slot);
        }
    }
}

} // namespace tandem::detail
