#include "runtime/lease_table.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/atomic_max.hpp"
#include "core/log.hpp"

namespace tandem::detail {
namespace {

// Tickets are numbered once for the whole process, so a lease of another runtime never names
// one held here. Relaxed: only uniqueness matters, it orders nothing.
std::atomic<std::uint64_t> g_next_ticket{1};

double ms(Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

} // namespace

std::optional<Lease> LeaseTable::lease(TaskInstance& instance, TaskId task, std::uint64_t at_least,
                                       bool on_worker) noexcept {
    if (!instance.prepared()) {
        return std::nullopt;
    }
    on_worker = on_worker && !instance.same_device;
    if (!on_worker && instance.keeps_output_on_worker()) {
        return std::nullopt; // its outputs never reach the primary (acquire says so)
    }
    std::lock_guard lock(instance.mutex);
    const auto current = instance.registry.current();
    if (!current || current->generation < at_least) {
        return std::nullopt;
    }
    SlotRecord& s = instance.ring[current->slot];
    const SlotResources& res = instance.slots[current->slot];
    if (on_worker && res.handed_off_layout == VK_IMAGE_LAYOUT_UNDEFINED) {
        return std::nullopt; // not written yet on this instance (cannot happen once published)
    }
    const std::uint64_t ticket = g_next_ticket.fetch_add(1, std::memory_order_relaxed);
    {
        std::lock_guard table(m_mutex);
        try {
            m_tickets.emplace(ticket, Ticket{task, instance.serial, current->slot, s.generation,
                                             &instance, Clock::now(), on_worker, false});
        } catch (...) {
            return std::nullopt; // out of memory: nothing this frame
        }
        if (!instance.ring.apply(current->slot, SlotEvent::Lease)) {
            m_tickets.erase(ticket);
            return std::nullopt;
        }
        // The task's period between outputs, from this output's arrival and the last leased.
        try {
            Pace& pace = m_paces[task];
            if (s.generation > pace.generation && s.times.ready > pace.ready) {
                if (pace.generation != 0) {
                    const auto sample = (s.times.ready - pace.ready) /
                                        static_cast<std::int64_t>(s.generation - pace.generation);
                    pace.period =
                        pace.period == Clock::duration{} ? sample : (pace.period * 3 + sample) / 4;
                }
                pace.generation = s.generation;
                pace.ready = s.times.ready;
            }
        } catch (...) {
            // Out of memory: the period stays unknown, and the floor alone applies.
        }
    }
    ++s.readers.leases;
    // On the worker: the image its work wrote, where the output's hand-off (its sender side)
    // left it, once that hand-off's reads are over; it is not written again while leased.
    const Image& image = on_worker ? res.written() : res.primary_image;
    Lease lease;
    lease.task = task;
    lease.ticket = ticket;
    lease.instance = instance.serial;
    lease.slot = current->slot;
    lease.generation = s.generation;
    lease.device = instance.device();
    lease.image = image.get();
    lease.view = image.view.get();
    lease.format = image.format;
    lease.extent = image.extent;
    lease.on_worker = on_worker;
    if (on_worker && instance.keeps_output_on_worker()) {
        lease.layout = res.handed_off_layout; // as its work left it
        lease.wait_semaphore = instance.worker->work_timeline().handle();
        lease.wait_value = s.work_value;
        lease.queue_family = instance.worker->device().queue(QueueRole::Main).family();
    } else if (on_worker) {
        lease.layout = res.handed_off_layout;
        lease.wait_semaphore = instance.transport->sender_semaphore();
        lease.wait_value = s.worker_value;
        lease.queue_family = instance.worker->device().queue(QueueRole::Main).family();
    } else {
        lease.layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
        lease.wait_semaphore = instance.transport->receiver_semaphore();
        lease.wait_value = s.primary_value;
        lease.queue_family = m_primary_family;
    }
    return lease;
}

bool LeaseTable::release(TaskInstance& instance, const Lease& lease, std::uint64_t value) noexcept {
    if (lease.slot >= instance.ring.size()) {
        return false;
    }
    std::lock_guard lock(instance.mutex);
    SlotRecord& s = instance.ring[lease.slot];
    {
        // The ticket must be held, and held for exactly this task's output: a copy with another
        // task, instance, slot or generation ends nothing.
        std::lock_guard table(m_mutex);
        const auto it = m_tickets.find(lease.ticket);
        if (it == m_tickets.end() || it->second.task != lease.task ||
            it->second.serial != instance.serial || it->second.slot != lease.slot ||
            it->second.generation != lease.generation || it->second.on_worker != lease.on_worker) {
            return false;
        }
        m_tickets.erase(it);
    }
    // Each ticket held one count on its slot: the slot's record agrees while it is held.
    if (s.generation != lease.generation || s.readers.leases == 0 || s.trial) {
        return false; // a bug: the ticket outlived its count
    }
    --s.readers.leases;
    std::uint64_t& release =
        lease.on_worker ? s.readers.worker_release_value : s.readers.release_value;
    release = std::max(release, value);
    finish_reads(instance, lease.slot, m_reads_seen.load(std::memory_order_relaxed));
    return true;
}

Clock::duration LeaseTable::long_after(TaskId task) const noexcept {
    const auto pace = m_paces.find(task);
    const Clock::duration period = pace == m_paces.end() ? Clock::duration{} : pace->second.period;
    return std::max(period * k_long_periods, k_long_floor);
}

HeldLeases LeaseTable::held(TaskId task, Clock::time_point now) const noexcept {
    HeldLeases out;
    std::lock_guard table(m_mutex);
    const Clock::duration limit = long_after(task);
    for (const auto& [number, ticket] : m_tickets) {
        if (ticket.task != task) {
            continue;
        }
        const Clock::duration age = std::max(now - ticket.since, Clock::duration{});
        ++out.count;
        out.long_held += age > limit ? 1 : 0;
        out.oldest = std::max(out.oldest, age);
    }
    return out;
}

std::size_t LeaseTable::tickets_held() const noexcept {
    std::lock_guard table(m_mutex);
    return m_tickets.size();
}

void LeaseTable::note_long_held(Clock::time_point now) noexcept {
    struct Warning {
        std::uint64_t ticket;
        std::string task;
        std::uint64_t generation;
        std::uint32_t slot;
        Clock::duration age;
        Clock::duration limit;
    };
    std::vector<Warning> warnings;
    try {
        std::lock_guard table(m_mutex);
        if (now - m_last_check < k_long_check) {
            return;
        }
        m_last_check = now;
        for (auto& [number, ticket] : m_tickets) {
            if (ticket.logged) {
                continue;
            }
            const Clock::duration limit = long_after(ticket.task);
            if (now - ticket.since > limit) {
                warnings.push_back({number, ticket.instance->desc.name, ticket.generation,
                                    ticket.slot, now - ticket.since, limit});
                ticket.logged = true;
            }
        }
    } catch (...) {
        // Out of memory: the tickets not marked yet are looked at again next time.
    }
    // Logged with the table's lock no longer held: a slow callback delays no acquire.
    for (const Warning& w : warnings) {
        log_warn("runtime",
                 "task '{}': lease {} (generation {}, slot {}) held for {:.0f} ms, longer than "
                 "{:.0f} ms ({} of the task's periods between outputs, at least {:.0f} ms); its "
                 "slot is not reused until it is released",
                 w.task, w.ticket, w.generation, w.slot, ms(w.age), ms(w.limit), k_long_periods,
                 ms(k_long_floor));
    }
}

void LeaseTable::forget(TaskId task) noexcept {
    std::lock_guard table(m_mutex);
    m_paces.erase(task);
}

void LeaseTable::observe_reads(std::uint64_t reads) noexcept {
    // Keep the maximum: pump() and the completion thread may store out of order. Relaxed: it
    // is a lower bound of the semaphore's value, which orders nothing by itself.
    raise_to(m_reads_seen, reads);
}

void LeaseTable::finish_reads(TaskInstance& instance, std::uint32_t slot,
                              std::uint64_t reads) noexcept {
    SlotRecord& s = instance.ring[slot];
    if (s.state == SlotState::Leased && s.readers.leases == 0 && reads >= s.readers.release_value &&
        instance.worker->reads_reached(s.readers.worker_release_value)) {
        (void)instance.ring.apply(slot, SlotEvent::ReadsDone);
        if (!s.published) {
            recycle(instance, slot);
        }
    }
}

std::optional<std::uint64_t> LeaseTable::awaited_reads(const TaskInstance& instance,
                                                       const SlotRecord& s) noexcept {
    if (s.state != SlotState::Leased || s.readers.leases != 0 ||
        !instance.worker->reads_reached(s.readers.worker_release_value)) {
        return std::nullopt;
    }
    return s.readers.release_value;
}

} // namespace tandem::detail
