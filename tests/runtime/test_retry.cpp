// The job and transfer threads' one wait-and-retry (runtime/retry.hpp): it polls at its interval
// while what it waits for comes soon, backs off to a twentieth of its wait once that is longer
// (at most a millisecond), so that a thread waiting long for a slow producer's output does not
// spin, and ends when what it waits for is ready or its caller says to stop.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "runtime/retry.hpp"

namespace tandem::test {
namespace {

using detail::backed_off;
using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(Retry, APollSleepsItsIntervalThenATwentiethOfItsWaitUpToAMillisecond) {
    EXPECT_EQ(backed_off(microseconds(10), microseconds(0)), microseconds(10));
    EXPECT_EQ(backed_off(microseconds(10), microseconds(199)), microseconds(10));
    EXPECT_EQ(backed_off(microseconds(10), milliseconds(2)), microseconds(100));
    EXPECT_EQ(backed_off(microseconds(10), milliseconds(20)), milliseconds(1));
    EXPECT_EQ(backed_off(microseconds(10), std::chrono::seconds(10)), milliseconds(1));
    EXPECT_EQ(backed_off(microseconds(100), milliseconds(1)), microseconds(100));
    EXPECT_EQ(backed_off(microseconds(100), milliseconds(4)), microseconds(200));
}

TEST(Retry, AttemptsUntilReadyAndNotOnceItsCallerSaysStop) {
    int attempts = 0;
    const auto three_then_ready = [&] { return ++attempts < 4 ? VK_NOT_READY : VK_SUCCESS; };
    EXPECT_EQ(detail::retry_while_not_ready(
                  VK_NOT_READY, microseconds(10), [] { return true; }, three_then_ready),
              VK_SUCCESS);
    EXPECT_EQ(attempts, 4);
    attempts = 0;
    EXPECT_EQ(detail::retry_while_not_ready(
                  VK_NOT_READY, microseconds(10), [] { return false; }, three_then_ready),
              VK_NOT_READY);
    EXPECT_EQ(attempts, 0);
    EXPECT_EQ(detail::retry_while_not_ready(
                  VK_ERROR_DEVICE_LOST, microseconds(10), [] { return true; }, three_then_ready),
              VK_ERROR_DEVICE_LOST);
    EXPECT_EQ(attempts, 0);
}

// Waiting a fifth of a second, at 10 us a poll: about 60 polls in the first millisecond and 20
// for each tenfold of the wait after it, then one a millisecond (some 350 in all), where polling
// at the interval throughout made thousands. A loaded machine only makes fewer.
TEST(Retry, ALongWaitBacksOffInsteadOfSpinning) {
    int attempts = 0;
    const auto start = std::chrono::steady_clock::now();
    const auto waited = [&] { return std::chrono::steady_clock::now() - start; };
    const VkResult r = detail::retry_while_not_ready(
        VK_NOT_READY, microseconds(10), [] { return true; },
        [&] {
            ++attempts;
            return waited() < milliseconds(200) ? VK_NOT_READY : VK_SUCCESS;
        });
    EXPECT_EQ(r, VK_SUCCESS);
    EXPECT_LT(attempts, 1000);
    EXPECT_GT(attempts, 20) << "it kept polling";
}

} // namespace
} // namespace tandem::test
