// LeaseTable: leases on an instance's outputs. lease() leases an instance's published output
// (Ready or Leased -> Leased, one more lease on the slot); release() ends one and records the
// primary-timeline value at which the application's reads finish. A slot whose leases are all
// released goes back to Ready (and to Free when it is no longer the published output) once the
// primary timeline has passed the largest of those values: release() checks the value seen
// last, the CompletionTracker reports newer ones (observe_reads) and settles the slots
// (finish_reads). It owns that last-seen value; the slot records belong to their instances.
//
// Threads: every method on any thread; lease and release never block on a GPU and never throw.
// Lock order: lease and release take the instance's mutex (the caller may hold its task's);
// finish_reads: the caller holds it. Memory order: the last-seen value is a lower bound of the
// semaphore's value, kept as a maximum with relaxed operations; it orders nothing by itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "runtime/task_instance.hpp"
#include "tandem/lease.hpp"

namespace tandem::detail {

class LeaseTable {
public:
    // `primary_family`: the queue family of the primary's main queue, where leases are read.
    explicit LeaseTable(std::uint32_t primary_family) : m_primary_family(primary_family) {}

    // A lease on the instance's newest output when its generation is at least `at_least`.
    [[nodiscard]] std::optional<Lease> lease(TaskInstance& instance, TaskId task,
                                             std::uint64_t at_least) const noexcept;
    // False (and nothing changed) when `lease` is not held on `instance`.
    bool release(TaskInstance& instance, const Lease& lease,
                 std::uint64_t primary_value) const noexcept;

    // The primary timeline has reached `reads` (the pump and the completion thread, in any
    // order: the maximum is kept).
    void observe_reads(std::uint64_t reads) noexcept;
    // Slot `slot`'s reads finished by `reads`: a Leased slot without leases whose release value
    // `reads` passed becomes Ready, and Free unless it is the published output. Caller holds
    // instance.mutex.
    static void finish_reads(TaskInstance& instance, std::uint32_t slot,
                             std::uint64_t reads) noexcept;
    // The primary-timeline value whose arrival would let the slot's reads finish, when it waits
    // for one (Leased without leases). Caller holds the instance's mutex.
    [[nodiscard]] static std::optional<std::uint64_t> awaited_reads(const SlotRecord& s) noexcept {
        if (s.state == SlotState::Leased && s.leases == 0) {
            return s.release_value;
        }
        return std::nullopt;
    }

private:
    std::uint32_t m_primary_family;
    std::atomic<std::uint64_t> m_reads_seen{0}; // the last value observe_reads was given
};

} // namespace tandem::detail
