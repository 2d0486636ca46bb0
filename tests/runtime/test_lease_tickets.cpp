// Leases are tickets: each acquire is its own lease, released once. A second release answers
// LeaseNotHeld and frees nothing, so a slot another lease of the same output still holds is never
// rewritten (the exact case of two frames in flight leasing one output, the first released
// twice); a lease never issued, or a copy naming another task, ends nothing; thousands of
// acquire/release cycles leave no ticket behind; a lease held far longer than its task's period
// shows in stats() and is logged once.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.hpp"
#include "tandem/log.hpp"
#include "tandem/readback.hpp"

namespace tandem {

// A TaskError by name in a failure message (found by argument-dependent lookup).
inline void PrintTo(TaskError error, std::ostream* out) {
    *out << to_string(error);
}

namespace test {
namespace {

using namespace std::chrono_literals;
using detail::SlotState;

class LeaseTickets : public RuntimeTest {
protected:
    // A 64x64 pattern task on the primary (16,384 bytes an output) with three slots.
    static TaskDesc three_slot_task(const std::string& name = "tickets") {
        TaskDesc d = pattern_task("primary", 64, 64);
        d.name = name;
        d.slots = 3;
        return d;
    }

    // Submits one job and pumps until it is the task's newest output.
    static void run_job(Runtime& runtime, TaskId task) {
        const SubmitResult r = runtime.submit(task);
        ASSERT_TRUE(r.accepted()) << r.reason;
        ASSERT_TRUE(pump_until(
            runtime, [&] { return runtime.stats(task).newest_generation >= r.generation; }));
    }

    static std::vector<std::uint8_t> bytes_of(LeaseReadback& readback, const Lease& lease) {
        return readback.read(lease).bytes;
    }
};

// The case, exactly: two frames in flight acquire the same output (two leases on one
// slot), the engine releases the first twice, two more jobs run.
TEST_F(LeaseTickets, ASecondReleaseFreesNothingAndTheOtherLeasesSlotIsNotRewritten) {
    auto runtime = make_runtime();
    LeaseReadback readback(*runtime);
    const TaskId task = runtime->register_task(three_slot_task());
    run_job(*runtime, task);

    const AcquireResult first = runtime->acquire(task);
    const AcquireResult second = runtime->acquire(task);
    ASSERT_TRUE(first);
    ASSERT_TRUE(second);
    EXPECT_EQ(first->slot, second->slot);
    EXPECT_EQ(first->generation, second->generation);
    EXPECT_NE(first->ticket, 0u);
    EXPECT_NE(first->ticket, second->ticket) << "two acquires are two leases";
    EXPECT_EQ(runtime->stats(task).leases_held, 2u);

    const std::vector<std::uint8_t> before = bytes_of(readback, *second);
    ASSERT_EQ(before.size(), 16384u);
    EXPECT_EQ(detail::pattern_mismatch(before.data(), second->generation, 64, 64), -1);

    EXPECT_EQ(runtime->release(*first, 0), TaskError::None);
    EXPECT_EQ(runtime->release(*first, 0), TaskError::LeaseNotHeld);
    EXPECT_EQ(runtime->stats(task).leases_held, 1u) << "the second release freed nothing";

    // Two jobs later (and a few more): the three-slot ring reuses the two slots not held.
    for (int job = 0; job < 6; ++job) {
        run_job(*runtime, task);
        auto& impl = detail::RuntimeAccess::impl(*runtime);
        EXPECT_EQ(detail::RuntimeProbe(impl).slot_states(task)[second->slot], SlotState::Leased)
            << "job " << job;
    }
    EXPECT_GE(runtime->stats(task).newest_generation, second->generation + 6);

    const std::vector<std::uint8_t> after = bytes_of(readback, *second);
    ASSERT_EQ(after.size(), before.size());
    std::size_t changed = 0;
    for (std::size_t i = 0; i < after.size(); ++i) {
        changed += after[i] != before[i] ? 1 : 0;
    }
    EXPECT_EQ(changed, 0u) << "of " << after.size() << " bytes of slot " << second->slot;
    EXPECT_EQ(detail::pattern_mismatch(after.data(), second->generation, 64, 64), -1);

    // The second lease's own release is answered, once.
    EXPECT_EQ(runtime->release(*second, 0), TaskError::None);
    EXPECT_EQ(runtime->release(*second, 0), TaskError::LeaseNotHeld);
    EXPECT_EQ(runtime->stats(task).leases_held, 0u);
    // Its slot is reused again now that every ticket on it was released.
    ASSERT_TRUE(pump_until(*runtime, [&] {
        auto& impl = detail::RuntimeAccess::impl(*runtime);
        return detail::RuntimeProbe(impl).slot_states(task)[second->slot] != SlotState::Leased;
    }));
}

TEST_F(LeaseTickets, ALeaseNeverIssuedEndsNothing) {
    auto runtime = make_runtime();
    const TaskId task = runtime->register_task(three_slot_task());
    run_job(*runtime, task);
    const AcquireResult held = runtime->acquire(task);
    ASSERT_TRUE(held);

    EXPECT_EQ(runtime->release(Lease{}, 0), TaskError::LeaseNotHeld);
    // A copy of the held lease with a ticket never issued, and one with ticket 0.
    Lease forged = *held;
    forged.ticket = held->ticket + (std::uint64_t{1} << 40);
    EXPECT_EQ(runtime->release(forged, 0), TaskError::LeaseNotHeld);
    forged.ticket = 0;
    EXPECT_EQ(runtime->release(forged, 0), TaskError::LeaseNotHeld);
    // The held ticket with another slot or generation is not that lease either.
    forged = *held;
    forged.generation += 1;
    EXPECT_EQ(runtime->release(forged, 0), TaskError::LeaseNotHeld);
    forged = *held;
    forged.slot = (held->slot + 1) % 3;
    EXPECT_EQ(runtime->release(forged, 0), TaskError::LeaseNotHeld);
    EXPECT_EQ(runtime->stats(task).leases_held, 1u);

    EXPECT_EQ(runtime->release(*held, 0), TaskError::None);
    EXPECT_EQ(runtime->stats(task).leases_held, 0u);
}

// Two tasks whose outputs sit in the same slot with the same generation: one's lease, named as
// the other's, ends neither.
TEST_F(LeaseTickets, ALeaseOfOneTaskReleasedAsAnothersEndsNothing) {
    auto runtime = make_runtime();
    LeaseReadback readback(*runtime);
    const TaskId a = runtime->register_task(three_slot_task("a"));
    const TaskId b = runtime->register_task(three_slot_task("b"));
    run_job(*runtime, a);
    run_job(*runtime, b);
    const AcquireResult lease_a = runtime->acquire(a);
    const AcquireResult lease_b = runtime->acquire(b);
    ASSERT_TRUE(lease_a);
    ASSERT_TRUE(lease_b);
    EXPECT_EQ(lease_a->slot, lease_b->slot);
    EXPECT_EQ(lease_a->generation, lease_b->generation);
    const std::vector<std::uint8_t> before = bytes_of(readback, *lease_b);

    Lease as_b = *lease_a;
    as_b.task = b;
    EXPECT_EQ(runtime->release(as_b, 0), TaskError::LeaseNotHeld);
    as_b.instance = lease_b->instance; // every field b's lease has, but a's ticket
    EXPECT_EQ(runtime->release(as_b, 0), TaskError::LeaseNotHeld);
    EXPECT_EQ(runtime->stats(a).leases_held, 1u);
    EXPECT_EQ(runtime->stats(b).leases_held, 1u);

    // b's slot stays held through jobs that would reuse it were it free.
    for (int job = 0; job < 4; ++job) {
        run_job(*runtime, b);
    }
    EXPECT_EQ(bytes_of(readback, *lease_b), before);

    EXPECT_EQ(runtime->release(*lease_a, 0), TaskError::None);
    EXPECT_EQ(runtime->release(*lease_b, 0), TaskError::None);
    EXPECT_EQ(runtime->stats(a).leases_held, 0u);
    EXPECT_EQ(runtime->stats(b).leases_held, 0u);
}

// 3,000 acquire/release cycles (some leases acquired twice, some released twice) while jobs run:
// no ticket is left, and no slot is left leased.
TEST_F(LeaseTickets, ThousandsOfCyclesLeaveNoTicketHeld) {
    auto runtime = make_runtime();
    const TaskId task = runtime->register_task(three_slot_task());
    run_job(*runtime, task);
    std::uint64_t last_ticket = 0;
    std::uint32_t not_held = 0;
    for (int cycle = 0; cycle < 3000; ++cycle) {
        if (cycle % 10 == 0) {
            (void)runtime->submit(task); // Busy while the ring is full: fine
        }
        runtime->pump();
        const AcquireResult lease = runtime->acquire(task);
        ASSERT_TRUE(lease) << "cycle " << cycle;
        EXPECT_GT(lease->ticket, last_ticket) << "tickets are never reused";
        last_ticket = lease->ticket;
        if (cycle % 7 == 0) {
            const AcquireResult again = runtime->acquire(task);
            ASSERT_TRUE(again);
            EXPECT_EQ(runtime->release(*again, 0), TaskError::None);
            last_ticket = again->ticket;
        }
        EXPECT_EQ(runtime->release(*lease, 0), TaskError::None);
        if (cycle % 5 == 0) {
            not_held += runtime->release(*lease, 0) == TaskError::LeaseNotHeld ? 1 : 0;
        }
    }
    EXPECT_EQ(not_held, 600u);
    const TaskStats stats = runtime->stats(task);
    EXPECT_EQ(stats.leases_held, 0u);
    EXPECT_EQ(stats.leases_held_long, 0u);
    EXPECT_EQ(stats.oldest_lease_us, 0.0);
    EXPECT_GT(stats.ready, 1u);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const auto states = detail::RuntimeProbe(*runtime).slot_states(task);
        return std::none_of(states.begin(), states.end(),
                            [](SlotState s) { return s == SlotState::Leased; });
    }));
}

// A lease held past max(10 periods, 1 s) while its task runs on: counted in stats() and logged
// once, at warn, through the runtime's log callback; leases released each frame are not.
TEST_F(LeaseTickets, ALeaseHeldFarLongerThanItsPeriodShowsInStatsAndIsLoggedOnce) {
    std::mutex mutex;
    std::vector<std::string> warnings;
    RuntimeOptions options;
    options.log_level = LogLevel::Warn;
    options.log = [&](LogLevel level, std::string_view category, std::string_view message) {
        if (level == LogLevel::Warn && category == "runtime" &&
            message.find("held for") != std::string_view::npos) {
            std::lock_guard lock(mutex);
            warnings.emplace_back(message);
        }
    };
    auto runtime = make_runtime("none", options);
    const TaskId task = runtime->register_task(three_slot_task("held"));
    // Outputs acquired and released each frame: the task's period is measured, nothing logged.
    for (int job = 0; job < 8; ++job) {
        run_job(*runtime, task);
        const AcquireResult lease = runtime->acquire(task);
        ASSERT_TRUE(lease);
        EXPECT_EQ(runtime->release(*lease, 0), TaskError::None);
    }
    const AcquireResult held = runtime->acquire(task);
    ASSERT_TRUE(held);
    const auto since = std::chrono::steady_clock::now();
    TaskStats stats = runtime->stats(task);
    EXPECT_EQ(stats.leases_held, 1u);
    EXPECT_EQ(stats.leases_held_long, 0u);

    // Frames go on with the two other slots until the held lease is past the 1 s floor.
    const auto deadline = since + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
        (void)runtime->submit(task);
        runtime->pump();
        if (auto lease = runtime->acquire(task)) {
            EXPECT_EQ(runtime->release(*lease, 0), TaskError::None);
        }
        stats = runtime->stats(task);
        std::lock_guard lock(mutex);
        if (stats.leases_held_long == 1 && !warnings.empty()) {
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_GE(std::chrono::steady_clock::now() - since, 1s) << "not before the floor";
    EXPECT_EQ(stats.leases_held, 1u);
    EXPECT_EQ(stats.leases_held_long, 1u);
    EXPECT_GE(stats.oldest_lease_us, 1e6);
    // Another half second of checks logs nothing more about it.
    std::this_thread::sleep_for(500ms);
    {
        std::lock_guard lock(mutex);
        ASSERT_EQ(warnings.size(), 1u);
        EXPECT_NE(warnings[0].find("lease " + std::to_string(held->ticket) + " "),
                  std::string::npos)
            << warnings[0];
        EXPECT_NE(warnings[0].find("'held'"), std::string::npos) << warnings[0];
    }

    EXPECT_EQ(runtime->release(*held, 0), TaskError::None);
    stats = runtime->stats(task);
    EXPECT_EQ(stats.leases_held, 0u);
    EXPECT_EQ(stats.leases_held_long, 0u);
}

} // namespace
} // namespace test
} // namespace tandem
