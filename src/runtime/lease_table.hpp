// LeaseTable: leases on an instance's outputs, each its own ticket. lease() leases an instance's
// published output (Ready or Leased -> Leased, one more lease on the slot) under a new ticket
// (Lease::ticket, never issued twice in the process); release() ends the lease whose ticket it
// names, once, and records the primary-timeline value at which the application's reads finish.
// A ticket not held (released already, never issued, or naming another task, instance, slot or
// generation) changes nothing. A slot whose tickets are all released goes back to Ready (and to
// Free when it is no longer the published output) once the primary timeline has passed the
// largest of their values: release() checks the value seen last, the CompletionTracker reports
// newer ones (observe_reads) and settles the slots (finish_reads). It owns that last-seen value
// and the tickets held; the slot records belong to their instances.
//
// Long-held leases: a ticket held longer than max(k_long_periods x its task's period between
// outputs, k_long_floor) is counted in held() and logged once, at warn (note_long_held). The
// period is measured from the outputs leased: the time between two leased outputs' arrival on
// the primary over the generations between them, smoothed; unknown (0) until two were leased.
//
// Threads: every method on any thread; lease and release never block on a GPU and never throw.
// Lock order: lease and release take the instance's mutex (the caller may hold its task's), then
// the table's own; held() and note_long_held take only the table's; finish_reads: the caller
// holds the instance's. Memory order: the last-seen value is a lower bound of the semaphore's
// value, kept as a maximum with relaxed operations; it orders nothing by itself.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "runtime/task_instance.hpp"
#include "tandem/lease.hpp"

namespace tandem::detail {

// A task's leases held now (TaskStats::leases_held and the two after it).
struct HeldLeases {
    std::uint32_t count = 0;
    std::uint32_t long_held = 0;
    Clock::duration oldest{};
};

class LeaseTable {
public:
    // A lease counts as long-held past this many of its task's periods between outputs, and
    // never before k_long_floor: a frame or two in flight is far shorter than either.
    static constexpr std::uint32_t k_long_periods = 10;
    static constexpr Clock::duration k_long_floor = std::chrono::seconds(1);

    // `primary_family`: the queue family of the primary's main queue, where leases are read.
    explicit LeaseTable(std::uint32_t primary_family) : m_primary_family(primary_family) {}

    // A lease on the instance's newest output when its generation is at least `at_least`, under
    // a new ticket; none when there is no such output (or no memory for the ticket). With
    // `on_worker`, an instance on a worker device leases the image its work wrote there
    // (Lease::on_worker); on the primary the two are one image, and the lease is the primary's.
    [[nodiscard]] std::optional<Lease> lease(TaskInstance& instance, TaskId task,
                                             std::uint64_t at_least, bool on_worker) noexcept;
    // False (and nothing changed) when `lease`'s ticket is not held on `instance`. `value`: on
    // the primary timeline, or for a lease on_worker on its device's reads timeline.
    bool release(TaskInstance& instance, const Lease& lease, std::uint64_t value) noexcept;

    // Task `task`'s tickets held at `now`.
    [[nodiscard]] HeldLeases held(TaskId task, Clock::time_point now) const noexcept;
    // Every ticket held in the runtime (0 once every lease was released).
    [[nodiscard]] std::size_t tickets_held() const noexcept;
    // Logs each ticket that became long-held since the last call, once (the completion thread;
    // it looks at most every k_long_check).
    void note_long_held(Clock::time_point now) noexcept;
    // The task was unregistered: its period goes (its tickets stay until released).
    void forget(TaskId task) noexcept;

    // The primary timeline has reached `reads` (the pump and the completion thread, in any
    // order: the maximum is kept).
    void observe_reads(std::uint64_t reads) noexcept;
    // Slot `slot`'s reads finished by `reads` (and, for leases on its worker, by the worker's
    // reads timeline, read there when it has not been seen passing them): a Leased slot without
    // leases whose release values were passed becomes Ready, and Free unless it is the
    // published output. Caller holds instance.mutex.
    static void finish_reads(TaskInstance& instance, std::uint32_t slot,
                             std::uint64_t reads) noexcept;
    // The primary-timeline value whose arrival would let the slot's reads finish, when it waits
    // for that one alone (Leased without leases, none of its reads on the worker's timeline
    // pending: the completion thread looks at those each round). Caller holds the instance's
    // mutex.
    [[nodiscard]] static std::optional<std::uint64_t> awaited_reads(const TaskInstance& instance,
                                                                    const SlotRecord& s) noexcept;

private:
    static constexpr Clock::duration k_long_check = std::chrono::milliseconds(50);

    // One ticket held: what it was issued for. `instance` stays alive while it is held (an
    // instance with a lease on a slot is not quiescent).
    struct Ticket {
        TaskId task;
        std::uint64_t serial = 0;
        std::uint32_t slot = 0;
        std::uint64_t generation = 0;
        const TaskInstance* instance = nullptr;
        Clock::time_point since;
        bool on_worker = false; // Lease::on_worker
        bool logged = false;    // its long-held warning was logged
    };
    // A task's period between outputs, from the outputs it leased.
    struct Pace {
        std::uint64_t generation = 0;
        Clock::time_point ready;
        Clock::duration period{};
    };
    [[nodiscard]] Clock::duration long_after(TaskId task) const noexcept; // caller holds m_mutex

    std::uint32_t m_primary_family;
    std::atomic<std::uint64_t> m_reads_seen{0}; // the last value observe_reads was given
    mutable std::mutex m_mutex;                 // guards everything below
    std::unordered_map<std::uint64_t, Ticket> m_tickets;
    std::unordered_map<TaskId, Pace> m_paces;
    Clock::time_point m_last_check{};
};

} // namespace tandem::detail
