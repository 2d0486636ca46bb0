// TransferLink: moves results from one worker device to the primary device through a negotiated
// (or forced) transfer path, with a ring of `slots` staging regions and command buffers, band by
// band, synchronised with timeline semaphores whose values only grow. It composes the path
// (transfer_path.hpp), a BandRecorder (each slot's command buffers of both sides) and a HandOff
// strategy (how each band reaches the primary), and keeps the slots' state, the timelines and
// the link's failure.
//
// One submit() for slot s: the recorder records both sides of every band; the worker's copy
// queue waits for the caller's semaphore, copies each band of the worker image into slot s's
// staging and signals the worker timeline once per band (worker_value is the last band's value).
// The hand-off then gets each band to the primary's copy queue, which copies it into the primary
// image; after the last band the image is in SHADER_READ_ONLY_OPTIMAL and the primary timeline is
// signalled (primary_value). Read in place (TransferDesc::read_in_place), the primary image is
// the slot's staging, so the primary's band copies nothing; written in place
// (TransferDesc::write_in_place), the worker image is, so the worker's band copies nothing.
// GPU-side (GpuWaitHandOff) where the pair shares a semaphore and the path has no host step;
// host-bridged otherwise (BridgeSubmitHandOff, or BridgeSignalHandOff with TransferDesc::hand_off),
// on the bridge thread of the device pair (TransferDesc::bridge), shared with the pair's other
// links. Either way band k's upload overlaps band k+1's download. The same-device path is one batch
// on the device's copy queue that signals both timelines: no staging, no hand-off, no copy when the
// worker image is the primary image. Zero-copy path: the slot's worker and primary images share one
// allocation (create_images), and its one band copies nothing: the worker's side releases the image
// to VK_QUEUE_FAMILY_EXTERNAL, the primary's acquires it, with the same timelines.
//
// Threads: construction throws tandem::Error; submit() from one thread at a time, never throws
// and never blocks on a GPU; the const queries from any thread. Lifetime: destroy while both
// devices are alive and before the images it was given: the destructor lets the bridge submit
// what the worker delivers (up to the timeout), stops it, and waits for what was queued.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/resources.hpp"
#include "sync/pair_bridge.hpp"
#include "sync/retire_list.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/device_info.hpp"
#include "transfer/band_gpu_timer.hpp"
#include "transfer/band_recorder.hpp"
#include "transfer/hand_off.hpp"
#include "transfer/transfer_desc.hpp"
#include "transfer/transfer_observer.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

// The worker image and the primary image of one slot (TransferLink::create_images).
struct LinkImages {
    Image worker;
    Image primary;
};

struct TransferTicket {
    std::uint64_t worker_value = 0;
    std::uint64_t primary_value = 0;
};

class TransferLink {
public:
    TransferLink(const Device& worker, const Device& primary, const PairInfo& pair,
                 const TransferDesc& desc);
    ~TransferLink();
    TransferLink(const TransferLink&) = delete;
    TransferLink& operator=(const TransferLink&) = delete;

    [[nodiscard]] TransferPath path() const noexcept { return m_path; }
    // True when no host bridge hands the bands on (GPU-side wait, or the same device).
    [[nodiscard]] bool gpu_side_sync() const noexcept {
        return m_hand_off == nullptr || !m_hand_off->host_bridged();
    }
    [[nodiscard]] const StagingLayout& layout() const noexcept { return m_backend->layout(); }
    // True when bands are timed on the GPUs (TransferObserver::times_bands_on_gpus, where the
    // devices allow).
    [[nodiscard]] bool gpu_times() const noexcept { return m_timer != nullptr; }
    // The GPU times of each band of `slot`'s last transfer, once both its worker and its
    // primary value are reached; from submit()'s thread. Nullopt without gpu_times(), before
    // the slot's first transfer, while that transfer is unfinished (it does not wait for it),
    // once the link has failed, or when reading or calibrating fails. Some drivers idle the
    // device to read queries (lavapipe does), so other work in flight may delay the answer.
    [[nodiscard]] std::optional<std::vector<BandGpuTimes>> read_gpu_times(std::uint32_t slot) const;
    [[nodiscard]] const TransferDesc& desc() const noexcept { return m_desc; }

    // worker_value reached: the worker image may be rewritten.
    [[nodiscard]] const TimelineSemaphore& worker_timeline() const noexcept {
        return *m_worker_timeline;
    }
    // primary_value reached: the primary image holds the result.
    [[nodiscard]] const TimelineSemaphore& primary_timeline() const noexcept {
        return *m_primary_timeline;
    }

    // Size, format, usage and queue families (main + copy queue of that device: concurrent
    // sharing, no ownership transfers) the caller must create images with; OR in the caller's
    // own usage (COLOR_ATTACHMENT, STORAGE). Worker: TRANSFER_SRC | SAMPLED (+ TRANSFER_DST on
    // the same-device path); primary: TRANSFER_DST | SAMPLED.
    // Zero copy: both give the one desc the two images share (the usage of both sides, the
    // families of both devices); its images must come from create_images().
    [[nodiscard]] ImageDesc worker_image_desc(const std::string& name) const;
    [[nodiscard]] ImageDesc primary_image_desc(const std::string& name) const;
    // The two images of `slot`, with the caller's usage ORed into each side's: two images of
    // their own, or for zero copy two images over one allocation (the worker's exported, the
    // primary's imported; each carries the usage of both sides, as both must be created alike),
    // so what the worker writes into its image is the primary's image; reading in place, the
    // primary's is the slot's staging. Throws Error.
    [[nodiscard]] LinkImages create_images(std::uint32_t slot, const std::string& name,
                                           VkImageUsageFlags worker_usage = 0,
                                           VkImageUsageFlags primary_usage = 0) const;
    // True when the primary's slot images are the staging (TransferDesc::read_in_place, where
    // the path and the devices allow it).
    [[nodiscard]] bool reads_in_place() const noexcept {
        return m_backend->primary_reads_staging();
    }
    // True when the worker's slot images are the staging (TransferDesc::write_in_place, where
    // the path and the devices allow it): submit them in GENERAL.
    [[nodiscard]] bool writes_in_place() const noexcept {
        return m_backend->worker_writes_staging();
    }
    // The layout the primary image is in once a transfer's primary_value is reached:
    // SHADER_READ_ONLY_OPTIMAL, or GENERAL when reads_in_place().
    [[nodiscard]] VkImageLayout primary_layout_after() const noexcept {
        return reads_in_place() ? VK_IMAGE_LAYOUT_GENERAL
                                : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    // Layout the worker image is in once worker_value is reached, given the layout it was
    // submitted in: GENERAL and SHADER_READ_ONLY_OPTIMAL stay, anything else becomes
    // TRANSFER_SRC_OPTIMAL (same-device path with one image, and zero copy:
    // SHADER_READ_ONLY_OPTIMAL).
    [[nodiscard]] VkImageLayout worker_layout_after(VkImageLayout worker_layout,
                                                    bool same_image = false) const noexcept {
        return BandRecorder::worker_layout_after(m_path, worker_layout, same_image);
    }

    // Non-blocking, never throws. Moves `worker_image` (layout `worker_layout`, written by worker
    // work that signals `worker_wait` — semaphore VK_NULL_HANDLE for none) into `primary_image`
    // of `slot` (previous layout `primary_layout`, UNDEFINED the first time). When primary_value
    // is reached the primary image is in SHADER_READ_ONLY_OPTIMAL, visible to the primary's main
    // queue family. For the same-device path worker and primary are one Device and
    // worker_image == primary_image is allowed. For the zero-copy path the two images must be
    // one create_images() pair, and the worker image is then in SHADER_READ_ONLY_OPTIMAL too.
    // VK_SUCCESS; VK_NOT_READY when `slot` is out of range or its previous transfer has not
    // reached its primary value (nothing is submitted); VK_ERROR_* when the link has failed or a
    // submission failed (the link is then failed()).
    [[nodiscard]] VkResult submit(std::uint32_t slot, VkImage worker_image,
                                  VkImageLayout worker_layout, VkSemaphoreSubmitInfo worker_wait,
                                  VkImage primary_image, VkImageLayout primary_layout,
                                  TransferTicket& out);
    // Current value of the primary timeline (non-blocking).
    [[nodiscard]] VkResult completed_primary_value(std::uint64_t& out) const noexcept;
    // True when a batch of the primary may wait GPU-side for `primary_value` now: the batch that
    // signals it is on the primary's queue with nothing left for a host thread to do first
    // (always without a host bridge; with one, once the bridge submitted it, or once it was
    // reached). A wait submitted earlier could precede its signal, which a failed bridge would
    // then never submit. Any thread; non-blocking.
    [[nodiscard]] bool may_wait_for(std::uint64_t primary_value) const noexcept;
    // The link is leaving use: stops handing bands on (a bridge detaches; once this returns no
    // band is handed on any more) and returns the values after which the GPU no longer uses it:
    // the worker timeline at the last value submitted to it, the primary timeline at the last
    // one whose batch was queued. The bands already handed to a bridge go on for up to
    // `hand_off_wait` first (a runtime's stop lets the work it submitted arrive; a retirement
    // waits for nothing). Once submit() is no longer called (synchronised with it).
    [[nodiscard]] std::vector<RetirePoint>
    quiesce(std::chrono::milliseconds hand_off_wait = std::chrono::milliseconds(0)) noexcept;
    // Bridge timeout, host-step failure, failed submission (e.g. device lost): the link moves
    // nothing more; error() says why in a sentence. Another link's failure on the same bridge
    // thread fails this one only when it was the pair's device that failed (PairBridge).
    [[nodiscard]] bool failed() const noexcept;
    [[nodiscard]] std::string error() const;
    // Why the last submit() answered VK_NOT_READY, in a sentence with its values (any thread;
    // empty before the first such answer).
    [[nodiscard]] std::string not_ready_reason() const;

private:
    struct Slot {
        std::uint64_t primary_value = 0; // of the last transfer through this slot
        std::uint64_t worker_value = 0;  // of the same transfer
        // Signalled when the worker's batches of that transfer complete (two devices only);
        // pending from their submit until the slot's next submit sees it.
        Handle<VkFence> worker_fence;
        bool worker_fence_pending = false;
    };
    // The slot's previous transfer done on both sides (VK_NOT_READY, noted, when not yet).
    [[nodiscard]] VkResult check_slot_free(Slot& slot) noexcept;
    // Submits the worker's side of the recorded transfer in `slot`: one batch per band, the
    // first waiting on `worker_wait`; on the same device its one batch signals `primary_value`.
    [[nodiscard]] VkResult submit_worker_side(std::uint32_t slot,
                                              const VkSemaphoreSubmitInfo& worker_wait,
                                              std::uint64_t first_value,
                                              std::uint64_t primary_value) noexcept;
    [[nodiscard]] ImageDesc zero_copy_image_desc(const std::string& name) const;
    void note_not_ready(int kind, std::uint64_t a, std::uint64_t b) noexcept;
    void drain() noexcept;

    const Device* m_worker;
    const Device* m_primary;
    TransferDesc m_desc;
    TransferPath m_path;
    std::unique_ptr<TransferPathBackend> m_backend;
    std::unique_ptr<TimelineSemaphore> m_worker_timeline;  // on the worker
    std::unique_ptr<TimelineSemaphore> m_primary_timeline; // on the primary
    std::unique_ptr<LinkFailure> m_failure;
    std::unique_ptr<BandGpuTimer> m_timer; // with gpu_times() only
    std::unique_ptr<BandRecorder> m_recorder;
    std::unique_ptr<HandOff> m_hand_off; // null on the same-device path
    std::vector<Slot> m_slots;
    std::uint64_t m_worker_value = 0; // last value submitted to the worker timeline
    std::uint64_t m_primary_value = 0;
    // The last VK_NOT_READY: 1 = the slot's previous transfer unfinished (a: done, b: needed),
    // 2 = the bridge's queue full (a: pending, b: bands), 3 = the worker's side of the slot's
    // previous transfer not complete on the worker (a: its worker value); 0 = none yet.
    std::atomic<int> m_not_ready_kind{0};
    std::atomic<std::uint64_t> m_not_ready_a{0};
    std::atomic<std::uint64_t> m_not_ready_b{0};
};

} // namespace tandem::detail
