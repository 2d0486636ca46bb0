// LatencySamples: percentiles over every sample kept, and the median of the newest ones, also
// once the ring has wrapped.
#include <gtest/gtest.h>

#include "runtime/latency.hpp"

namespace tandem::test {
namespace {

using detail::LatencySamples;

TEST(Latency, RecentMedianIsOfTheNewestSamples) {
    LatencySamples s;
    EXPECT_EQ(s.recent_median_us(8), 0.0) << "no samples";
    for (int i = 0; i < 100; ++i) {
        s.add(1000.0); // old behaviour
    }
    for (int i = 1; i <= 5; ++i) {
        s.add(10.0 * i); // the newest: 10..50
    }
    EXPECT_EQ(s.recent_median_us(5), 30.0);
    EXPECT_EQ(s.recent_median_us(3), 40.0) << "30, 40, 50";
    EXPECT_EQ(s.count(), 105u);
    EXPECT_EQ(s.stats().p50_us, 1000.0) << "the percentiles still cover every sample";
}

TEST(Latency, RecentMedianAfterTheRingWrapped) {
    LatencySamples s;
    for (std::size_t i = 0; i < LatencySamples::k_capacity; ++i) {
        s.add(1000.0);
    }
    // These replace the oldest entries; the newest three are 7, 8, 9.
    for (int i = 1; i <= 9; ++i) {
        s.add(static_cast<double>(i));
    }
    EXPECT_EQ(s.recent_median_us(3), 8.0);
    EXPECT_EQ(s.recent_median_us(9), 5.0);
    EXPECT_EQ(s.recent_median_us(11), 6.0) << "1..9 and two of the old 1000s";
}

} // namespace
} // namespace tandem::test
