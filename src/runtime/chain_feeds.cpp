#include "runtime/chain_feeds.hpp"

#include "core/resources.hpp"
#include "runtime/retry.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

std::vector<std::size_t> take_feeds(TaskInstance& instance, std::uint32_t slot,
                                    std::uint64_t generation,
                                    std::vector<VkSemaphoreSubmitInfo>& waits) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < instance.feeds.size(); ++i) {
        ChainFeed& feed = *instance.feeds[i];
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

void record_feed_copies(const TaskInstance& instance, std::uint32_t slot,
                        std::span<const std::size_t> feeds, VkCommandBuffer cmd, VkImage image,
                        const WorkloadOutput& written) noexcept {
    if (feeds.empty()) {
        return;
    }
    image_barrier(cmd, image, written.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, written.stage,
                  written.access, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    const VkExtent2D extent{instance.desc.width, instance.desc.height};
    for (const std::size_t i : feeds) {
        const VkImage sender = instance.feeds[i]->slots[slot].sender.get();
        // Rewritten whole; the link's last read of it was waited for (take_feeds).
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

ChainFeed* send_feeds(TaskInstance& instance, std::uint32_t slot, std::uint64_t generation,
                      std::span<const std::size_t> feeds, VkSemaphoreSubmitInfo written,
                      const std::function<bool()>& keep_trying) noexcept {
    ChainFeed* failed = nullptr;
    for (const std::size_t i : feeds) {
        ChainFeed& feed = *instance.feeds[i];
        FeedSlot& s = feed.slots[slot];
        VkImageLayout receiver_layout = VK_IMAGE_LAYOUT_UNDEFINED;
        {
            std::lock_guard lock(instance.mutex);
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
        std::lock_guard lock(instance.mutex);
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

} // namespace tandem::detail
