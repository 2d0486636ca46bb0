// The zero-copy path inside the runtime, on lavapipe opened three times (two openings of one
// device have equal UUIDs): negotiated for worker tasks, and forced, it delivers the pattern
// workload's exact bytes through leases, a leased slot is never rewritten while the producer
// runs flat out, and two workers feed the primary at once; under the fixture's synchronisation
// validation.
#include <set>

#include "core/capabilities.hpp"

#include "runtime_fixture.hpp"

namespace tandem::test {
namespace {

class ZeroCopyRuntime : public RuntimeTest {
protected:
    // Skips the test where two openings of the device do not allow zero copy.
    void SetUp() override {
        RuntimeTest::SetUp();
        const auto pair = detail::query_pair_info(adapters()[1].info, adapters()[0].info);
        if (!pair.allows(TransferPath::ZeroCopy)) {
            GTEST_SKIP() << "zero-copy is not available here: "
                         << pair.paths[static_cast<std::size_t>(TransferPath::ZeroCopy)].reason;
        }
    }
    // A runtime with two workers, the path forced when `forced` (else negotiated).
    std::unique_ptr<Runtime> zero_copy_runtime(bool forced) {
        RuntimeOptions options;
        if (forced) {
            options.transfer_path = "zero-copy";
        }
        return make_runtime("auto", options);
    }
};

TEST_F(ZeroCopyRuntime, IsNegotiatedForTwoOpeningsOfOneDevice) {
    auto runtime = zero_copy_runtime(false);
    const TaskId task = runtime->register_task(pattern_task("worker:0"));
    EXPECT_EQ(runtime->stats(task).transfer_path, TransferPath::ZeroCopy);
    const TaskId local = runtime->register_task(pattern_task("primary"));
    EXPECT_EQ(runtime->stats(local).transfer_path, TransferPath::SameDevice);
}

// Every output of several slot counts and sizes, read back on the primary from the leased image
// (which is the memory the worker wrote), holds exactly its own generation's pattern.
TEST_F(ZeroCopyRuntime, DeliversExactPatternsThroughLeases) {
    auto runtime = zero_copy_runtime(true);
    struct Case {
        std::uint32_t slots, w, h;
    };
    for (const Case c : {Case{2, 64, 48}, Case{3, 33, 17}, Case{5, 96, 80}}) {
        SCOPED_TRACE(std::to_string(c.slots) + " slots, " + std::to_string(c.w) + "x" +
                     std::to_string(c.h));
        auto reader = make_reader(*runtime, c.w, c.h);
        TaskDesc desc = pattern_task("worker:0", c.w, c.h);
        desc.name += "-" + std::to_string(c.slots);
        desc.slots = c.slots;
        const TaskId task = runtime->register_task(desc);
        ASSERT_EQ(runtime->stats(task).transfer_path, TransferPath::ZeroCopy);
        std::uint64_t previous = 0;
        int verified = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (verified < 12 && std::chrono::steady_clock::now() < deadline) {
            (void)runtime->submit(task);
            runtime->pump();
            auto lease = runtime->acquire(task);
            if (!lease) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                continue;
            }
            EXPECT_GE(lease->generation, previous) << "went back";
            std::uint64_t v = 0;
            if (lease->generation != previous) {
                expect_pattern(read_back(*reader, *lease, v), *lease);
                ++verified;
            }
            previous = lease->generation;
            runtime->release(*lease, v);
            if (HasFailure()) {
                break;
            }
        }
        EXPECT_EQ(verified, 12);
        const TaskStats s = runtime->stats(task);
        EXPECT_FALSE(s.worker_lost) << s.worker_lost_reason;
        EXPECT_EQ(s.failed, 0u);
    }
}

// One lease is held for the whole run while the producer submits as fast as slots allow: the
// worker writes the primary's memory directly, so only the slot ring keeps it off the leased
// slot; the held image must keep its own generation every time it is read.
TEST_F(ZeroCopyRuntime, ALeasedSlotIsNeverRewritten) {
    auto runtime = zero_copy_runtime(true);
    auto reader = make_reader(*runtime);
    const TaskId task = runtime->register_task(pattern_task("worker:0"));
    ASSERT_TRUE(runtime->submit(task).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
    auto held = runtime->acquire(task);
    ASSERT_TRUE(held);
    std::uint64_t last_value = 0;
    std::set<std::uint64_t> generations;
    for (int frame = 0; frame < 120; ++frame) {
        (void)runtime->submit(task);
        runtime->pump();
        std::uint64_t v = 0;
        expect_pattern(read_back(*reader, *held, v), *held);
        last_value = v;
        if (auto lease = runtime->acquire(task)) {
            generations.insert(lease->generation);
            std::uint64_t lv = 0;
            if (frame % 3 == 0) {
                expect_pattern(read_back(*reader, *lease, lv), *lease);
            }
            runtime->release(*lease, lv);
        }
        if (HasFailure()) {
            break;
        }
    }
    runtime->release(*held, last_value);
    EXPECT_GT(runtime->stats(task).ready, 10u) << "the producer did not run";
    EXPECT_GT(generations.size(), 3u);
}

// Two workers, each an opening of the same device, feed the primary at once.
TEST_F(ZeroCopyRuntime, TwoWorkersFeedThePrimaryAtOnce) {
    auto runtime = zero_copy_runtime(true);
    ASSERT_EQ(runtime->worker_devices().size(), 2u);
    auto reader = make_reader(*runtime);
    const TaskId a = runtime->register_task(pattern_task("worker:0"));
    const TaskId b = runtime->register_task(pattern_task("worker:1"));
    EXPECT_NE(runtime->stats(a).device, runtime->stats(b).device);
    feed_until_ready(*runtime, *reader, {a, b}, 15, 5);
}

} // namespace
} // namespace tandem::test
