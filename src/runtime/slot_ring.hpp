// SlotRing: the N slots of one task and the state machine every slot follows. CPU-side logic
// only (the GPU resources of a slot live in the task); the owning task serialises access under
// its mutex.
//
//     Free -> Recording -> WorkerInFlight -> Transferring -> Ready <-> Leased
//      ^ ^      |  ^                                         |   |
//      | |  Lend|  |Accept (a submit's job takes it)         |   Keep (a chain's
//      | |      v  |                                         |   |     consumer reads it)
//      | +---- Lent (Abort: the loan ended without a job)    |   v
//      |                                                     |   Kept
//      +--- Recycle (Ready or Kept), Abort (Recording: the --+---+
//           job failed before any GPU work)
//     any state -- Fail --> Retired (never reused)
//
// Free: may be taken by submit. Recording: accepted, queued for the worker's thread.
// Lent: the application holds the slot's input images (Runtime::lend_inputs), no job yet: no
// worker is late for it. WorkerInFlight: worker GPU work submitted. Transferring: worker work
// observed complete, copy to the primary pending. Ready: primary copy complete, no read pending.
// Leased: leased, or a release whose primary value has not been observed yet. Kept: no longer
// the published output, kept for a chain's consumer that reads it or has yet to
// (runtime/task_chains.hpp); the completion pass recycles it once nothing keeps it. Recycle
// (Ready or Kept -> Free) happens only when the slot is not the published output and no chain's
// consumer reads or awaits it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tandem::detail {

enum class SlotState {
    Free,
    Recording,
    Lent,
    WorkerInFlight,
    Transferring,
    Ready,
    Kept,
    Leased,
    Retired
};
enum class SlotEvent {
    Accept, // Free or Lent -> Recording: a job takes the slot
    Lend,   // Recording -> Lent: the slot just taken is the application's (lend_inputs)
    Keep,   // Ready -> Kept: recycled, but a chain's consumer keeps it
    Submitted,
    WorkerDone,
    CopyDone,
    Lease,
    ReadsDone,
    Recycle,
    Abort, // Recording or Lent -> Free: the job failed in its workload before anything was
           // submitted, or the loan ended without one
    Fail,
};

[[nodiscard]] const char* to_string(SlotState state) noexcept;
[[nodiscard]] const char* to_string(SlotEvent event) noexcept;

// The one transition function: the next state, or nullopt when `event` is not allowed in `from`
// (a bug in the caller).
[[nodiscard]] std::optional<SlotState> slot_transition(SlotState from, SlotEvent event) noexcept;

// True while GPU work for the slot may be pending (accepted and not yet ready).
[[nodiscard]] constexpr bool in_flight(SlotState s) noexcept {
    return s == SlotState::Recording || s == SlotState::WorkerInFlight ||
           s == SlotState::Transferring;
}

// True while the slot holds a job in flight or the application's loan (Lent): its instance is
// not freed meanwhile, and a lost worker or failed link retires it.
[[nodiscard]] constexpr bool held(SlotState s) noexcept {
    return in_flight(s) || s == SlotState::Lent;
}

using Clock = std::chrono::steady_clock;

struct SlotTimes {
    Clock::time_point request;
    Clock::time_point worker_submit;
    Clock::time_point transfer_queued;
    Clock::time_point worker_done;
    Clock::time_point ready;
};

// Who reads a slot's output besides its transport, and what the slot's next job waits for
// (JobPipeline::previous_readers): the application's leases, and other tasks' jobs that read it
// in place (holds, taken at their submit: runtime/task_chains.hpp). A slot a hold reads is
// neither taken nor recycled.
struct SlotReaders {
    std::uint32_t leases = 0;        // leases not yet released
    std::uint64_t release_value = 0; // primary timeline value their reads finish at
    // The worker's reads timeline value its leases' reads (acquire_on_worker) finish at.
    std::uint64_t worker_release_value = 0;
    std::uint32_t holds = 0;      // other tasks' jobs that may still read it
    std::uint64_t holds_done = 0; // the newest work value of those that completed (its device's)
};

struct SlotRecord {
    SlotState state = SlotState::Free;
    std::uint64_t generation = 0;
    std::uint64_t work_value = 0;    // worker work timeline value of the last submit
    std::uint64_t worker_value = 0;  // transport: worker image may be rewritten at this value
    std::uint64_t primary_value = 0; // transport: primary image holds the result at this value
    SlotReaders readers;
    bool published = false; // this slot holds the task's published output
    bool worker_done_seen = false;
    // A job Tandem runs to measure the task, never published: a property of the slot's job (as
    // its generation is), not a stage of the slot's life.
    bool trial = false;
    // Whether its job's work was submitted (a job thread holding the slot asks).
    bool work_submitted = false;
    SlotTimes times;
};

class SlotRing {
public:
    explicit SlotRing(std::uint32_t slots) : m_slots(slots) {}

    [[nodiscard]] std::uint32_t size() const noexcept {
        return static_cast<std::uint32_t>(m_slots.size());
    }
    [[nodiscard]] SlotRecord& operator[](std::uint32_t i) noexcept { return m_slots[i]; }
    [[nodiscard]] const SlotRecord& operator[](std::uint32_t i) const noexcept {
        return m_slots[i];
    }

    // Takes the lowest Free slot no chain's consumer reads (Free -> Recording), or nullopt when
    // there is none: then nothing changed.
    [[nodiscard]] std::optional<std::uint32_t> try_take_free() noexcept;

    // Applies `event` to slot `i`; false (and no change) when the transition is not allowed.
    [[nodiscard]] bool apply(std::uint32_t i, SlotEvent event) noexcept;

    [[nodiscard]] std::uint32_t count(SlotState state) const noexcept;
    [[nodiscard]] std::uint32_t in_flight_count() const noexcept;

private:
    std::vector<SlotRecord> m_slots;
};

} // namespace tandem::detail
