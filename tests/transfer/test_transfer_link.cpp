// TransferLink end to end on lavapipe opened as several devices: every path the pair allows,
// with the timelines and (for separate devices) the bridge thread between the sides. Random
// data, poisoned destinations, byte-exact comparison.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/capabilities.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"
#include "transfer/transfer_link.hpp"
#include "transfer_test_support.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using detail::Device;
using detail::Image;
using detail::LinkImages;
using detail::TimelineSemaphore;
using detail::TransferDesc;
using detail::TransferLink;
using detail::TransferTicket;

constexpr auto k_wait = std::chrono::seconds(20);

// A slot's two images, with the test's upload (worker) and readback (primary) usage. On the
// zero-copy path they are one allocation: poison the primary's before writing the worker's.
LinkImages slot_images(const TransferLink& link, const std::string& name, std::uint32_t slot = 0) {
    return link.create_images(slot, name,
                              VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                              VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
}

// One transfer of fresh random data through `slot`: the worker's "work done" is a host signal
// given after the submit, so submit() must not wait for it. A batch of the primary waits for the
// transfer GPU-side from the moment may_wait_for() says it may, which a host bridge's link says
// only once its copies are queued (never before the worker's side ran), and the image is read
// once that batch completed.
void round_trip(TransferLink& link, std::uint32_t slot, std::uint32_t seed,
                TransferTicket* ticket_out = nullptr) {
    const Device& worker = link.worker_timeline().device();
    const Device& primary = link.primary_timeline().device();
    const LinkImages images = slot_images(link, "round trip", slot);
    const Image& src = images.worker;
    const Image& dst = images.primary;
    const VkImageLayout arrived = link.primary_layout_after();
    const auto bytes = random_bytes(link.layout().image_bytes(), seed);
    poison_image(primary, dst, arrived);
    upload_image(worker, src, bytes, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    TimelineSemaphore done(worker, "worker work done");
    TransferTicket ticket;
    ASSERT_EQ(link.submit(slot, src.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          done.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT), dst.get(),
                          VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, ticket),
              VK_SUCCESS);
    std::uint64_t value = 0;
    ASSERT_EQ(link.completed_primary_value(value), VK_SUCCESS);
    EXPECT_LT(value, ticket.primary_value); // cannot have finished: the worker has not signalled
    EXPECT_EQ(link.may_wait_for(ticket.primary_value), link.gpu_side_sync());
    ASSERT_EQ(done.signal(1), VK_SUCCESS);
    const auto until = std::chrono::steady_clock::now() + k_wait;
    while (!link.may_wait_for(ticket.primary_value) && !link.failed() &&
           std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    ASSERT_TRUE(link.may_wait_for(ticket.primary_value)) << link.error();
    TimelineSemaphore seen(primary, "primary batch after the transfer");
    const VkSemaphoreSubmitInfo wait =
        detail::semaphore_submit_info(link.primary_timeline().handle(), ticket.primary_value,
                                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    const VkSemaphoreSubmitInfo signal = seen.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    ASSERT_EQ(
        primary.queue(detail::QueueRole::Main).submit_one(VK_NULL_HANDLE, {&wait, 1}, {&signal, 1}),
        VK_SUCCESS);
    ASSERT_EQ(seen.wait(1, k_wait), VK_SUCCESS) << link.error();
    ASSERT_EQ(link.primary_timeline().wait(ticket.primary_value, k_wait), VK_SUCCESS)
        << link.error();
    ASSERT_EQ(link.worker_timeline().wait(ticket.worker_value, k_wait), VK_SUCCESS);
    // The images go at the end of this function. A wait on an exported timeline does not tell
    // the validation layer that the worker's batches completed (on a GPU it still counts them in
    // use); the worker's queues are this thread's alone here, so say it with an idle wait.
    ASSERT_EQ(vkDeviceWaitIdle(worker.handle()), VK_SUCCESS);
    EXPECT_FALSE(link.failed()) << link.error();
    const auto out = read_image(primary, dst, arrived);
    EXPECT_EQ(first_difference(out, bytes), -1);
    if (ticket_out != nullptr) {
        *ticket_out = ticket;
    }
}

// One transfer into slot 0 whose worker work waits for `worker_done` value 1, which the caller
// holds back; returns once the link has failed (its bridge timed out) or k_wait has passed.
TransferTicket submit_until_the_bridge_gives_up(TransferLink& link, const Image& src,
                                                const Image& dst, TimelineSemaphore& worker_done) {
    TransferTicket ticket;
    EXPECT_EQ(link.submit(0, src.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          worker_done.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
                          dst.get(), VK_IMAGE_LAYOUT_UNDEFINED, ticket),
              VK_SUCCESS);
    const auto until = std::chrono::steady_clock::now() + k_wait;
    while (!link.failed() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return ticket;
}

// A skip's message starts with a tag naming what the machine lacks (or why the case does not
// apply): scripts/check-skips.sh compares the skipped tests with tests/expected-skips.txt.
std::string skip_tag(const std::string& reason) {
    return "[expected-skip:" + reason + "] ";
}
std::string lacks_path(TransferPath path) {
    return skip_tag("no-" + std::string(to_string(path)));
}

TransferDesc make_desc(std::uint32_t w, std::uint32_t h, VkFormat format,
                       std::optional<TransferPath> path, std::uint32_t band_rows = 0,
                       detail::BandHandOff hand_off = detail::BandHandOff::Submit) {
    TransferDesc desc;
    desc.width = w;
    desc.height = h;
    desc.format = format;
    desc.forced = path;
    desc.band_rows = band_rows;
    desc.hand_off = hand_off;
    return desc;
}

// Every path, with either way of handing bands to the primary (BandHandOff; it matters only
// where a host bridge does the hand-off: other cases with Signal are skipped). The cuda-peer
// path's copies go on its stream with Submit (StreamHandOff), and run as the bridge's host step
// with Signal (TransferDesc::stream_copies false), so both of its ways are covered.
class TransferLinks
    : public VulkanTest,
      public ::testing::WithParamInterface<std::tuple<TransferPath, detail::BandHandOff>> {
protected:
    [[nodiscard]] TransferPath path() const { return std::get<0>(GetParam()); }
    [[nodiscard]] detail::BandHandOff hand_off() const { return std::get<1>(GetParam()); }
    // Opens the pair (one device for the same-device path) and skips the test when the pair
    // does not allow the path, or Signal has no bridge to use.
    void SetUp() override {
        VulkanTest::SetUp();
        m_primary = &open(0);
        m_worker = same() ? m_primary : &open(1);
        m_pair = detail::query_pair_info(m_worker->info(), m_primary->info());
        // Without CUDA, the cuda-peer path runs with the host's copy between its stagings
        // (host_staging_copier): everything but CUDA's own copy, bridge and bands included.
        m_host_copier = path() == TransferPath::CudaPeer && detail::allow_cuda_stand_in(m_pair);
        if (!m_pair.allows(path())) {
            GTEST_SKIP() << lacks_path(path()) << to_string(path()) << " is not available here";
        }
        if (hand_off() == detail::BandHandOff::Signal && same()) {
            GTEST_SKIP() << skip_tag("one-device-no-bridge") << "one device: no bridge to signal";
        }
        if (hand_off() == detail::BandHandOff::Signal && m_pair.gpu_side_sync &&
            path() != TransferPath::CudaPeer) {
            GTEST_SKIP() << skip_tag("gpu-side-sync") << "GPU-side sync: no bridge to signal";
        }
    }
    [[nodiscard]] bool same() const { return path() == TransferPath::SameDevice; }
    // Same device and zero copy move the whole image at once: no bands.
    [[nodiscard]] bool whole() const { return same() || path() == TransferPath::ZeroCopy; }
    [[nodiscard]] TransferDesc desc(std::uint32_t w, std::uint32_t h, VkFormat format,
                                    std::uint32_t band_rows = 0) const {
        TransferDesc d = make_desc(w, h, format, path(), band_rows, hand_off());
        if (m_host_copier) {
            d.cuda_copier = host_staging_copier();
        }
        d.stream_copies = hand_off() == detail::BandHandOff::Submit;
        return d;
    }
    bool m_host_copier = false;
    Device* m_primary = nullptr;
    Device* m_worker = nullptr;
    PairInfo m_pair;
};

// Every path, banded (7 rows) and unbanded, several formats and odd sizes; values only grow.
TEST_P(TransferLinks, MoveRandomImagesExactlyWithGrowingValues) {
    Device& primary = *m_primary;
    Device& worker = *m_worker;
    const PairInfo& pair = m_pair;
    struct Case {
        std::uint32_t w, h;
        VkFormat format;
        std::uint32_t band_rows;
    };
    const Case cases[] = {{129, 97, VK_FORMAT_R8G8B8A8_UNORM, 0},
                          {129, 97, VK_FORMAT_R8G8B8A8_UNORM, 7},
                          {333, 257, VK_FORMAT_R16G16B16A16_SFLOAT, 64},
                          {1024, 17, VK_FORMAT_R32_SFLOAT, 0},
                          {1, 1, VK_FORMAT_B8G8R8A8_UNORM, 0}};
    std::uint32_t seed = 10;
    for (const Case& c : cases) {
        SCOPED_TRACE(std::to_string(c.w) + "x" + std::to_string(c.h) + " " +
                     detail::format_name(c.format) + " band_rows " + std::to_string(c.band_rows));
        TransferLink link(worker, primary, pair, desc(c.w, c.h, c.format, c.band_rows));
        EXPECT_EQ(link.path(), path());
        if (path() == TransferPath::CudaPeer) {
            // On its stream, ordered GPU-side, unless asked for the bridge's host step.
            EXPECT_EQ(link.gpu_side_sync(), hand_off() == detail::BandHandOff::Submit);
        }
        if (!whole() && c.band_rows == 7) {
            EXPECT_EQ(link.layout().band_count, 14u);
        }
        TransferTicket last;
        for (std::uint32_t i = 0; i < 4; ++i) {
            TransferTicket ticket;
            round_trip(link, i % 3, seed++, &ticket);
            EXPECT_GT(ticket.worker_value, last.worker_value);
            EXPECT_GT(ticket.primary_value, last.primary_value);
            last = ticket;
        }
    }
}

// Bands of uneven heights (TransferObserver::band_heights) reassemble exactly too; heights that do
// not add up to the image are refused with an Error, before anything is created.
TEST_P(TransferLinks, MovesBandsOfUnevenHeightsExactly) {
    if (whole()) {
        GTEST_SKIP() << skip_tag("no-bands") << to_string(path()) << " has no bands";
    }
    auto d = desc(129, 97, VK_FORMAT_R8G8B8A8_UNORM);
    auto observer = std::make_shared<TestObserver>();
    observer->heights = {5, 40, 1, 30, 21};
    d.observer = observer;
    TransferLink link(*m_worker, *m_primary, m_pair, d);
    ASSERT_EQ(link.layout().band_count, 5u);
    EXPECT_EQ(link.layout().band(3).first_row, 46u);
    EXPECT_EQ(link.layout().band(3).rows, 30u);
    TransferTicket last;
    for (std::uint32_t i = 0; i < 4; ++i) {
        TransferTicket ticket;
        round_trip(link, i % 3, 500 + i, &ticket);
        EXPECT_GT(ticket.primary_value, last.primary_value);
        last = ticket;
    }
    observer->heights = {5, 40, 1, 30};
    EXPECT_THROW(TransferLink(*m_worker, *m_primary, m_pair, d), Error);
}

// One slot reused the moment its transfer is seen complete (what calibration does), many times:
// the bridge must forward every transfer, never skip one whose band count it has not reset.
TEST_P(TransferLinks, OneSlotReusedAtOnceNeverStalls) {
    Device& primary = *m_primary;
    Device& worker = *m_worker;
    const PairInfo& pair = m_pair;
    auto d = desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, 9);
    d.slots = 1;
    // The link goes before its images (its destructor waits for the worker's side of the last
    // transfer, which the primary's wait proved ran but the worker's device was not told of).
    auto owned = std::make_unique<TransferLink>(worker, primary, pair, d);
    TransferLink& link = *owned;
    const LinkImages images = slot_images(link, "reused");
    const Image& src = images.worker;
    const Image& dst = images.primary;
    const auto bytes = random_bytes(link.layout().image_bytes(), 77);
    upload_image(worker, src, bytes, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImageLayout src_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    for (int i = 0; i < 300; ++i) {
        TransferTicket ticket;
        ASSERT_EQ(link.submit(0, src.get(), src_layout,
                              VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO},
                              dst.get(), layout, ticket),
                  VK_SUCCESS)
            << "transfer " << i << ": " << link.error();
        ASSERT_EQ(link.primary_timeline().wait(ticket.primary_value, k_wait), VK_SUCCESS)
            << "transfer " << i << " never completed: " << link.error();
        layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
        src_layout = link.worker_layout_after(src_layout);
    }
    EXPECT_EQ(first_difference(read_image(primary, dst, layout), bytes), -1);
    owned.reset();
}

// The hand-off observer sees every band of every transfer once, in order, each after the worker
// finished it (a diagnostic the transfer benchmark times the pipeline with).
TEST_P(TransferLinks, ReportsEveryBandHandedOnceAfterTheWorkerFinishedIt) {
    if (whole()) {
        GTEST_SKIP() << skip_tag("no-bands") << to_string(path()) << " has no bands";
    }
    struct Handed {
        std::uint32_t slot, band;
        std::uint64_t worker_value; // the worker timeline when it was reported
    };
    std::mutex mutex;
    std::vector<Handed> handed;
    auto d = desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, 9);
    d.slots = 2;
    TransferLink* link_ptr = nullptr;
    auto observer = std::make_shared<TestObserver>();
    observer->handed = [&](std::uint32_t slot, std::uint32_t band) {
        std::uint64_t value = 0;
        (void)link_ptr->worker_timeline().value(value);
        std::lock_guard lock(mutex);
        handed.push_back({slot, band, value});
    };
    d.observer = observer;
    TransferLink link(*m_worker, *m_primary, m_pair, d);
    if (link.gpu_side_sync()) {
        GTEST_SKIP() << skip_tag("gpu-side-sync")
                     << "no host bridge: nothing is handed on the host";
    }
    link_ptr = &link;
    const std::uint32_t bands = link.layout().band_count;
    ASSERT_EQ(bands, 8u);
    std::vector<TransferTicket> tickets(3);
    for (std::uint32_t i = 0; i < 3; ++i) {
        round_trip(link, i % 2, 300 + i, &tickets[i]);
    }
    // The last band is handed before its copy runs, but reported just after: wait for it.
    const auto until = std::chrono::steady_clock::now() + k_wait;
    while (std::chrono::steady_clock::now() < until) {
        {
            std::lock_guard lock(mutex);
            if (handed.size() >= 3 * bands) {
                break;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::lock_guard lock(mutex);
    ASSERT_EQ(handed.size(), 3 * bands);
    for (std::uint32_t i = 0; i < 3; ++i) {
        const std::uint64_t first = tickets[i].worker_value - (bands - 1);
        for (std::uint32_t b = 0; b < bands; ++b) {
            const Handed& h = handed[i * bands + b];
            EXPECT_EQ(h.slot, i % 2) << "transfer " << i << " band " << b;
            EXPECT_EQ(h.band, b) << "transfer " << i;
            EXPECT_GE(h.worker_value, first + b) << "transfer " << i << " band " << b;
        }
    }
}

// With GPU times on, every band's copies are placed on the host's timeline: inside the window in
// which the transfer ran, each copy ending after it began, and the primary's copy of a band
// beginning only after the worker's copy of it ended (the primary never reads a band early).
TEST_P(TransferLinks, TimesEachBandOnTheGpusAfterTheWorkerWroteIt) {
    if (whole()) {
        GTEST_SKIP() << skip_tag("no-bands") << to_string(path()) << " has no bands to time";
    }
    auto d = desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, 16);
    d.slots = 2;
    auto observer = std::make_shared<TestObserver>();
    observer->gpu_times = true;
    d.observer = observer;
    TransferLink link(*m_worker, *m_primary, m_pair, d);
    if (!m_worker->has_host_timed_queries() || !m_primary->has_host_timed_queries()) {
        EXPECT_FALSE(link.gpu_times());
        GTEST_SKIP() << skip_tag("no-host-timed-queries")
                     << "these devices cannot time queries on the host's clock";
    }
    ASSERT_TRUE(link.gpu_times());
    const std::uint32_t bands = link.layout().band_count;
    ASSERT_EQ(bands, 4u);
    EXPECT_FALSE(link.read_gpu_times(0).has_value()); // no transfer through the slot yet
    {
        // While the worker's work is held back nothing is timed, and reading does not block.
        const LinkImages held_images = slot_images(link, "held");
        const Image& src = held_images.worker;
        const Image& dst = held_images.primary;
        TimelineSemaphore held(*m_worker, "held worker work");
        TransferTicket ticket;
        ASSERT_EQ(link.submit(0, src.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                              held.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT), dst.get(),
                              VK_IMAGE_LAYOUT_UNDEFINED, ticket),
                  VK_SUCCESS);
        EXPECT_FALSE(link.read_gpu_times(0).has_value());
        ASSERT_EQ(held.signal(1), VK_SUCCESS);
        ASSERT_EQ(link.primary_timeline().wait(ticket.primary_value, k_wait), VK_SUCCESS)
            << link.error();
        EXPECT_TRUE(link.read_gpu_times(0).has_value());
        // The held images go at the end of this block: the worker's side first (as round_trip).
        ASSERT_EQ(link.worker_timeline().wait(ticket.worker_value, k_wait), VK_SUCCESS);
        ASSERT_EQ(vkDeviceWaitIdle(m_worker->handle()), VK_SUCCESS);
    }
    // Events bracket each transfer: `before` precedes round_trip's host signal that releases the
    // worker's work, `after` follows the host seeing the primary's batch that waited for the
    // transfer complete. The times reach the host's clock through each device's calibration at
    // reading, good to what its driver states (maxDeviation: 0 on lavapipe, one clock), the
    // clocks drifting apart meanwhile by at most 200 ppm of the time since `before`.
    const auto stated_deviation = [](const Device& device) {
        std::uint64_t most = 0;
        for (int k = 0; k < 8; ++k) {
            VkCalibratedTimestampInfoEXT infos[2] = {
                {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT},
                {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT}};
            infos[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
            infos[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
            std::uint64_t stamps[2] = {0, 0};
            std::uint64_t deviation = 0;
            EXPECT_EQ(device.fn().get_calibrated_timestamps(device.handle(), 2, infos, stamps,
                                                            &deviation),
                      VK_SUCCESS);
            most = deviation > most ? deviation : most;
        }
        return std::chrono::nanoseconds(most);
    };
    const auto calibration = stated_deviation(*m_worker) + stated_deviation(*m_primary);
    for (std::uint32_t i = 0; i < 3; ++i) {
        const std::uint32_t slot = i % 2;
        const auto before = std::chrono::steady_clock::now();
        round_trip(link, slot, 900 + i);
        const auto after = std::chrono::steady_clock::now();
        const auto times = link.read_gpu_times(slot);
        const auto slack = calibration + (std::chrono::steady_clock::now() - before) / 5000;
        ASSERT_TRUE(times.has_value()) << "transfer " << i;
        ASSERT_EQ(times->size(), bands);
        for (std::uint32_t b = 0; b < bands; ++b) {
            const detail::BandGpuTimes& t = (*times)[b];
            const std::string where =
                "transfer " + std::to_string(i) + " band " + std::to_string(b);
            EXPECT_GE(t.worker_begin + slack, before) << where;
            EXPECT_LE(t.worker_begin, t.worker_end) << where;
            EXPECT_LE(t.worker_end, t.primary_begin + slack) << where;
            EXPECT_LE(t.primary_begin, t.primary_end) << where;
            EXPECT_LE(t.primary_end, after + slack) << where;
        }
    }
}

// Two transfers in flight on different slots, released in reverse order, keep their own data.
TEST_P(TransferLinks, TwoSlotsInFlightDoNotMix) {
    Device& primary = *m_primary;
    Device& worker = *m_worker;
    const PairInfo& pair = m_pair;
    TransferLink link(worker, primary, pair, desc(129, 97, VK_FORMAT_R8G8B8A8_UNORM, 16));
    const LinkImages images[2] = {slot_images(link, "slot 0", 0), slot_images(link, "slot 1", 1)};
    const Image* src[2] = {&images[0].worker, &images[1].worker};
    const Image* dst[2] = {&images[0].primary, &images[1].primary};
    std::vector<std::uint8_t> bytes[2];
    for (int i = 0; i < 2; ++i) {
        bytes[i] = random_bytes(link.layout().image_bytes(), 100u + static_cast<unsigned>(i));
        poison_image(primary, *dst[i], VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        upload_image(worker, *src[i], bytes[i], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    }
    TimelineSemaphore done(worker, "worker work done");
    TransferTicket tickets[2];
    for (std::uint32_t i = 0; i < 2; ++i) {
        ASSERT_EQ(link.submit(i, src[i]->get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                              done.submit_info(i + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
                              dst[i]->get(), VK_IMAGE_LAYOUT_UNDEFINED, tickets[i]),
                  VK_SUCCESS);
    }
    EXPECT_GT(tickets[1].worker_value, tickets[0].worker_value);
    EXPECT_GT(tickets[1].primary_value, tickets[0].primary_value);
    // Slot 0 is still in flight: reusing it is refused and changes nothing.
    TransferTicket refused;
    EXPECT_EQ(link.submit(0, src[0]->get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, {}, dst[0]->get(),
                          VK_IMAGE_LAYOUT_UNDEFINED, refused),
              VK_NOT_READY);
    EXPECT_EQ(refused.primary_value, 0u);
    // Nothing lands before its worker is done (with BandHandOff::Signal the copies wait at the
    // gate, submitted already).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::uint64_t reached = 0;
    ASSERT_EQ(link.completed_primary_value(reached), VK_SUCCESS);
    EXPECT_LT(reached, tickets[0].primary_value);
    ASSERT_EQ(done.signal(2), VK_SUCCESS); // releases both: value 2 satisfies waits for 1 and 2
    ASSERT_EQ(link.primary_timeline().wait(tickets[1].primary_value, k_wait), VK_SUCCESS)
        << link.error();
    for (int i = 0; i < 2; ++i) {
        const auto out = read_image(primary, *dst[i], VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        EXPECT_EQ(first_difference(out, bytes[i]), -1) << "slot " << i;
    }
    // Both done: slot 0 is free again.
    round_trip(link, 0, 7);
}

std::string path_name(TransferPath path) {
    std::string name = to_string(path);
    for (char& c : name) {
        c = c == '-' ? '_' : c;
    }
    return name;
}

std::string link_case_name(
    const ::testing::TestParamInfo<std::tuple<TransferPath, detail::BandHandOff>>& info) {
    return path_name(std::get<0>(info.param)) + "_" + detail::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(EveryPath, TransferLinks,
                         ::testing::Combine(::testing::ValuesIn(k_all_transfer_paths),
                                            ::testing::Values(detail::BandHandOff::Submit,
                                                              detail::BandHandOff::Signal)),
                         link_case_name);

TEST_F(VulkanTest, SameDeviceLinkWithOneImageHandsItOverWithoutCopy) {
    Device& device = open(0);
    const auto pair = detail::query_pair_info(device.info(), device.info());
    TransferLink link(device, device, pair, make_desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, {}));
    EXPECT_EQ(link.path(), TransferPath::SameDevice);
    EXPECT_TRUE(link.gpu_side_sync());
    detail::ImageDesc desc = link.worker_image_desc("shared");
    desc.usage |= VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    const Image image = detail::create_image(device, desc);
    const auto bytes = random_bytes(link.layout().image_bytes(), 5);
    upload_image(device, image, bytes, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    TransferTicket ticket;
    ASSERT_EQ(link.submit(0, image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, {}, image.get(),
                          VK_IMAGE_LAYOUT_UNDEFINED, ticket),
              VK_SUCCESS);
    ASSERT_EQ(link.primary_timeline().wait(ticket.primary_value, k_wait), VK_SUCCESS);
    EXPECT_EQ(link.worker_layout_after(VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, true),
              VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    EXPECT_EQ(first_difference(read_image(device, image, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL),
                               bytes),
              -1);
}

// Read in place (TransferDesc::read_in_place) where the primary is a CPU device: its slot images
// are the host staging itself, so the link moves one band and leaves them in GENERAL, and the
// bytes arrive exactly in every slot, at sizes whose rows the driver pads and formats of every
// texel size; written in place likewise where the worker is one. Not asked, the same link
// copies, banded, between images of its own.
TEST_F(VulkanTest, HostImportedLinkUsesTheStagingInPlaceOnACpuDevice) {
    Device& primary = open(0);
    Device& worker = open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    if (!pair.allows(TransferPath::HostImported) || primary.info().type != "cpu") {
        GTEST_SKIP() << skip_tag("no-host-imported-to-cpu")
                     << "needs the host-imported path to a CPU device";
    }
    struct Case {
        std::uint32_t w, h;
        VkFormat format;
    };
    const Case cases[] = {{129, 97, VK_FORMAT_R8G8B8A8_UNORM},
                          {333, 257, VK_FORMAT_R16G16B16A16_SFLOAT},
                          {1024, 17, VK_FORMAT_R32_SFLOAT},
                          {1, 1, VK_FORMAT_B8G8R8A8_UNORM}};
    std::uint32_t seed = 70;
    for (const Case& c : cases) {
        SCOPED_TRACE(std::to_string(c.w) + "x" + std::to_string(c.h) + " " +
                     detail::format_name(c.format));
        TransferDesc desc = make_desc(c.w, c.h, c.format, TransferPath::HostImported, 8);
        desc.read_in_place = true;
        TransferLink link(worker, primary, pair, desc);
        ASSERT_TRUE(link.reads_in_place());
        EXPECT_EQ(link.layout().band_count, 1u) << "nothing on the primary's side to overlap";
        EXPECT_EQ(link.primary_layout_after(), VK_IMAGE_LAYOUT_GENERAL);
        for (std::uint32_t i = 0; i < 6; ++i) {
            round_trip(link, i % 3, seed++);
        }
    }
    // Written in place (TransferDesc::write_in_place) where the worker is one: the worker's
    // images are the staging, which the test's upload writes, and only the primary copies.
    if (worker.info().type == "cpu") {
        for (const Case& c : cases) {
            SCOPED_TRACE("written in place " + std::to_string(c.w) + "x" + std::to_string(c.h) +
                         " " + detail::format_name(c.format));
            TransferDesc desc = make_desc(c.w, c.h, c.format, TransferPath::HostImported, 8);
            desc.write_in_place = true;
            desc.worker_usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
            TransferLink link(worker, primary, pair, desc);
            ASSERT_TRUE(link.writes_in_place());
            EXPECT_FALSE(link.reads_in_place());
            EXPECT_EQ(link.layout().band_count, 1u);
            EXPECT_EQ(link.primary_layout_after(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
            for (std::uint32_t i = 0; i < 6; ++i) {
                round_trip(link, i % 3, seed++);
            }
        }
    }
    TransferLink copying(
        worker, primary, pair,
        make_desc(129, 97, VK_FORMAT_R8G8B8A8_UNORM, TransferPath::HostImported, 8));
    EXPECT_FALSE(copying.reads_in_place());
    EXPECT_FALSE(copying.writes_in_place());
    EXPECT_EQ(copying.layout().band_count, 13u);
    EXPECT_EQ(copying.primary_layout_after(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    round_trip(copying, 0, seed);
}

TEST_F(VulkanTest, LinkRefusesAForcedPathThePairDoesNotAllow) {
    Device& primary = open(0);
    Device& worker = open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    try {
        TransferLink link(worker, primary, pair,
                          make_desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, TransferPath::SameDevice));
        FAIL() << "expected tandem::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(pair.paths[0].reason), std::string::npos) << e.what();
    }
}

// The worker never finishes within the timeout: the bridge reports it, nothing hangs.
TEST_F(VulkanTest, BridgeTimeoutFailsTheLinkWithoutHanging) {
    Device& primary = open(0);
    Device& worker = open(1);
    const auto pair = detail::query_pair_info(worker.info(), primary.info());
    if (pair.gpu_side_sync) {
        GTEST_SKIP() << skip_tag("gpu-side-sync") << "GPU-side sync: no bridge";
    }
    auto desc = make_desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, TransferPath::HostCopy);
    desc.timeout = std::chrono::milliseconds(100);
    auto owned = std::make_unique<TransferLink>(worker, primary, pair, desc);
    TransferLink& link = *owned;
    const LinkImages images = slot_images(link, "timed out");
    const Image& src = images.worker;
    const Image& dst = images.primary;
    upload_image(worker, src, random_bytes(link.layout().image_bytes(), 3),
                 VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    TimelineSemaphore done(worker, "worker work done");
    const TransferTicket ticket = submit_until_the_bridge_gives_up(link, src, dst, done);
    EXPECT_TRUE(link.failed());
    EXPECT_FALSE(link.error().empty());
    // Nothing will signal the value: no batch may wait for it.
    EXPECT_FALSE(link.may_wait_for(ticket.primary_value));
    TransferTicket after;
    EXPECT_NE(link.submit(1, src.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, {}, dst.get(),
                          VK_IMAGE_LAYOUT_UNDEFINED, after),
              VK_SUCCESS);
    ASSERT_EQ(done.signal(1), VK_SUCCESS); // let the worker's queue drain before teardown
    ASSERT_EQ(link.worker_timeline().wait(ticket.worker_value, k_wait), VK_SUCCESS);
    // Destroying the link releases the primary's copies that waited for the lost forward;
    // only then may the images go.
    owned.reset();
}

// The stand-in for CUDA's copy that fails once `good` copies went well.
class FailingCopier final : public detail::StagingCopier {
public:
    FailingCopier(std::unique_ptr<detail::StagingCopier> inner, int good)
        : m_inner(std::move(inner)), m_left(good) {}
    [[nodiscard]] std::string copy(VkDeviceSize offset,
                                   VkDeviceSize bytes) const noexcept override {
        if (m_left.fetch_sub(1) <= 0) {
            return "an injected copy failure";
        }
        return m_inner->copy(offset, bytes);
    }

private:
    std::unique_ptr<detail::StagingCopier> m_inner;
    mutable std::atomic<int> m_left;
};

// The cuda-peer path's copies on its stream (StreamHandOff), with the host's stream in place of
// CUDA's: a copy that fails after two good transfers fails the link with the copy's words, the
// next submit is refused, and the gate opens, so the primary's copies that waited for the failed
// band drain and the link's teardown ends (the fixture's validation checks nothing is destroyed
// in use).
TEST_F(VulkanTest, AFailedStreamCopyFailsTheLinkWithItsWordsAndOpensTheGate) {
    Device& primary = open(0);
    Device& worker = open(1);
    PairInfo pair = detail::query_pair_info(worker.info(), primary.info());
    (void)detail::allow_cuda_stand_in(pair);
    if (!pair.allows(TransferPath::CudaPeer)) {
        GTEST_SKIP() << lacks_path(TransferPath::SharedMemory)
                     << "no cuda-peer path, not even with a stand-in, here";
    }
    constexpr std::uint32_t k_bands = 4;
    auto desc = make_desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, TransferPath::CudaPeer, 16);
    desc.cuda_copier = [](const Device& w, const detail::ExportableBuffer& from, const Device& p,
                          const detail::ExportableBuffer& to, VkDeviceSize bytes) {
        return std::make_unique<FailingCopier>(
            std::make_unique<MappedStagingCopier>(w, from, p, to, bytes), 2 * k_bands);
    };
    // Opaque-fd memory is there (the stand-in needs it): a failure here is a regression.
    auto owned = std::make_unique<TransferLink>(worker, primary, pair, desc);
    TransferLink& link = *owned;
    ASSERT_TRUE(link.gpu_side_sync());
    ASSERT_EQ(link.layout().band_count, k_bands);
    round_trip(link, 0, 41);
    round_trip(link, 1, 42);
    const LinkImages images = slot_images(link, "failing");
    upload_image(worker, images.worker, random_bytes(link.layout().image_bytes(), 43),
                 VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    // Its worker side waits for `done`, so the stream cannot fail before submit() has queued
    // every band of it.
    TimelineSemaphore done(worker, "worker work done");
    TransferTicket ticket;
    ASSERT_EQ(link.submit(2, images.worker.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          done.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
                          images.primary.get(), VK_IMAGE_LAYOUT_UNDEFINED, ticket),
              VK_SUCCESS)
        << link.error();
    ASSERT_EQ(done.signal(1), VK_SUCCESS);
    const auto until = std::chrono::steady_clock::now() + k_wait;
    while (!link.failed() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(link.failed());
    EXPECT_NE(link.error().find("the CUDA copy between the GPUs failed: an injected copy failure"),
              std::string::npos)
        << link.error();
    TransferTicket refused;
    EXPECT_NE(link.submit(0, images.worker.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, {},
                          images.primary.get(), VK_IMAGE_LAYOUT_UNDEFINED, refused),
              VK_SUCCESS);
    EXPECT_NE(link.error().find("an injected copy failure"), std::string::npos) << link.error();
    ASSERT_EQ(link.worker_timeline().wait(ticket.worker_value, k_wait), VK_SUCCESS);
    ASSERT_EQ(vkDeviceWaitIdle(worker.handle()), VK_SUCCESS);
    owned.reset(); // opens the gate for the failed transfer's waiting copies, then ends
}

// BandHandOff::Signal (the TransferLinks cases cover its data, values and slots): a bridge that
// times out opens the gate, so the primary's transfer queue is never left blocked.
class SignalHandOff : public VulkanTest, public ::testing::WithParamInterface<TransferPath> {
protected:
    void SetUp() override {
        VulkanTest::SetUp();
        m_primary = &open(0);
        m_worker = &open(1);
        m_pair = detail::query_pair_info(m_worker->info(), m_primary->info());
        if (!m_pair.allows(GetParam())) {
            GTEST_SKIP() << lacks_path(GetParam()) << to_string(GetParam())
                         << " is not available here";
        }
        if (m_pair.gpu_side_sync) {
            GTEST_SKIP() << skip_tag("gpu-side-sync") << to_string(GetParam())
                         << " is not bridged here";
        }
    }
    TransferDesc desc(std::uint32_t w, std::uint32_t h, VkFormat format,
                      std::uint32_t band_rows) const {
        return make_desc(w, h, format, GetParam(), band_rows, detail::BandHandOff::Signal);
    }
    Device* m_primary = nullptr;
    Device* m_worker = nullptr;
    PairInfo m_pair;
};

// The worker never finishes: the bridge times out, the link fails, and the gate opens, so the
// primary's transfer queue, which held the waiting copies, serves another link again.
TEST_P(SignalHandOff, ATimedOutBridgeOpensTheGate) {
    auto d = desc(64, 64, VK_FORMAT_R8G8B8A8_UNORM, 16);
    d.timeout = std::chrono::milliseconds(100);
    auto owned = std::make_unique<TransferLink>(*m_worker, *m_primary, m_pair, d);
    TransferLink& link = *owned;
    const LinkImages images = slot_images(link, "gated");
    const Image& src = images.worker;
    const Image& dst = images.primary;
    upload_image(*m_worker, src, random_bytes(link.layout().image_bytes(), 4),
                 VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    TimelineSemaphore never(*m_worker, "worker that never finishes");
    const TransferTicket ticket = submit_until_the_bridge_gives_up(link, src, dst, never);
    ASSERT_TRUE(link.failed());
    EXPECT_NE(link.error().find("did not reach"), std::string::npos) << link.error();
    // The gate is open: the failed transfer's copies drain (what they copied is not a result:
    // the link reports failed()), and the primary's transfer queue runs other work again.
    ASSERT_EQ(link.primary_timeline().wait(ticket.primary_value, k_wait), VK_SUCCESS);
    detail::submit_and_wait(*m_primary, detail::QueueRole::Transfer, [](VkCommandBuffer) {});
    ASSERT_EQ(never.signal(1), VK_SUCCESS); // let the worker's queue drain before teardown
    ASSERT_EQ(link.worker_timeline().wait(ticket.worker_value, k_wait), VK_SUCCESS);
    owned.reset();
}

std::string bridged_case_name(const ::testing::TestParamInfo<TransferPath>& param) {
    return path_name(param.param);
}

INSTANTIATE_TEST_SUITE_P(BridgedPaths, SignalHandOff,
                         ::testing::Values(TransferPath::HostImported, TransferPath::HostCopy),
                         bridged_case_name);

class ThreeDevices : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 3; }
};

// Two workers feed one primary at once, each through its own link (and bridge): both transfers
// are in flight together, released by their workers in turn, and each lands its own data.
TEST_F(ThreeDevices, TwoWorkersFeedOnePrimaryAtOnce) {
    Device& primary = open(0);
    Device& worker1 = open(1);
    Device& worker2 = open(2);
    const auto pair1 = detail::query_pair_info(worker1.info(), primary.info());
    const auto pair2 = detail::query_pair_info(worker2.info(), primary.info());
    TransferLink link1(worker1, primary, pair1,
                       make_desc(129, 97, VK_FORMAT_R8G8B8A8_UNORM, std::nullopt, 9));
    TransferLink link2(worker2, primary, pair2,
                       make_desc(333, 257, VK_FORMAT_R32_SFLOAT, TransferPath::HostCopy, 0));
    TransferLink* links[2] = {&link1, &link2};
    Device* workers[2] = {&worker1, &worker2};
    TimelineSemaphore done1(worker1, "worker1 done");
    TimelineSemaphore done2(worker2, "worker2 done");
    TimelineSemaphore* done[2] = {&done1, &done2};
    for (std::uint32_t round = 0; round < 3; ++round) {
        std::vector<LinkImages> images;
        std::vector<std::vector<std::uint8_t>> bytes;
        TransferTicket tickets[2];
        for (int i = 0; i < 2; ++i) {
            images.push_back(slot_images(*links[i], "round"));
            bytes.push_back(random_bytes(links[i]->layout().image_bytes(), 60 + round * 2 + i));
            poison_image(primary, images[i].primary, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
            upload_image(*workers[i], images[i].worker, bytes[i],
                         VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
            ASSERT_EQ(links[i]->submit(
                          round, images[i].worker.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          done[i]->submit_info(round + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
                          images[i].primary.get(), VK_IMAGE_LAYOUT_UNDEFINED, tickets[i]),
                      VK_SUCCESS);
        }
        // The second worker finishes first.
        ASSERT_EQ(done2.signal(round + 1), VK_SUCCESS);
        ASSERT_EQ(done1.signal(round + 1), VK_SUCCESS);
        for (int i = 0; i < 2; ++i) {
            ASSERT_EQ(links[i]->primary_timeline().wait(tickets[i].primary_value, k_wait),
                      VK_SUCCESS)
                << links[i]->error();
            ASSERT_EQ(links[i]->worker_timeline().wait(tickets[i].worker_value, k_wait),
                      VK_SUCCESS);
            EXPECT_EQ(first_difference(read_image(primary, images[i].primary,
                                                  VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL),
                                       bytes[i]),
                      -1)
                << "link " << i << " round " << round;
        }
    }
}

} // namespace
} // namespace tandem::test
