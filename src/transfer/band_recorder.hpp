// BandRecorder: each slot's command buffers of one link, and what they hold for one transfer on
// the link's path and staging layout. Per band, the worker's command buffer (the band of the
// worker image into the slot's staging, on the worker's copy queue) and the primary's (staging
// into the primary image, on the primary's copy queue), with the image barriers around them: the
// worker image into a copy source and the primary image (old contents discarded) into a copy
// destination ahead of band 0, the primary image into SHADER_READ_ONLY_OPTIMAL after the last
// band. The path records what hands each band between the devices (shared memory's queue-family
// release to and acquire from VK_QUEUE_FAMILY_EXTERNAL, the host paths' host-access barriers);
// zero copy's one band is its path's external release and acquire of the image, with no copy and
// no image barrier of the recorder's; a primary image that is the staging itself
// (TransferPathBackend::primary_reads_staging) gets no barrier of the recorder's on the
// primary's side either, only its path's. The same-device path is one command buffer, the whole
// transfer (SameDevicePath::record_transfer), and no primary side. With a BandGpuTimer, every
// band's copies are timestamped on both sides.
//
// Threads: record() from the link's submit() thread, once the slot's previous transfer has
// completed on both devices; the hand-offs read a slot's command buffers (any thread) between a
// record() and the slot's next. Lifetime: destroy once both devices finished the transfers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/resources.hpp"
#include "sync/timeline_semaphore.hpp"
#include "transfer/band_gpu_timer.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

// The layout a worker image is copied from: GENERAL and TRANSFER_SRC_OPTIMAL as they are,
// anything else TRANSFER_SRC_OPTIMAL.
[[nodiscard]] VkImageLayout copy_source_layout(VkImageLayout layout) noexcept;
// The image barriers of a transfer. `image` (in `layout`, written by earlier work on any queue
// of its device, ordered by the caller's semaphore or by submission order) into a copy source.
void record_to_copy_source(VkCommandBuffer cmd, VkImage image, VkImageLayout layout) noexcept;
// `image` from UNDEFINED (its contents discarded: its readers finished before the slot came
// back) into TRANSFER_DST_OPTIMAL.
void record_to_copy_destination(VkCommandBuffer cmd, VkImage image) noexcept;
// `image`, copied into, from TRANSFER_DST_OPTIMAL into SHADER_READ_ONLY_OPTIMAL.
void record_to_sampled(VkCommandBuffer cmd, VkImage image) noexcept;

class BandRecorder {
public:
    // `timer` (may be null) outlives the recorder. Throws Error (set-up).
    BandRecorder(const TransferPathBackend& path, std::uint32_t slots, const std::string& name,
                 const BandGpuTimer* timer);

    // Bands per transfer: the layout's; 1 for the same-device and zero-copy paths.
    [[nodiscard]] std::uint32_t bands() const noexcept { return m_bands; }
    // Resets `slot`'s command pools and records one transfer of `worker_image` (in
    // `worker_layout`) into `primary_image`: an image in SHADER_READ_ONLY_OPTIMAL is copied and
    // left in it. VK_SUCCESS or the failing call's result.
    [[nodiscard]] VkResult record(std::uint32_t slot, VkImage worker_image,
                                  VkImageLayout worker_layout, VkImage primary_image) noexcept;
    [[nodiscard]] const std::vector<VkCommandBuffer>& worker_cmds(std::uint32_t slot) const {
        return m_slots[slot].worker_cmds;
    }
    // Empty on the same-device path.
    [[nodiscard]] const std::vector<VkCommandBuffer>& primary_cmds(std::uint32_t slot) const {
        return m_slots[slot].primary_cmds;
    }
    // Layout the worker image is in after a transfer that found it in `worker_layout`.
    [[nodiscard]] static VkImageLayout
    worker_layout_after(TransferPath path, VkImageLayout worker_layout, bool same_image) noexcept;

private:
    struct Slot {
        CommandPool worker_pool;
        CommandPool primary_pool;
        std::vector<VkCommandBuffer> worker_cmds;  // one per band
        std::vector<VkCommandBuffer> primary_cmds; // one per band
    };
    [[nodiscard]] VkResult record_band(std::uint32_t slot, std::uint32_t band, VkImage worker_image,
                                       VkImageLayout worker_layout, VkImage primary_image) noexcept;

    const TransferPathBackend* m_path;
    const BandGpuTimer* m_timer;
    std::uint32_t m_bands;
    std::vector<Slot> m_slots;
};

// One batch per band: band b's command buffer, waiting on (`wait`) or signalling `semaphore` at
// first_value + b. Not copyable: the submit infos point into the other two vectors.
struct BandBatches {
    BandBatches(const std::vector<VkCommandBuffer>& band_cmds, const TimelineSemaphore& semaphore,
                std::uint64_t first_value, bool wait);
    BandBatches(const BandBatches&) = delete;
    BandBatches& operator=(const BandBatches&) = delete;
    std::vector<VkCommandBufferSubmitInfo> cmds;
    std::vector<VkSemaphoreSubmitInfo> semaphores;
    std::vector<VkSubmitInfo2> submits;
};

} // namespace tandem::detail
