#include "runtime/slot_ring.hpp"

namespace tandem::detail {

const char* to_string(SlotState state) noexcept {
    switch (state) {
    case SlotState::Free:
        return "free";
    case SlotState::Recording:
        return "recording";
    case SlotState::Lent:
        return "lent";
    case SlotState::WorkerInFlight:
        return "worker-in-flight";
    case SlotState::Transferring:
        return "transferring";
    case SlotState::Ready:
        return "ready";
    case SlotState::Kept:
        return "kept";
    case SlotState::Leased:
        return "leased";
    case SlotState::Retired:
        return "retired";
    }
    return "?";
}

const char* to_string(SlotEvent event) noexcept {
    switch (event) {
    case SlotEvent::Accept:
        return "accept";
    case SlotEvent::Lend:
        return "lend";
    case SlotEvent::Keep:
        return "keep";
    case SlotEvent::Submitted:
        return "submitted";
    case SlotEvent::WorkerDone:
        return "worker-done";
    case SlotEvent::CopyDone:
        return "copy-done";
    case SlotEvent::Lease:
        return "lease";
    case SlotEvent::ReadsDone:
        return "reads-done";
    case SlotEvent::Recycle:
        return "recycle";
    case SlotEvent::Abort:
        return "abort";
    case SlotEvent::Fail:
        return "fail";
    }
    return "?";
}

std::optional<SlotState> slot_transition(SlotState from, SlotEvent event) noexcept {
    using S = SlotState;
    using E = SlotEvent;
    if (event == E::Fail) {
        return S::Retired; // from anywhere, Retired included (idempotent)
    }
    switch (from) {
    case S::Free:
        if (event == E::Accept) {
            return S::Recording;
        }
        break;
    case S::Recording:
        if (event == E::Submitted) {
            return S::WorkerInFlight;
        }
        if (event == E::Lend) {
            return S::Lent;
        }
        if (event == E::Abort) {
            return S::Free;
        }
        break;
    case S::Lent:
        if (event == E::Accept) {
            return S::Recording;
        }
        if (event == E::Abort) {
            return S::Free;
        }
        break;
    case S::WorkerInFlight:
        if (event == E::WorkerDone) {
            return S::Transferring;
        }
        if (event == E::CopyDone) { // the copy completing implies the worker work completed
            return S::Ready;
        }
        break;
    case S::Transferring:
        if (event == E::CopyDone) {
            return S::Ready;
        }
        break;
    case S::Ready:
        if (event == E::Lease) {
            return S::Leased;
        }
        if (event == E::Recycle) {
            return S::Free;
        }
        if (event == E::Keep) {
            return S::Kept;
        }
        break;
    case S::Kept:
        if (event == E::Recycle) {
            return S::Free;
        }
        if (event == E::Keep) {
            return S::Kept;
        }
        break;
    case S::Leased:
        if (event == E::Lease) {
            return S::Leased;
        }
        if (event == E::ReadsDone) {
            return S::Ready;
        }
        break;
    case S::Retired:
        break;
    }
    return std::nullopt;
}

std::optional<std::uint32_t> SlotRing::try_take_free() noexcept {
    for (std::uint32_t i = 0; i < size(); ++i) {
        // A Free slot a chain's consumer still reads (its producer's job failed) waits for it.
        if (m_slots[i].state == SlotState::Free && m_slots[i].readers.holds == 0) {
            m_slots[i].state = SlotState::Recording;
            return i;
        }
    }
    return std::nullopt;
}

bool SlotRing::apply(std::uint32_t i, SlotEvent event) noexcept {
    auto next = slot_transition(m_slots[i].state, event);
    if (!next) {
        return false;
    }
    m_slots[i].state = *next;
    return true;
}

std::uint32_t SlotRing::count(SlotState state) const noexcept {
    std::uint32_t n = 0;
    for (const auto& s : m_slots) {
        n += s.state == state ? 1u : 0u;
    }
    return n;
}

std::uint32_t SlotRing::in_flight_count() const noexcept {
    std::uint32_t n = 0;
    for (const auto& s : m_slots) {
        n += in_flight(s.state) ? 1u : 0u;
    }
    return n;
}

} // namespace tandem::detail
