// The job and transfer threads' one wait-and-retry, for what a link, a bridge or the copier's
// thread has not taken or queued yet (VK_NOT_READY): a short sleep and a new attempt, bounded by
// the caller's own condition (the worker's loss, or its allowance).
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

#include <vulkan/vulkan_core.h>

namespace tandem::detail {

// How often the job thread looks whether a host bridge queued what its job waits for (an
// input's arrival, a chained producer's hand-off): the bridge does so within microseconds of
// the transfer's end, and the job's submission, which follows, is on every frame's path.
inline constexpr auto k_hand_off_poll = std::chrono::microseconds(10);
// How often a link or the transfer's queue that could not take more yet is asked again.
inline constexpr auto k_not_ready_poll = std::chrono::microseconds(100);

// The longest a retry sleeps between attempts, however long it has waited.
inline constexpr auto k_longest_poll = std::chrono::milliseconds(1);

// The pollers of GPU progress (the completion thread, a worker's watcher): the sleep they start
// from once something completed, doubling while nothing does, up to k_busy_progress_poll while
// work completes every few milliseconds and beyond that as backed_off grows it.
inline constexpr auto k_first_progress_poll = std::chrono::microseconds(5);
inline constexpr auto k_busy_progress_poll = std::chrono::microseconds(200);

// How long a retry that has waited `waited` so far sleeps before its next attempt: `interval`,
// or a twentieth of the wait once that is longer, up to k_longest_poll. What comes within a
// millisecond (a hand-off, a link's room) is seen as soon as before; what comes later (a slow
// producer's output, an input written by a long batch) at most 5% of the wait late, and the
// thread that waits for it no longer spins: at 10 us a poll, a job thread waiting for a held
// producer took half a core. The pollers of GPU progress (the completion thread, a worker's
// watcher) cap their growing sleeps so too, `waited` being the time since they last saw
// progress: at a steady 200 us, an idle runtime's completion thread took 7% of a core.
inline std::chrono::microseconds backed_off(std::chrono::microseconds interval,
                                            std::chrono::steady_clock::duration waited) {
    const auto twentieth = std::chrono::duration_cast<std::chrono::microseconds>(waited / 20);
    return std::max(interval, std::min<std::chrono::microseconds>(twentieth, k_longest_poll));
}

// From the `first` answer, `attempt()` again after `interval` (read before each sleep: an
// attempt may change it), backed off as the wait grows (backed_off), while the answer is
// VK_NOT_READY and `keep_trying()` (asked after each such answer) holds. The last answer.
template <typename KeepTrying, typename Attempt>
VkResult retry_while_not_ready(VkResult first, const std::chrono::microseconds& interval,
                               KeepTrying&& keep_trying, Attempt&& attempt) {
    VkResult result = first;
    const auto start = std::chrono::steady_clock::now();
    while (result == VK_NOT_READY && keep_trying()) {
        std::this_thread::sleep_for(backed_off(interval, std::chrono::steady_clock::now() - start));
        result = attempt();
    }
    return result;
}

} // namespace tandem::detail
