// The job and transfer threads' one wait-and-retry, for what a link, a bridge or the copier's
// thread has not taken or queued yet (VK_NOT_READY): a short sleep and a new attempt, bounded by
// the caller's own condition (the worker's loss, or its allowance).
#pragma once

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

// From the `first` answer, `attempt()` again after `interval` (read before each sleep: an
// attempt may change it) while the answer is VK_NOT_READY and `keep_trying()` (asked after each
// such answer) holds. The last answer.
template <typename KeepTrying, typename Attempt>
VkResult retry_while_not_ready(VkResult first, const std::chrono::microseconds& interval,
                               KeepTrying&& keep_trying, Attempt&& attempt) {
    VkResult result = first;
    while (result == VK_NOT_READY && keep_trying()) {
        std::this_thread::sleep_for(interval);
        result = attempt();
    }
    return result;
}

} // namespace tandem::detail
