#include "runtime/chain_feeds.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "core/resources.hpp"
#include "runtime/device_pairs.hpp"
#include "runtime/link_failures.hpp"
#include "runtime/retry.hpp"
#include "runtime/worker.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

std::vector<std::unique_ptr<ChainFeed>> OutputFeeds::make(const Device& from, DevicePairs& pairs,
                                                          const TransferDesc& output) const {
    std::vector<std::unique_ptr<ChainFeed>> made;
    made.reserve(m_workers.size());
    for (Worker* to : m_workers) {
        auto feed = std::make_unique<ChainFeed>();
        feed->to = to;
        const Device& device = to->device();
        TransferDesc td = output;
        td.name = output.name + " to " + device.label();
        try {
            OpenedStream opened =
                pairs.pair(from, device)
                    .open_with_images(
                        from, td,
                        {VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                         VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT},
                        "making a feed's images failed: ");
            for (SlotImages& images : opened.images) {
                FeedSlot slot;
                slot.sender = std::move(images.sender);
                slot.receiver = std::move(images.receiver);
                feed->slots.push_back(std::move(slot));
            }
            feed->link = std::move(opened.link);
        } catch (const Error& e) {
            feed->link.reset();
            feed->slots.clear();
            feed->error = "its output cannot be sent to " + device.label() + ": " + e.what();
            log_warn("runtime", "{}: {}", td.name, feed->error);
        }
        made.push_back(std::move(feed));
    }
    return made;
}

void OutputFeeds::adopt(std::vector<std::unique_ptr<ChainFeed>> made,
                        const std::map<std::uint32_t, std::uint32_t>& feed_counts) noexcept {
    for (auto& feed : made) {
        feed->wanted.store(feed_counts.contains(feed->to->device().info().index),
                           std::memory_order_relaxed);
    }
    m_feeds = std::move(made);
}

ChainFeed* OutputFeeds::to(const Worker* worker) const noexcept {
    for (const auto& feed : m_feeds) {
        if (feed->to == worker) {
            return feed.get();
        }
    }
    return nullptr;
}

FeedList OutputFeeds::take(std::uint32_t slot, std::uint64_t generation,
                           std::vector<VkSemaphoreSubmitInfo>& waits) {
    FeedList out;
    for (std::size_t i = 0; i < m_feeds.size(); ++i) {
        ChainFeed& feed = *m_feeds[i];
        // Acquire: pairs with the consumer registration that wanted it again. A worker that was
        // lost is not fed (its consumers fail there anyway).
        if (!feed.link || feed.link->failed() || feed.to->lost() ||
            !feed.wanted.load(std::memory_order_acquire)) {
            continue;
        }
        FeedSlot& s = feed.slots[slot];
        if (s.ticket.sender_value > 0) { // the link's last read of the sender image
            waits.push_back(semaphore_submit_info(feed.link->sender_semaphore(),
                                                  s.ticket.sender_value,
                                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
        }
        s.copied = generation;
        out.push_back(i);
    }
    return out;
}

void OutputFeeds::record(std::uint32_t slot, std::span<const std::size_t> feeds,
                         VkCommandBuffer cmd, VkImage image, VkExtent2D extent,
                         const WorkloadOutput& written) const noexcept {
    if (feeds.empty()) {
        return;
    }
    image_barrier(cmd, image, written.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, written.stage,
                  written.access, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    for (const std::size_t i : feeds) {
        const VkImage sender = m_feeds[i]->slots[slot].sender.get();
        // Rewritten whole; the link's last read of it was waited for (take).
        image_barrier(cmd, sender, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        copy_whole_image(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, sender,
                         VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, extent);
        // The link reads it from TRANSFER_SRC_OPTIMAL after the batch's signal.
        image_barrier(cmd, sender, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                      VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_NONE);
    }
}

ChainFeed* OutputFeeds::send(std::uint32_t slot, std::uint64_t generation,
                             std::span<const std::size_t> feeds, VkSemaphoreSubmitInfo written,
                             std::mutex& mutex, const std::function<bool()>& keep_trying) noexcept {
    ChainFeed* failed = nullptr;
    for (const std::size_t i : feeds) {
        ChainFeed& feed = *m_feeds[i];
        FeedSlot& s = feed.slots[slot];
        VkImageLayout receiver_layout = VK_IMAGE_LAYOUT_UNDEFINED;
        {
            std::lock_guard lock(mutex);
            receiver_layout = s.receiver_layout;
        }
        SlotTicket ticket;
        const VkImage receiver = s.receiver.image ? s.receiver.get() : s.sender.get();
        const auto hand_over = [&] {
            return feed.link->submit(slot, s.sender.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                     written, receiver, receiver_layout, ticket);
        };
        const VkResult r =
            retry_while_not_ready(hand_over(), k_not_ready_poll, keep_trying, hand_over);
        std::lock_guard lock(mutex);
        if (r != VK_SUCCESS) {
            try {
                feed.error =
                    "its output could not be sent to " + feed.to->label() + " on " +
                    feed.link->path_name() + ": " +
                    (feed.link->failed() ? feed.link->error() : std::string(tandem::to_string(r)));
            } catch (...) {
                // Out of memory for the sentence: the read fails without it.
            }
            if (failed == nullptr && feed.link->failed()) {
                failed = &feed;
            }
            continue;
        }
        s.receiver_layout = feed.link->receiver_layout_after();
        s.ticket = ticket;
        s.sent = generation;
        // Relaxed: a counter for statistics, ordering nothing.
        feed.sends.fetch_add(1, std::memory_order_relaxed);
    }
    return failed;
}

void OutputFeeds::retire_points(std::vector<RetirePoint>& points,
                                std::chrono::milliseconds hand_off_wait) {
    for (const auto& feed : m_feeds) {
        if (feed->link) {
            const auto more = feed->link->quiesce(hand_off_wait);
            points.insert(points.end(), more.begin(), more.end());
        }
    }
}

void OutputFeeds::devices(std::vector<const Device*>& devices) const {
    for (const auto& feed : m_feeds) {
        const Device* to = &feed->to->device();
        if (std::find(devices.begin(), devices.end(), to) == devices.end()) {
            devices.push_back(to);
        }
    }
}

void OutputFeeds::stats(std::vector<TaskFeedStats>& out) const {
    for (const auto& feed : m_feeds) {
        TaskFeedStats f;
        f.device = feed->to->device().info().index;
        f.path = feed->link ? feed->link->path_name() : std::string();
        f.read_in_place = feed->link && feed->link->reads_in_place();
        // Relaxed: counters and a flag, ordering nothing here.
        f.sent = feed->sends.load(std::memory_order_relaxed);
        f.wanted = feed->wanted.load(std::memory_order_relaxed);
        f.error = feed->error;
        out.push_back(std::move(f));
    }
}

bool retire_feed(LinkFailures& links, TaskInstance& instance, const ChainFeed& feed) noexcept {
    if (!feed.link || feed.to->lost()) {
        return false; // the receiving worker's fault, or nothing to blame
    }
    try {
        return links.retire_link(instance, *feed.link, instance.device(),
                                 feed.to->device().info().index,
                                 "its feed to " + feed.to->label() + " on the path ");
    } catch (...) {
        return false; // out of memory naming it
    }
}

} // namespace tandem::detail
