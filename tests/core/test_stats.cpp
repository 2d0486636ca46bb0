// core/stats.hpp: Tandem's one median and nearest-rank percentile, with exact values for the
// cases whose convention matters (even counts, one sample, none), and the summary built on them.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "core/stats.hpp"

namespace tandem::test {
namespace {

using detail::median;
using detail::percentile;

TEST(Stats, MedianOfAnOddCountIsTheMiddleValue) {
    EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
    EXPECT_EQ(median({1.0, 1.1, 900.0, 0.9, 1.0}), 1.0) << "an outlier does not move it";
}

TEST(Stats, MedianOfAnEvenCountIsTheLowerMiddleValue) {
    EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.0) << "not 2.5: every figure is a measured value";
    EXPECT_EQ(median({10.0, 20.0}), 10.0);
}

TEST(Stats, MedianOfOneSampleAndOfNone) {
    EXPECT_EQ(median({7.5}), 7.5);
    EXPECT_EQ(median({}), 0.0);
    EXPECT_EQ(percentile({}, 0.99), 0.0);
    EXPECT_EQ(detail::percentile_sorted(std::vector<double>{}, 0.5), 0.0);
}

TEST(Stats, PercentileIsTheCeilQnThSmallest) {
    std::vector<double> hundred;
    for (int v = 100; v >= 1; --v) {
        hundred.push_back(static_cast<double>(v));
    }
    EXPECT_EQ(percentile(hundred, 0.0), 1.0) << "q = 0 is the smallest";
    EXPECT_EQ(percentile(hundred, 0.5), 50.0);
    EXPECT_EQ(percentile(hundred, 0.95), 95.0);
    EXPECT_EQ(percentile(hundred, 0.99), 99.0);
    EXPECT_EQ(percentile(hundred, 1.0), 100.0);
    EXPECT_EQ(percentile({1.0, 2.0, 3.0}, 0.9), 3.0) << "ceil(2.7) = 3";
    EXPECT_EQ(percentile({1.0, 2.0, 3.0}, 0.34), 2.0) << "ceil(1.02) = 2";
    EXPECT_EQ(detail::percentile_index(4, 0.5), 1u);
    EXPECT_EQ(detail::percentile_index(5, 0.5), 2u);
    EXPECT_EQ(detail::percentile_index(1, 0.99), 0u);
}

TEST(Stats, SortedInPlaceAndByValueAgree) {
    const std::vector<float> sorted = {1.0f, 2.0f, 4.0f, 8.0f};
    EXPECT_EQ(detail::median_sorted(std::span<const float>(sorted)), 2.0);
    std::vector<float> shuffled = {8.0f, 1.0f, 4.0f, 2.0f};
    EXPECT_EQ(detail::median_in_place(std::span<float>(shuffled)), 2.0);
    EXPECT_EQ(detail::percentile_in_place(std::span<float>(shuffled), 0.75), 4.0);
    EXPECT_EQ(detail::median_sorted(std::vector<double>{5.0}), 5.0);
}

TEST(Stats, SummaryUsesTheSameRule) {
    const detail::Summary s = detail::summarise({4.0, 1.0, 3.0, 2.0});
    EXPECT_EQ(s.n, 4u);
    EXPECT_EQ(s.min, 1.0);
    EXPECT_EQ(s.max, 4.0);
    EXPECT_EQ(s.mean, 2.5);
    EXPECT_EQ(s.p50, 2.0);
    EXPECT_EQ(s.p95, 4.0);
    EXPECT_EQ(s.p99, 4.0);
    EXPECT_EQ(detail::summarise({}).n, 0u);
}

} // namespace
} // namespace tandem::test
