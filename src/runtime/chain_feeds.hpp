// Chain feeds: a chain across two workers (tandem/input.hpp, Chains). A producer whose
// consumer runs on another worker sends its output there itself, on the pair's best path in
// that direction, never through the primary unless that is the path:
//
// Each producer instance owns its OutputFeeds (TaskInstance::feeds):
//
//   workers       set when the instance is made: every worker where a live consumer of it runs
//                 on another device (TaskLinks::feed_counts, kept by the consumers'
//                 registrations).
//   adopt         the preparation: a feed (ChainFeed) to each of them, a link from the
//                 producer's device to that worker (negotiated and self-tested like any other)
//                 and, per slot, its sender and receiver images (make, from the preparation).
//   take          the producer's job thread, under the instance's mutex: the feeds this job
//                 fills (those a consumer still wants), and the waits for each link's last
//                 read of the slot's sender image.
//   record        at the end of the producer's job's own commands, while nobody else reads its
//                 output yet: the output copied into each feed's sender image. The output is
//                 left in TRANSFER_SRC_OPTIMAL for the hand-off after.
//   send          the producer's transfer thread, after the hand-off to the primary and before
//                 the slot leaves Recording: each feed's link carries the sender image to the
//                 worker (FeedSlot::sent, ticket).
//   retire_points, devices, stats  what the instance's retirement and TaskStats need.
//
// The consumer holds the producer's slot as for any chain (hold_chained) and reads the feed's
// receiver image once the link's value on the worker is reached (ChainedInput). The producer's
// slot is rewritten only after the completion pass saw the consumer's job complete (as for a
// consumer on the primary), so neither of the slot's feed images is rewritten while read.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/resources.hpp"
#include "runtime/slot_transport.hpp"
#include "sync/retire_list.hpp"
#include "tandem/task.hpp"
#include "tandem/workload.hpp"

namespace tandem::detail {

class Device;
class DevicePairs;
class LinkFailures;
class Worker;
struct TaskInstance;

// A producer's output sent to another worker, where chains' consumers read it (a chain across
// two workers, runtime/chain_feeds.hpp). Per slot of the producer: `sender` on the producer's
// device, into which the producer's job copies its output at the end of its own commands, and
// `receiver` on the consumer's device, where `link` (the pair's best path, producer -> worker)
// delivers it. Under the producer instance's mutex: each slot's `copied`, `sent` and `ticket`;
// `wanted` is read by the job thread (a consumer on that worker is live).
struct FeedSlot {
    Image sender;
    Image receiver;
    VkImageLayout receiver_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    std::uint64_t copied = 0; // the generation the producer's job copied into `sender`
    std::uint64_t sent = 0;   // the generation the link was handed (0: none, or it failed)
    SlotTicket ticket;        // that hand-off's values on the link's two timelines
};

struct ChainFeed {
    Worker* to = nullptr; // the consumer's worker
    std::vector<FeedSlot> slots;
    // Declared after the images it moves: destroyed before them. Null when it could not be
    // prepared: `error` says why.
    std::unique_ptr<SlotTransport> link;
    std::string error;
    std::atomic<bool> wanted{true};
    std::atomic<std::uint64_t> sends{0}; // outputs handed to the link (TaskFeedStats::sent)
};

// The feeds one job fills, by their place among the instance's feeds (in workers() order).
using FeedList = std::vector<std::size_t>;

class OutputFeeds {
public:
    // The workers the instance's output goes to, set when it is made (before its preparation).
    void send_to(std::vector<Worker*> workers) { m_workers = std::move(workers); }
    [[nodiscard]] std::span<Worker* const> workers() const noexcept { return m_workers; }
    // The preparation: a feed from `from` to each of workers(), in that order, each link like
    // `output` (its size, slots and settings) on the best path the pair has not dropped from
    // `from`, with its slots' images (a path whose images cannot be made is dropped and the next
    // tried, DevicePair::open_with_images). A feed that cannot be made keeps why
    // (ChainFeed::error, logged): its consumers' reads fail with it, the producer runs on.
    // Blocking: the preparation thread only. Throws std::bad_alloc only.
    [[nodiscard]] std::vector<std::unique_ptr<ChainFeed>>
    make(const Device& from, DevicePairs& pairs, const TransferDesc& output) const;
    // Publishes `made` (make's), each feed wanted while `feed_counts` (the producer's
    // TaskLinks::feed_counts) counts a consumer on its worker: a count that went while they were
    // made leaves its feed unfilled from the first job on. Caller holds the instance's task's
    // mutex (consumers' registrations walk the feeds, and change the counts, under it).
    void adopt(std::vector<std::unique_ptr<ChainFeed>> made,
               const std::map<std::uint32_t, std::uint32_t>& feed_counts) noexcept;
    // The feed to `worker`, null when none.
    [[nodiscard]] ChainFeed* to(const Worker* worker) const noexcept;

    // The feeds job `generation` in `slot` fills, each marked copied for it; appends to `waits`
    // what the job's batch waits for before rewriting their sender images. Job thread; caller
    // holds the instance's mutex. Throws std::bad_alloc only.
    [[nodiscard]] FeedList take(std::uint32_t slot, std::uint64_t generation,
                                std::vector<VkSemaphoreSubmitInfo>& waits);
    // Records the copies of `image` (the job's output of `extent`, as `written` says the
    // workload left it) into `feeds`' sender images of `slot`; `image` is left in
    // TRANSFER_SRC_OPTIMAL, its copies before any later command of the batch. Nothing when
    // `feeds` is empty.
    void record(std::uint32_t slot, std::span<const std::size_t> feeds, VkCommandBuffer cmd,
                VkImage image, VkExtent2D extent, const WorkloadOutput& written) const noexcept;
    // Hands `feeds`' sender images of `slot` to their links, after `written` (the job's
    // signal); a link that answers VK_NOT_READY is asked again while `keep_trying()`. A feed
    // that fails is not sent (FeedSlot::sent stays older): its consumers' reads fail with its
    // error. Returns the first feed whose link failed (its path is then to be dropped:
    // retire_feed), or null. The producer's transfer thread, with the slot still
    // Recording; `mutex` is the instance's. Never throws.
    [[nodiscard]] ChainFeed* send(std::uint32_t slot, std::uint64_t generation,
                                  std::span<const std::size_t> feeds, VkSemaphoreSubmitInfo written,
                                  std::mutex& mutex,
                                  const std::function<bool()>& keep_trying) noexcept;

    // The links' retire points (their quiesce), appended to `points`.
    void retire_points(std::vector<RetirePoint>& points, std::chrono::milliseconds hand_off_wait);
    // The consumers' devices, appended to `devices` where missing.
    void devices(std::vector<const Device*>& devices) const;
    // Each feed as TaskStats reports it. Caller holds the instance's mutex.
    void stats(std::vector<TaskFeedStats>& out) const;

private:
    std::vector<Worker*> m_workers;
    // Declared after nothing they use: each feed owns its link and images.
    std::vector<std::unique_ptr<ChainFeed>> m_feeds;
};

// A feed of `instance` whose link failed (OutputFeeds::send): its path is dropped for the pair
// (the instance's device, the feed's worker) and the instance retired and prepared again
// (LinkFailures::retire_link). False when the path is not to blame: the feed's worker is lost
// (its consumers fail there anyway), or the producer's device failed (the caller loses it).
[[nodiscard]] bool retire_feed(LinkFailures& links, TaskInstance& instance,
                               const ChainFeed& feed) noexcept;

} // namespace tandem::detail
