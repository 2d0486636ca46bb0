// DevicePairs on lavapipe opened twice: one object per pair, whichever way it is asked for; its
// two directions each with their own matrix cell, dropped paths and bridge thread, the streams of
// one direction sharing that thread; a path dropped one way never the other's business.
#include <memory>
#include <optional>
#include <string>

#include "runtime/device_pairs.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using detail::Device;
using detail::DevicePair;
using detail::DevicePairs;
using detail::SlotTransport;

detail::TransferDesc stream_desc(const std::string& name) {
    detail::TransferDesc d;
    d.name = name;
    d.width = 64;
    d.height = 32;
    d.slots = 2;
    return d;
}

TEST_F(VulkanTest, OnePairServesBothDirectionsEachWithItsOwnCellAndBridge) {
    Device& a = open(0);
    Device& b = open(1);
    DevicePairs pairs;
    DevicePair& pair = pairs.pair(a, b);
    EXPECT_EQ(&pairs.pair(b, a), &pair); // one object, whichever way round
    EXPECT_EQ(pair.info(a).worker, a.info().index);
    EXPECT_EQ(pair.info(a).primary, b.info().index);
    EXPECT_EQ(pair.info(b).worker, b.info().index);
    EXPECT_EQ(pair.info(b).primary, a.info().index);
    if (pair.info(a).gpu_side_sync) {
        GTEST_SKIP()
            << "[expected-skip:gpu-side-sync] the pair shares timelines: no bridge to share";
    }
    EXPECT_EQ(pairs.bridge_threads(), 0u); // no stream yet: no thread
    {
        const std::unique_ptr<SlotTransport> out1 = pair.open_stream(a, stream_desc("a to b 1"));
        const std::unique_ptr<SlotTransport> out2 = pair.open_stream(a, stream_desc("a to b 2"));
        EXPECT_EQ(pairs.bridge_threads(), 1u); // one direction's streams share its thread
        const std::unique_ptr<SlotTransport> back = pair.open_stream(b, stream_desc("b to a"));
        EXPECT_EQ(pairs.bridge_threads(), 2u); // the other direction has its own
        EXPECT_EQ(pair.bridge_threads(), 2u);
    }
    EXPECT_EQ(pairs.bridge_threads(), 0u); // gone with the last stream of each direction
}

TEST_F(VulkanTest, APathDroppedOneWayIsTakenNoMoreThatWayOnly) {
    Device& a = open(0);
    Device& b = open(1);
    DevicePairs pairs;
    DevicePair& pair = pairs.pair(a, b);
    const std::optional<TransferPath> first = pair.path(a, std::nullopt);
    ASSERT_TRUE(first);
    EXPECT_EQ(pair.path(b, std::nullopt), first); // two openings of one device: alike both ways
    EXPECT_EQ(pairs.drops(), 0u);

    pairs.drop(a.info().index, b.info().index, to_string(*first), "dropped by the test");
    const std::optional<TransferPath> next = pair.path(a, std::nullopt);
    ASSERT_TRUE(next);
    EXPECT_NE(*next, *first);
    EXPECT_EQ(pair.path(b, std::nullopt), first); // the other direction keeps it
    EXPECT_EQ(pair.path(a, first), std::nullopt); // forcing it that way is refused now
    EXPECT_EQ(pairs.drops(), 1u);
    const auto dropped = pairs.dropped(a.info().index, b.info().index);
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0].path, to_string(*first));
    EXPECT_EQ(dropped[0].reason, "dropped by the test");
    EXPECT_TRUE(pairs.dropped(b.info().index, a.info().index).empty());

    // A stream opened now takes the next path that way, and still the first the other way.
    const std::unique_ptr<SlotTransport> there = pair.open_stream(a, stream_desc("a to b"));
    EXPECT_EQ(there->path_name(), to_string(*next));
    const std::unique_ptr<SlotTransport> back = pair.open_stream(b, stream_desc("b to a"));
    EXPECT_EQ(back->path_name(), to_string(*first));

    // Dropping it again keeps the first reason; a pair that never had a stream drops nothing.
    pairs.drop(a.info().index, b.info().index, to_string(*first), "a second reason");
    EXPECT_EQ(pairs.dropped(a.info().index, b.info().index)[0].reason, "dropped by the test");
    pairs.drop(a.info().index, 99, to_string(*first), "no such pair");
    EXPECT_TRUE(pairs.dropped(a.info().index, 99).empty());
}

} // namespace
} // namespace tandem::test
