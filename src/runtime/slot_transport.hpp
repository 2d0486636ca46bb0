// SlotTransport: how one slot's image moves from the device that writes it (the sender) to the
// device that reads it (the receiver). The runtime opens one per direction a task's images take
// and makes each slot's images with it: the task's outputs (its device sends, the primary
// receives), each of its inputs (the primary sends, the task's device receives) and each of its
// chains' feeds (its device sends, a consumer's worker receives). Two implementations:
// LocalTransport (sender and receiver are one device: zero copy, the sender image is the
// receiver image, a layout transition and a timeline signal) and the TransferLink adapter
// (src/transfer, every cross-device path, whose "worker" is the sender and "primary" the
// receiver; on the zero-copy path the slot's two images share one allocation).
//
// Threads: submit() is called by the task's worker thread only; receiver_value(), failed() and
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

// One slot's images: `receiver` is what the receiving side reads (a task's output: what leases
// point at); `sender` is what the sending side writes, empty when the transport shares images
// (then the sender writes `receiver`).
struct SlotImages {
    Image sender;
    Image receiver;
};

struct SlotTicket {
    std::uint64_t sender_value = 0;   // sender_semaphore(): the sender image may be rewritten
    std::uint64_t receiver_value = 0; // receiver_semaphore(): the receiver image holds the result
};

class SlotTransport {
public:
    virtual ~SlotTransport() = default;
    SlotTransport() = default;
    SlotTransport(const SlotTransport&) = delete;
    SlotTransport& operator=(const SlotTransport&) = delete;

    [[nodiscard]] virtual std::string path_name() const = 0;
    // True when sender and receiver images are one image (the runtime creates only one).
    [[nodiscard]] virtual bool shares_images() const noexcept = 0;
    // True when the slot images are the path's own shared memory (zero-copy: the sender's
    // exported, the receiver's imported), so that failing to make them is the path's failure.
    [[nodiscard]] virtual bool images_are_the_path() const noexcept { return false; }
    // True when a batch of the receiver may wait GPU-side for `receiver_value` now: its signal is
    // queued with nothing left for a host thread to do (TransferLink::may_wait_for); always
    // without a host bridge. Any thread; non-blocking.
    [[nodiscard]] virtual bool may_wait_for(std::uint64_t /*receiver_value*/) const noexcept {
        return true;
    }
    // The images of `slot`, named after `name`, with `sender_usage` on the image the sender
    // writes and `receiver_usage` on the receiver's (one image when shares_images()). Throws
    // Error (set-up).
    [[nodiscard]] virtual SlotImages create_images(std::uint32_t slot, const std::string& name,
                                                   VkImageUsageFlags sender_usage,
                                                   VkImageUsageFlags receiver_usage) const = 0;

    // Moves `sender_image` (layout `sender_layout`, written by work that signals `sender_wait`)
    // into `receiver_image` (previous layout `receiver_layout`). When out.receiver_value is
    // reached, the receiver image is in receiver_layout_after() for the receiver's main family.
    [[nodiscard]] virtual VkResult submit(std::uint32_t slot, VkImage sender_image,
                                          VkImageLayout sender_layout,
                                          VkSemaphoreSubmitInfo sender_wait, VkImage receiver_image,
                                          VkImageLayout receiver_layout,
                                          SlotTicket& out) noexcept = 0;

    // True when the receiver's slot images are the path's staging (TransferDesc::read_in_place).
    [[nodiscard]] virtual bool reads_in_place() const noexcept { return false; }
    // The layout the receiver image is in once a submit's receiver_value is reached:
    // SHADER_READ_ONLY_OPTIMAL, or GENERAL where the receiver reads the staging in place.
    [[nodiscard]] VkImageLayout receiver_layout_after() const noexcept {
        return reads_in_place() ? VK_IMAGE_LAYOUT_GENERAL
                                : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    // True when the sender's slot images are the path's staging (TransferDesc::write_in_place):
    // the work leaves them in GENERAL for submit().
    [[nodiscard]] virtual bool writes_in_place() const noexcept { return false; }
    // The layout the sender image is in once a submit's sender_value is reached, given the layout
    // it was submitted in; the transport leaves it there until the slot is written again (what
    // a chain's consumer on the same device reads it in).
    [[nodiscard]] virtual VkImageLayout
    sender_layout_after(VkImageLayout sender_layout) const noexcept = 0;
    [[nodiscard]] virtual VkSemaphore sender_semaphore() const noexcept = 0;
    [[nodiscard]] virtual VkSemaphore receiver_semaphore() const noexcept = 0;
    // Completed value of receiver_semaphore(); non-blocking.
    [[nodiscard]] virtual VkResult receiver_value(std::uint64_t& out) const noexcept = 0;
    [[nodiscard]] virtual bool failed() const noexcept = 0;
    [[nodiscard]] virtual std::string error() const = 0;
    // Why the last submit() answered VK_NOT_READY (empty when it never did); any thread.
    [[nodiscard]] virtual std::string not_ready_reason() const { return {}; }
    // Leaving use: stops whatever hands work on by itself, after letting what it was given go on
    // for up to `hand_off_wait`, and returns the timeline values after which the GPU no longer
    // uses the transport (TransferLink::quiesce). Once submit() is no longer called. Empty only
    // when out of memory.
    [[nodiscard]] virtual std::vector<RetirePoint>
    quiesce(std::chrono::milliseconds hand_off_wait) noexcept = 0;
};

// The usages of a stream's slot images: on the image the sender writes, and on the receiver's.
struct SlotImageUsage {
    VkImageUsageFlags sender = 0;
    VkImageUsageFlags receiver = 0;
};

// The images of each of `slots` slots of `link`, named "<name> slot <i>". Throws Error (set-up).
[[nodiscard]] std::vector<SlotImages> make_slot_images(const SlotTransport& link,
                                                       const std::string& name, std::uint32_t slots,
                                                       const SlotImageUsage& usage);

// Same device: zero copy.
[[nodiscard]] std::unique_ptr<SlotTransport> make_local_transport(const Device& device,
                                                                  const TransferDesc& desc);

// Sender -> receiver on two devices through src/transfer (the runtime opens them as streams on
// their DevicePair, runtime/device_pairs.hpp; `pair` is the cell from sender to receiver, whose
// `worker` is the sender and `primary` the receiver). With `health`, the path is the best one
// the pair has not dropped, self-tested on its first use for the pair (choose_tested_path in
// src/transfer/path_self_test.hpp; blocking: preparation thread only), and a path whose link
// cannot be set up is dropped with the reason and the next one tried. Throws Error when this
// build has no transfer layer or no path is left (a forced one: when it is unavailable or dropped).
[[nodiscard]] std::unique_ptr<SlotTransport>
make_link_transport(const Device& sender, const Device& receiver, const PairInfo& pair,
                    const TransferDesc& desc, PathHealth* health = nullptr);

} // namespace tandem::detail
