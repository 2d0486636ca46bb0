// The slot state machine and the output registry, without a GPU.
#include <gtest/gtest.h>

#include "runtime/output_registry.hpp"
#include "runtime/slot_ring.hpp"

namespace tandem::test {
namespace {

using detail::SlotEvent;
using detail::SlotState;

TEST(SlotRing, FollowsTheDesignedCycle) {
    detail::SlotRing ring(3);
    auto slot = ring.try_take_free();
    ASSERT_TRUE(slot);
    EXPECT_EQ(ring[*slot].state, SlotState::Recording);
    EXPECT_TRUE(ring.apply(*slot, SlotEvent::Submitted));
    EXPECT_TRUE(ring.apply(*slot, SlotEvent::WorkerDone));
    EXPECT_EQ(ring[*slot].state, SlotState::Transferring);
    EXPECT_TRUE(ring.apply(*slot, SlotEvent::CopyDone));
    EXPECT_TRUE(ring.apply(*slot, SlotEvent::Lease));
    EXPECT_EQ(ring[*slot].state, SlotState::Leased);
    EXPECT_FALSE(ring.apply(*slot, SlotEvent::Recycle)) << "a leased slot is never freed";
    EXPECT_TRUE(ring.apply(*slot, SlotEvent::ReadsDone));
    EXPECT_TRUE(ring.apply(*slot, SlotEvent::Recycle));
    EXPECT_EQ(ring[*slot].state, SlotState::Free);
}

TEST(SlotRing, BusyChangesNothing) {
    detail::SlotRing ring(2);
    ASSERT_TRUE(ring.try_take_free());
    ASSERT_TRUE(ring.try_take_free());
    const auto before = std::vector<SlotState>{ring[0].state, ring[1].state};
    EXPECT_FALSE(ring.try_take_free());
    EXPECT_EQ(before, (std::vector<SlotState>{ring[0].state, ring[1].state}));
}

TEST(SlotRing, EveryStateFailsToRetiredAndRetiredIsFinal) {
    for (auto s : {SlotState::Free, SlotState::Recording, SlotState::Lent,
                   SlotState::WorkerInFlight, SlotState::Transferring, SlotState::Ready,
                   SlotState::Kept, SlotState::Leased, SlotState::Retired}) {
        EXPECT_EQ(detail::slot_transition(s, SlotEvent::Fail), SlotState::Retired);
    }
    for (auto e : {SlotEvent::Accept, SlotEvent::Lend, SlotEvent::Keep, SlotEvent::Submitted,
                   SlotEvent::WorkerDone, SlotEvent::CopyDone, SlotEvent::Lease,
                   SlotEvent::ReadsDone, SlotEvent::Recycle, SlotEvent::Abort}) {
        EXPECT_FALSE(detail::slot_transition(SlotState::Retired, e)) << detail::to_string(e);
    }
}

TEST(SlotRing, OnlyReadySlotsAreLeasedAndOnlyReadyOrKeptOnesRecycled) {
    for (auto s : {SlotState::Free, SlotState::Recording, SlotState::Lent,
                   SlotState::WorkerInFlight, SlotState::Transferring, SlotState::Kept}) {
        EXPECT_FALSE(detail::slot_transition(s, SlotEvent::Lease)) << detail::to_string(s);
    }
    for (auto s : {SlotState::Free, SlotState::Recording, SlotState::Lent,
                   SlotState::WorkerInFlight, SlotState::Transferring, SlotState::Leased}) {
        EXPECT_FALSE(detail::slot_transition(s, SlotEvent::Recycle)) << detail::to_string(s);
    }
    EXPECT_EQ(detail::slot_transition(SlotState::Kept, SlotEvent::Recycle), SlotState::Free);
}

TEST(SlotRing, ALentSlotHoldsNoJobUntilASubmitTakesIt) {
    detail::SlotRing ring(1);
    ASSERT_TRUE(ring.try_take_free());
    ASSERT_TRUE(ring.apply(0, SlotEvent::Lend));
    EXPECT_EQ(ring[0].state, SlotState::Lent);
    EXPECT_EQ(ring.in_flight_count(), 0u) << "no worker is late for a lent slot";
    EXPECT_FALSE(ring.apply(0, SlotEvent::Submitted)) << "no job's work before a submit";
    EXPECT_FALSE(ring.try_take_free()) << "another submit never takes a lent slot";
    EXPECT_TRUE(ring.apply(0, SlotEvent::Accept));
    EXPECT_EQ(ring[0].state, SlotState::Recording);
    EXPECT_EQ(ring.in_flight_count(), 1u);
    // A loan that ends without a job frees its slot.
    detail::SlotRing other(1);
    ASSERT_TRUE(other.try_take_free());
    ASSERT_TRUE(other.apply(0, SlotEvent::Lend));
    EXPECT_TRUE(other.apply(0, SlotEvent::Abort));
    EXPECT_EQ(other[0].state, SlotState::Free);
}

TEST(SlotRing, AKeptSlotIsNeitherTakenNorLeasedUntilRecycled) {
    detail::SlotRing ring(1);
    ASSERT_TRUE(ring.try_take_free());
    ASSERT_TRUE(ring.apply(0, SlotEvent::Submitted));
    ASSERT_TRUE(ring.apply(0, SlotEvent::CopyDone));
    ASSERT_TRUE(ring.apply(0, SlotEvent::Keep)); // superseded, a chain's consumer reads it
    EXPECT_EQ(ring[0].state, SlotState::Kept);
    EXPECT_FALSE(ring.try_take_free());
    EXPECT_FALSE(ring.apply(0, SlotEvent::Lease));
    EXPECT_TRUE(ring.apply(0, SlotEvent::Keep)) << "kept again while still read";
    EXPECT_TRUE(ring.apply(0, SlotEvent::Recycle));
    EXPECT_TRUE(ring.try_take_free());
}

TEST(OutputRegistry, NeverRollsBack) {
    detail::OutputRegistry registry;
    EXPECT_FALSE(registry.current());
    auto a = registry.offer(2, 1);
    EXPECT_TRUE(a.published);
    EXPECT_FALSE(a.replaced);
    auto late = registry.offer(1, 0); // generation 1 completes after 2
    EXPECT_FALSE(late.published);
    EXPECT_EQ(registry.current()->generation, 2u);
    EXPECT_FALSE(registry.offer(2, 0).published) << "equal generations are not newer";
    auto b = registry.offer(3, 2);
    EXPECT_TRUE(b.published);
    EXPECT_EQ(b.replaced, 1u);
    EXPECT_EQ(registry.current()->slot, 2u);
}

} // namespace
} // namespace tandem::test
