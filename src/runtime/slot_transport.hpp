// SlotTransport: how a task's slot output moves from its worker image to its primary image.
// The runtime holds one per task and makes each slot's images with it. Two implementations:
// LocalTransport (worker and primary are one device: zero copy, the worker image is the primary
// image, a layout transition and a timeline signal) and the TransferLink adapter (src/transfer,
// every cross-device path; on the zero-copy path the slot's two images share one allocation).
//
// Threads: submit() is called by the task's worker thread only; primary_value(), failed() and
// error() from any thread. Never throws after construction.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/resources.hpp"
#include "sync/pair_bridge.hpp"
#include "sync/retire_list.hpp"
#include "tandem/device_info.hpp"
#include "tandem/task.hpp"
#include "transfer/staging_copier.hpp"
#include "transfer/transfer_desc.hpp"
#include "transfer/transfer_observer.hpp"

namespace tandem::detail {

class PathHealth; // src/transfer/path_health.hpp

// One slot's images: `primary` is what leases point at; `worker` is what the workload writes,
// empty when the transport shares images (then the workload writes `primary`).
struct SlotImages {
    Image worker;
    Image primary;
};

struct SlotTicket {
    std::uint64_t worker_value = 0;  // worker_semaphore(): the worker image may be rewritten
    std::uint64_t primary_value = 0; // primary_semaphore(): the primary image holds the result
};

class SlotTransport {
public:
    virtual ~SlotTransport() = default;
    SlotTransport() = default;
    SlotTransport(const SlotTransport&) = delete;
    SlotTransport& operator=(const SlotTransport&) = delete;

    [[nodiscard]] virtual std::string path_name() const = 0;
    // True when worker and primary images are one image (the runtime creates only one).
    [[nodiscard]] virtual bool shares_images() const noexcept = 0;
    // True when the slot images are the path's own shared memory (zero-copy: the worker's
    // exported, the primary's imported), so that failing to make them is the path's failure.
    [[nodiscard]] virtual bool images_are_the_path() const noexcept { return false; }
    // True when a batch of the primary may wait GPU-side for `primary_value` now: its signal is
    // queued with nothing left for a host thread to do (TransferLink::may_wait_for); always
    // without a host bridge. Any thread; non-blocking.
    [[nodiscard]] virtual bool may_wait_for(std::uint64_t /*primary_value*/) const noexcept {
        return true;
    }
    // The images of `slot`, named after `name`, with the workload's `worker_usage` on the image
    // it writes and `primary_usage` on the primary's (one image when shares_images()). Throws
    // Error (set-up).
    [[nodiscard]] virtual SlotImages create_images(std::uint32_t slot, const std::string& name,
                                                   VkImageUsageFlags worker_usage,
                                                   VkImageUsageFlags primary_usage) const = 0;

    // Moves `worker_image` (layout `worker_layout`, written by work that signals `worker_wait`)
    // into `primary_image` (previous layout `primary_layout`). When out.primary_value is
    // reached, the primary image is in SHADER_READ_ONLY_OPTIMAL for the primary's main family.
    [[nodiscard]] virtual VkResult submit(std::uint32_t slot, VkImage worker_image,
                                          VkImageLayout worker_layout,
                                          VkSemaphoreSubmitInfo worker_wait, VkImage primary_image,
                                          VkImageLayout primary_layout,
                                          SlotTicket& out) noexcept = 0;

    // True when the primary's slot images are the path's staging (TransferDesc::read_in_place).
    [[nodiscard]] virtual bool reads_in_place() const noexcept { return false; }
    // The layout the primary image is in once a submit's primary_value is reached:
    // SHADER_READ_ONLY_OPTIMAL, or GENERAL where the primary reads the staging in place.
    [[nodiscard]] VkImageLayout primary_layout_after() const noexcept {
        return reads_in_place() ? VK_IMAGE_LAYOUT_GENERAL
                                : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    // True when the worker's slot images are the path's staging (TransferDesc::write_in_place):
    // the work leaves them in GENERAL for submit().
    [[nodiscard]] virtual bool writes_in_place() const noexcept { return false; }
    // The layout the worker image is in once a submit's worker_value is reached, given the layout
    // it was submitted in; the transport leaves it there until the slot is written again (what
    // a chain's consumer on the same device reads it in).
    [[nodiscard]] virtual VkImageLayout
    worker_layout_after(VkImageLayout worker_layout) const noexcept = 0;
    [[nodiscard]] virtual VkSemaphore worker_semaphore() const noexcept = 0;
    [[nodiscard]] virtual VkSemaphore primary_semaphore() const noexcept = 0;
    // Completed value of primary_semaphore(); non-blocking.
    [[nodiscard]] virtual VkResult primary_value(std::uint64_t& out) const noexcept = 0;
    [[nodiscard]] virtual bool failed() const noexcept = 0;
    [[nodiscard]] virtual std::string error() const = 0;
    // Why the last submit() answered VK_NOT_READY (empty when it never did); any thread.
    [[nodiscard]] virtual std::string not_ready_reason() const { return {}; }
    // Leaving use: stops whatever hands work on by itself and returns the timeline values after
    // which the GPU no longer uses the transport (TransferLink::quiesce). Once submit() is no
    // longer called. Empty only when out of memory.
    [[nodiscard]] virtual std::vector<RetirePoint> quiesce() noexcept = 0;
};

// Same device: zero copy.
[[nodiscard]] std::unique_ptr<SlotTransport> make_local_transport(const Device& device,
                                                                  const TransferDesc& desc);

// Worker -> primary on two devices through src/transfer (the runtime opens them as streams on
// their DevicePair, runtime/device_pairs.hpp). With `health`, the path is the best one
// the pair has not dropped, self-tested on its first use for the pair (choose_tested_path in
// src/transfer/path_self_test.hpp; blocking: preparation thread only), and a path whose link
// cannot be set up is dropped with the reason and the next one tried. Throws Error when this
// build has no transfer layer or no path is left (a forced one: when it is unavailable or dropped).
[[nodiscard]] std::unique_ptr<SlotTransport>
make_link_transport(const Device& worker, const Device& primary, const PairInfo& pair,
                    const TransferDesc& desc, PathHealth* health = nullptr);

} // namespace tandem::detail
