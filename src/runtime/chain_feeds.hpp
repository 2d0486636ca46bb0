// Chain feeds: a chain across two workers (tandem/input.hpp, Chains). A producer whose
// consumer runs on another worker sends its output there itself, on the pair's best path in
// that direction, never through the primary unless that is the path:
//
//   preparation   each instance of the producer is made with a feed (ChainFeed) to every
//                 worker where a live consumer of it runs on another device
//                 (TaskLinks::feed_counts, kept by the consumers' registrations): a link from the
//                 producer's device to that worker (negotiated and self-tested like any other)
//                 and, per slot, its sender and receiver images (TaskPreparer::prepare_feeds).
//   take_feeds    the producer's job thread, under the instance's mutex: the feeds this job
//                 fills (those a consumer still wants), and the waits for each link's last
//                 read of the slot's sender image.
//   record_feed_copies  at the end of the producer's job's own commands, while nobody else
//                 reads its output yet: the output copied into each feed's sender image. The
//                 output is left in TRANSFER_SRC_OPTIMAL for the hand-off after.
//   send_feeds    the producer's transfer thread, after the hand-off to the primary and
//                 before the slot leaves Recording: each feed's link carries the sender image
//                 to the worker (FeedSlot::sent, ticket).
//
// The consumer holds the producer's slot as for any chain (hold_chained) and reads the feed's
// receiver image once the link's value on the worker is reached (ChainedInput). The producer's
// slot is rewritten only after the completion pass saw the consumer's job complete (as for a
// consumer on the primary), so neither of the slot's feed images is rewritten while read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "runtime/task_instance.hpp"
#include "tandem/workload.hpp"

namespace tandem::detail {

// The feeds (indices in instance.feeds) job `generation` in `slot` fills, each marked copied
// for it; appends to `waits` what the job's batch waits for before rewriting their sender
// images. Job thread; caller holds instance.mutex. Throws std::bad_alloc only.
[[nodiscard]] std::vector<std::size_t> take_feeds(TaskInstance& instance, std::uint32_t slot,
                                                  std::uint64_t generation,
                                                  std::vector<VkSemaphoreSubmitInfo>& waits);

// Records the copies of `image` (the job's output, as `written` says the workload left it) into
// `feeds`' sender images of `slot`; `image` is left in TRANSFER_SRC_OPTIMAL, its copies before
// any later command of the batch. Nothing when `feeds` is empty.
void record_feed_copies(const TaskInstance& instance, std::uint32_t slot,
                        std::span<const std::size_t> feeds, VkCommandBuffer cmd, VkImage image,
                        const WorkloadOutput& written) noexcept;

// Hands `feeds`' sender images of `slot` to their links, after `written` (the job's signal);
// a link that answers VK_NOT_READY is asked again while `keep_trying()`. A feed that fails is
// not sent (FeedSlot::sent stays older): its consumers' reads fail with its error. Returns the
// first feed whose link failed (its path is then to be dropped: LinkFailures::retire_feed), or
// null. The producer's transfer thread, with the slot still Recording. Never throws.
[[nodiscard]] ChainFeed* send_feeds(TaskInstance& instance, std::uint32_t slot,
                                    std::uint64_t generation, std::span<const std::size_t> feeds,
                                    VkSemaphoreSubmitInfo written,
                                    const std::function<bool()>& keep_trying) noexcept;

} // namespace tandem::detail
