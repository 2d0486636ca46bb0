// TransferLink: moves results from one worker device to the primary device through a negotiated
// (or forced) transfer path, with a ring of `slots` staging regions and command buffers, band by
// band, synchronised with timeline semaphores whose values only grow.
//
// One submit() for slot s: the worker's transfer queue waits for the caller's semaphore, copies
// each band of the worker image into slot s's staging and signals the worker timeline once per
// band (worker_value is the last band's value). The primary's transfer queue then copies each
// band into the primary image; after the last band the image is in SHADER_READ_ONLY_OPTIMAL and
// the primary timeline is signalled (primary_value). Between the sides: GPU-side, when the pair
// shares a semaphore (PairInfo::gpu_side_sync), the primary's bands are submitted at once and
// wait on the imported worker timeline; host-bridged otherwise, a HostBridge thread per link
// waits for each band's worker value, runs the path's host step (host copy's memcpy) and submits
// that band's primary copy. Either way band k's upload overlaps band k+1's download. Same-device
// path: one submission on the device's transfer queue, no staging, no copy when the worker image
// is the primary image. Zero-copy path: the slot's worker and primary images share one
// allocation (create_images), and its one band copies nothing: the worker's side releases the
// image to VK_QUEUE_FAMILY_EXTERNAL, the primary's acquires it, with the same timelines.
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
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/resources.hpp"
#include "sync/host_bridge.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/device_info.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

// How a host bridge hands each band to the primary. Submit (the default): once the worker has
// finished a band, the bridge submits the primary's copy of it (with any later bands finished
// too). Signal: the primary's copies of every band are submitted with the worker's side, each
// waiting on a gate semaphore of the primary that the bridge signals from the host as the worker
// finishes the band; a host signal wakes a waiting queue within microseconds where a submission
// takes tens, so a banded transfer's latency drops, but the primary's transfer queue holds the
// waiting copies from submit() until the worker has finished, and whatever else is submitted
// to that queue meanwhile waits as long. For a link that has the primary's transfer queue to
// itself. If the bridge ends early (timeout, failure, destruction) the gate is opened so no copy
// waits forever: the primary value is then reached over unfinished data, and failed(), set
// before, says so; check failed() after seeing the value.
enum class BandHandOff { Submit, Signal };
[[nodiscard]] const char* to_string(BandHandOff hand_off) noexcept;

struct TransferDesc {
    std::uint32_t width = 0, height = 0;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    std::uint32_t slots = 3;
    std::uint32_t band_rows = 0; // 0: the path chooses (whole image when small)
    // Band heights, top to bottom, adding up to `height` (else the constructor throws Error);
    // when set, they win over band_rows. For measuring band shapes (tandem-bench-transfer
    // --band-heights); the path's even bands measured best on the H200s.
    std::vector<std::uint32_t> band_heights;
    std::optional<TransferPath> forced;      // else negotiated from the PairInfo, best first
    std::chrono::milliseconds timeout{5000}; // bridge wait limit
    // Optional: grows while the worker device makes progress (HostBridge::Options::progress);
    // the bridge then gives up only after `timeout` without progress.
    std::function<std::uint64_t()> worker_progress;
    // How long the bridge polls a pending band without sleeping (HostBridge::Options::spin).
    // Unset: 1000 us on a machine with cores to spare (has_spare_cores()), else none.
    std::optional<std::chrono::microseconds> bridge_spin;
    BandHandOff hand_off = BandHandOff::Submit; // host-bridged paths only
    // Host-bridged: called on the bridge thread as each band is handed to the primary (its copy
    // submitted or its gate raised), with the slot and the band. For diagnostics (the transfer
    // benchmark times the hand-offs with it); must be cheap and must not throw.
    std::function<void(std::uint32_t slot, std::uint32_t band)> on_band_handed;
    // Two devices: time each band's copy on both GPUs (a timestamp before and after it), for
    // placing every copy on the host's timeline (read_gpu_times(); tandem-bench-transfer
    // --gpu-times). Used only where both devices have host-timed queries
    // (Device::has_host_timed_queries()) and both transfer queues' families write timestamps;
    // gpu_times() says whether it is. Each timestamp costs the copy engines a few us.
    bool gpu_times = false;
};

// One band of a transfer, timed on the GPUs (TransferDesc::gpu_times): when the worker's copy
// of it and the primary's copy of it began and ended, on the host's steady clock.
struct BandGpuTimes {
    std::chrono::steady_clock::time_point worker_begin, worker_end;
    std::chrono::steady_clock::time_point primary_begin, primary_end;
};

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
    // True when the primary waits GPU-side on the worker's timeline (no bridge thread).
    [[nodiscard]] bool gpu_side_sync() const noexcept { return m_bridge == nullptr; }
    [[nodiscard]] const StagingLayout& layout() const noexcept { return m_backend->layout(); }
    // True when bands are timed on the GPUs (TransferDesc::gpu_times, where the devices allow).
    [[nodiscard]] bool gpu_times() const noexcept { return m_worker_queries.has_value(); }
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

    // Size, format, usage and queue families (main + transfer of that device: concurrent
    // sharing, no ownership transfers) the caller must create images with; OR in the caller's
    // own usage (COLOR_ATTACHMENT, STORAGE). Worker: TRANSFER_SRC | SAMPLED (+ TRANSFER_DST on
    // the same-device path); primary: TRANSFER_DST | SAMPLED.
    // Zero copy: both give the one desc the two images share (the usage of both sides, the
    // families of both devices); its images must come from create_images().
    [[nodiscard]] ImageDesc worker_image_desc(const std::string& name) const;
    [[nodiscard]] ImageDesc primary_image_desc(const std::string& name) const;
    // The two images of one slot, with the caller's usage ORed into each side's: two images of
    // their own, or for zero copy two images over one allocation (the worker's exported, the
    // primary's imported; each carries the usage of both sides, as both must be created alike),
    // so what the worker writes into its image is the primary's image. Throws Error.
    [[nodiscard]] LinkImages create_images(const std::string& name,
                                           VkImageUsageFlags worker_usage = 0,
                                           VkImageUsageFlags primary_usage = 0) const;
    // Layout the worker image is in once worker_value is reached, given the layout it was
    // submitted in: GENERAL stays GENERAL, anything else becomes TRANSFER_SRC_OPTIMAL
    // (same-device path with one image, and zero copy: SHADER_READ_ONLY_OPTIMAL).
    [[nodiscard]] VkImageLayout worker_layout_after(VkImageLayout worker_layout,
                                                    bool same_image = false) const noexcept;

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
    // Bridge timeout, host-step failure, failed submission (e.g. device lost): the link moves
    // nothing more; error() says why in a sentence.
    [[nodiscard]] bool failed() const noexcept;
    [[nodiscard]] std::string error() const;
    // Why the last submit() answered VK_NOT_READY, in a sentence with its values (any thread;
    // empty before the first such answer).
    [[nodiscard]] std::string not_ready_reason() const;

private:
    struct Slot {
        CommandPool worker_pool;
        CommandPool primary_pool;
        std::vector<VkCommandBuffer> worker_cmds;  // one per band
        std::vector<VkCommandBuffer> primary_cmds; // one per band
        std::uint64_t primary_value = 0;           // of the last transfer through this slot
        std::uint64_t worker_value = 0;            // of the same transfer
        // Signalled when the worker's batches of that transfer complete (two devices only);
        // pending from their submit until the slot's next submit sees it.
        Handle<VkFence> worker_fence;
        bool worker_fence_pending = false;
    };
    // Host-bridged, per slot: its current transfer (its band 0's worker value, low 48 bits)
    // and how many of that transfer's bands have been handed to the primary (16 bits; a layout
    // has at most 16384 bands). Set by submit() before the bands are forwarded, then advanced by
    // the bridge thread before each hand-off, since the caller may reuse the slot as soon as the
    // last band's copy lands, while forwards of the finished transfer (skipped, their bands went
    // with an earlier hand-off) are still queued: they see another transfer and do nothing.
    std::unique_ptr<std::atomic<std::uint64_t>[]> m_handed;
    [[nodiscard]] static std::uint64_t handed_state(std::uint64_t first_value,
                                                    std::uint32_t bands) noexcept {
        return (first_value << 16) | bands;
    }
    // Bands of the transfer starting at `first_value` that were handed on through `slot`, or
    // nullopt when the slot carries a later transfer (so this one is complete).
    [[nodiscard]] std::optional<std::uint32_t> handed(std::uint32_t slot,
                                                      std::uint64_t first_value) const noexcept;

    VkResult submit_same_device(Slot& slot, VkImage worker_image, VkImageLayout worker_layout,
                                const VkSemaphoreSubmitInfo& worker_wait, VkImage primary_image,
                                VkImageLayout primary_layout, TransferTicket& out);
    // Host step (if any) and submission of the primary's `band`; the last band signals
    // `primary_value`. On the bridge thread (host-bridged) or in submit() (GPU-side, `wait`).
    VkResult primary_band(std::uint32_t slot, std::uint32_t band, std::uint32_t bands,
                          std::uint64_t primary_value, const VkSemaphoreSubmitInfo* wait) noexcept;
    // Host-bridged, on the bridge thread, once the worker finished `band` (worker value
    // first_value + band): submits the primary's part of that band and of every later band of
    // the transfer the worker has finished too, in one vkQueueSubmit2, so the bridge keeps up
    // with narrow bands. A band already submitted that way is skipped.
    VkResult forward_bands(std::uint32_t slot, std::uint32_t band, std::uint32_t bands,
                           std::uint64_t first_value, std::uint64_t primary_value) noexcept;
    // BandHandOff::Signal, in submit(): every band's primary copy of `slot`, band b waiting on
    // the gate at gate_base + b, the last signalling `primary_value`.
    VkResult submit_gated_copies(Slot& slot, std::uint32_t bands, std::uint64_t primary_value,
                                 std::uint64_t gate_base) noexcept;
    // BandHandOff::Signal, on the bridge thread, once the worker finished `band`: runs the host
    // steps of the bands not yet released and signals the gate up to the last band the worker
    // has finished.
    VkResult release_bands(std::uint32_t slot, std::uint32_t band, std::uint32_t bands,
                           std::uint64_t first_value, std::uint64_t gate_base) noexcept;
    // Calls TransferDesc::on_band_handed for bands [first_band, end_band) of `slot`, if set.
    void report_handed(std::uint32_t slot, std::uint32_t first_band,
                       std::uint32_t end_band) const noexcept;
    // Signals the gate to every value handed out, so no primary copy waits on it any more (the
    // bridge has ended: stop, timeout or failure). On the bridge thread, or once it is joined.
    void open_gate() noexcept;
    // Signals the gate to `value` unless it is open that far already (values only grow, from
    // the bridge thread and from open_gate() on any thread).
    VkResult raise_gate(std::uint64_t value) noexcept;
    // The last band of a transfer whose band 0 is worker value `first_value` that the worker has
    // finished, at least `band`.
    [[nodiscard]] std::uint32_t last_finished_band(std::uint32_t band, std::uint32_t bands,
                                                   std::uint64_t first_value) const noexcept;
    [[nodiscard]] ImageDesc zero_copy_image_desc(const std::string& name) const;
    void fail(VkResult result, const std::string& message) noexcept;
    void note_not_ready(int kind, std::uint64_t a, std::uint64_t b) noexcept;
    void drain() noexcept;

    const Device* m_worker;
    const Device* m_primary;
    TransferDesc m_desc;
    TransferPath m_path;
    std::unique_ptr<TransferPathBackend> m_backend;
    std::unique_ptr<TimelineSemaphore> m_worker_timeline;  // on the worker
    std::unique_ptr<TimelineSemaphore> m_imported_worker;  // on the primary, GPU-side sync only
    std::unique_ptr<TimelineSemaphore> m_primary_timeline; // on the primary
    // BandHandOff::Signal: signalled from the host by the bridge only; the primary's band copies
    // wait on it. Each transfer takes as many values as it has bands (m_gate_next, submit()'s
    // thread); m_gate_assigned is the highest value a copy waits on.
    std::unique_ptr<TimelineSemaphore> m_gate;
    std::uint64_t m_gate_next = 1;
    std::atomic<std::uint64_t> m_gate_assigned{0};
    std::mutex m_gate_mutex;
    std::uint64_t m_gate_raised = 0;      // guarded by m_gate_mutex
    std::unique_ptr<HostBridge> m_bridge; // null with GPU-side sync
    // With gpu_times(): a timestamp before and after each band's copy, per slot, on each device.
    std::optional<TimestampPool> m_worker_queries;
    std::optional<TimestampPool> m_primary_queries;
    std::vector<Slot> m_slots;
    std::uint64_t m_worker_value = 0; // last value submitted to the worker timeline
    std::uint64_t m_primary_value = 0;
    std::atomic<std::uint64_t> m_primary_submitted{0}; // last primary value whose batch was queued
    std::atomic<bool> m_failed{false};
    // The last VK_NOT_READY: 1 = the slot's previous transfer unfinished (a: done, b: needed),
    // 2 = the bridge's queue full (a: pending, b: bands); 0 = none yet.
    std::atomic<int> m_not_ready_kind{0};
    std::atomic<std::uint64_t> m_not_ready_a{0};
    std::atomic<std::uint64_t> m_not_ready_b{0};
    mutable std::mutex m_error_mutex;
    std::string m_error;
};

} // namespace tandem::detail
