// Links of one device pair share the pair's bridge thread (PairBridge): both deliver exact bytes
// through it, and a link's failure there (its bridge timed out) leaves the other link working.
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/capabilities.hpp"
#include "sync/pair_bridge.hpp"
#include "sync/timeline_semaphore.hpp"
#include "transfer/transfer_link.hpp"
#include "transfer_test_support.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using detail::Device;
using detail::LinkImages;
using detail::TimelineSemaphore;
using detail::TransferDesc;
using detail::TransferLink;
using detail::TransferTicket;

constexpr auto k_wait = std::chrono::seconds(20);

// Records the threads bands were handed on.
struct ThreadObserver final : detail::TransferObserver {
    void on_band_handed(std::uint32_t, std::uint32_t) noexcept override {
        std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
    }
    std::mutex mutex;
    std::set<std::thread::id> threads;
};

TransferDesc bridged_desc(std::uint32_t w, std::uint32_t h, VkFormat format,
                          std::shared_ptr<detail::PairBridge> bridge) {
    TransferDesc desc;
    desc.width = w;
    desc.height = h;
    desc.format = format;
    desc.band_rows = 16;
    desc.forced = TransferPath::HostCopy; // a host step: always host-bridged
    desc.bridge = std::move(bridge);
    return desc;
}

LinkImages slot_images(const TransferLink& link, const std::string& name, std::uint32_t slot = 0) {
    return link.create_images(slot, name,
                              VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                              VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
}

// One transfer through `link`'s slot 0 of fresh random data, released once submitted by the
// caller signalling `done` to 1. Every upload comes before any submit: the worker's main queue
// may be its copy queue, which a held transfer blocks.
struct InFlight {
    InFlight(TransferLink& link, std::uint32_t seed)
        : images(slot_images(link, "shared bridge")),
          bytes(random_bytes(link.layout().image_bytes(), seed)),
          done(link.worker_timeline().device(), "worker work done") {
        poison_image(link.primary_timeline().device(), images.primary,
                     VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        upload_image(link.worker_timeline().device(), images.worker, bytes,
                     VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    }
    [[nodiscard]] VkResult submit(TransferLink& link) {
        return link.submit(0, images.worker.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           done.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
                           images.primary.get(), VK_IMAGE_LAYOUT_UNDEFINED, ticket);
    }
    // Waits for both sides, then compares the primary image with what the worker's held.
    void expect_exact(TransferLink& link) {
        ASSERT_EQ(link.primary_timeline().wait(ticket.primary_value, k_wait), VK_SUCCESS)
            << link.error();
        ASSERT_EQ(link.worker_timeline().wait(ticket.worker_value, k_wait), VK_SUCCESS);
        EXPECT_FALSE(link.failed()) << link.error();
        const auto out = read_image(link.primary_timeline().device(), images.primary,
                                    VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        EXPECT_EQ(first_difference(out, bytes), -1);
    }
    LinkImages images;
    std::vector<std::uint8_t> bytes;
    TimelineSemaphore done;
    TransferTicket ticket;
};

TEST_F(VulkanTest, TwoLinksOfOnePairShareOneBridgeThreadAndBothDeliverExactBytes) {
    Device& primary = open(0);
    Device& worker = open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    const auto bridge = std::make_shared<detail::PairBridge>("worker->primary bridge");
    const auto observer = std::make_shared<ThreadObserver>();
    {
        TransferDesc a = bridged_desc(129, 97, VK_FORMAT_R8G8B8A8_UNORM, bridge);
        TransferDesc b = bridged_desc(333, 57, VK_FORMAT_R32_SFLOAT, bridge);
        a.observer = observer;
        b.observer = observer;
        auto link_a = std::make_unique<TransferLink>(worker, primary, pair, a);
        auto link_b = std::make_unique<TransferLink>(worker, primary, pair, b);
        EXPECT_EQ(bridge->channels(), 2u);
        for (std::uint32_t round = 0; round < 2; ++round) {
            InFlight in_a(*link_a, 10 + round);
            InFlight in_b(*link_b, 20 + round);
            ASSERT_EQ(in_a.submit(*link_a), VK_SUCCESS) << link_a->error();
            ASSERT_EQ(in_b.submit(*link_b), VK_SUCCESS) << link_b->error();
            ASSERT_EQ(in_b.done.signal(1), VK_SUCCESS); // the second link's worker first
            ASSERT_EQ(in_a.done.signal(1), VK_SUCCESS);
            in_a.expect_exact(*link_a);
            in_b.expect_exact(*link_b);
            ASSERT_EQ(vkDeviceWaitIdle(worker.handle()), VK_SUCCESS); // before the images go
        }
        link_a.reset();
        EXPECT_EQ(bridge->channels(), 1u);
        EXPECT_TRUE(bridge->running());
    }
    EXPECT_FALSE(bridge->running()); // the last link took the thread with it
    std::lock_guard lock(observer->mutex);
    EXPECT_EQ(observer->threads.size(), 1u);
    EXPECT_EQ(observer->threads.count(std::this_thread::get_id()), 0u);
}

// A link whose worker never finishes times out on the pair's bridge and fails; the other link
// of the pair is not failed by it (only the pair's device failing would do that) and keeps
// delivering exact bytes through the same thread.
TEST_F(VulkanTest, ALinkTimingOutOnTheSharedBridgeLeavesTheOtherLinkWorking) {
    Device& primary = open(0);
    Device& worker = open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    const auto bridge = std::make_shared<detail::PairBridge>("test pair");
    TransferDesc failing_desc = bridged_desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, bridge);
    failing_desc.timeout = std::chrono::milliseconds(100);
    auto failing = std::make_unique<TransferLink>(worker, primary, pair, failing_desc);
    auto healthy = std::make_unique<TransferLink>(
        worker, primary, pair, bridged_desc(129, 97, VK_FORMAT_R8G8B8A8_UNORM, bridge));
    {
        InFlight never(*failing, 1);
        ASSERT_EQ(never.submit(*failing), VK_SUCCESS);
        const auto until = std::chrono::steady_clock::now() + k_wait;
        while (!failing->failed() && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ASSERT_TRUE(failing->failed());
        EXPECT_NE(failing->error().find("did not reach"), std::string::npos) << failing->error();
        EXPECT_FALSE(healthy->failed()) << healthy->error();
        EXPECT_TRUE(bridge->device_failure().empty());
        // The held work is released, so the worker's copy queue it blocked moves again.
        ASSERT_EQ(never.done.signal(1), VK_SUCCESS);
        ASSERT_EQ(failing->worker_timeline().wait(never.ticket.worker_value, k_wait), VK_SUCCESS);
        failing.reset(); // releases the copies that waited for its lost forwards
    }
    for (std::uint32_t round = 0; round < 3; ++round) {
        InFlight in(*healthy, 40 + round);
        ASSERT_EQ(in.submit(*healthy), VK_SUCCESS) << healthy->error();
        ASSERT_EQ(in.done.signal(1), VK_SUCCESS);
        in.expect_exact(*healthy);
        ASSERT_EQ(vkDeviceWaitIdle(worker.handle()), VK_SUCCESS);
    }
    healthy.reset();
}

} // namespace
} // namespace tandem::test
