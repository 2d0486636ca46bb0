// Streams (harness/stream.hpp): timer-driven submits with a limit, and their statistics.
#include <limits>

#include "harness/stream.hpp"
#include "runtime_fixture.hpp"

namespace tandem::test {
namespace {

class Streams : public RuntimeTest {};

TEST_F(Streams, LimitCountsOnlyAcceptedSubmits) {
    auto runtime = make_runtime();
    auto& impl = detail::RuntimeAccess::impl(*runtime);
    const TaskId task = runtime->register_task(pattern_task());
    for (std::uint64_t g = 1; g <= 3; ++g) {
        detail::RuntimeProbe(impl).hold_generation(task,
                                                   g); // fill every slot: later ticks answer Busy
    }
    harness::StreamOptions options;
    options.rate_hz = 1000;
    options.limit = 6;
    options.quiet = true;
    harness::Stream stream(*runtime, task, options);
    stream.start();
    ASSERT_TRUE(pump_until(*runtime, [&] { return stream.stats().busy >= 20; }));
    auto mid = stream.stats();
    EXPECT_EQ(mid.accepted, 3u);
    EXPECT_FALSE(mid.finished) << "Busy ticks consumed the limit";
    detail::RuntimeProbe(impl).release_held(task);
    ASSERT_TRUE(pump_until(*runtime, [&] { return stream.finished(); }));
    stream.stop();
    const auto s = stream.stats();
    EXPECT_EQ(s.accepted, 6u);
    EXPECT_EQ(s.ticks, s.accepted + s.busy + s.failed);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).newest_generation == 6; }));
    EXPECT_EQ(runtime->stats(task).accepted, 6u);
}

TEST_F(Streams, RefusesARateThatIsNotPositiveAndFinite) {
    auto runtime = make_runtime();
    const TaskId task = runtime->register_task(pattern_task());
    harness::StreamOptions options;
    options.rate_hz = 0;
    EXPECT_THROW(harness::Stream(*runtime, task, options), Error);
    options.rate_hz = std::numeric_limits<double>::infinity();
    EXPECT_THROW(harness::Stream(*runtime, task, options), Error);
}

TEST_F(Streams, StatisticsHaveLatenciesPerStage) {
    auto runtime = make_runtime();
    const TaskId task = runtime->register_task(pattern_task());
    harness::StreamOptions options;
    options.rate_hz = 200;
    options.limit = 20;
    options.quiet = true;
    harness::Stream stream(*runtime, task, options);
    stream.start();
    ASSERT_TRUE(pump_until(
        *runtime, [&] { return stream.finished() && runtime->stats(task).in_flight == 0; }));
    stream.stop();
    const auto s = stream.stats();
    EXPECT_EQ(s.accepted, 20u);
    EXPECT_GE(s.ready, 1u);
    EXPECT_EQ(s.task.ready_observed.count, s.accepted);
    EXPECT_LE(s.task.worker_submit.p50_us, s.task.ready_observed.p50_us);
    EXPECT_GT(s.accepted_hz, 0.0);
}

} // namespace
} // namespace tandem::test
