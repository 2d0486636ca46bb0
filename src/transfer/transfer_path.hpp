// TransferPathBackend: one way of moving an image from a worker device to the primary device,
// band by band, through a staging region per slot. The worker side records a copy of a band of
// the worker image into the slot's staging; an optional host step (host copy's memcpy, run on the
// bridge thread) moves the band between the devices' buffers; the primary side records a copy of
// the band from staging into the primary image. Each concrete path owns its staging memory and
// handles row pitch and alignment itself (StagingLayout), so callers only name slots and bands.
//
// Image layouts are the caller's (BandRecorder's) business: record_worker_band expects the
// worker image in TRANSFER_SRC_OPTIMAL or GENERAL, record_primary_band the primary image in
// TRANSFER_DST_OPTIMAL. Both sides' commands run on their device's copy queue
// (link_copy_queue.hpp). The paths record the buffer barriers that make a band's bytes reach the
// other device; the semaphore between the sides is the caller's (the link's hand-off). The
// exception is ZeroCopyPath (zero_copy_path.hpp): no staging, the two images share memory, and its
// one band hands the image over (any layout in, SHADER_READ_ONLY_OPTIMAL out) instead of copying
// it; BandRecorder records none of its own image barriers for it. SameDevicePath records its whole
// transfer itself (record_transfer).
//
// Threads: construction (set-up) may throw tandem::Error; record_* and host_step never throw.
// host_step may run on another thread than record_*, for different bands or slots at once.
// Lifetime: destroy only after both devices finished every transfer that used it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/memory_pool.hpp"
#include "tandem/device_info.hpp"
#include "transfer/staging_copier.hpp"

namespace tandem::detail {

// Rows [first_row, first_row + rows) of the image, stored at `offset` bytes into a slot region.
struct Band {
    std::uint32_t index = 0;
    std::uint32_t first_row = 0;
    std::uint32_t rows = 0;
    VkDeviceSize offset = 0;
    VkDeviceSize bytes = 0; // rows * row_pitch
};

// Where each slot's image bytes live in a staging buffer: rows padded to a pitch both devices
// copy well, bands at aligned offsets, slots at aligned offsets.
struct StagingLayout {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    VkFormat format = VK_FORMAT_UNDEFINED;
    std::uint32_t texel_bytes = 0;
    std::uint32_t row_texels = 0; // VkBufferImageCopy::bufferRowLength
    VkDeviceSize row_pitch = 0;   // row_texels * texel_bytes
    std::uint32_t band_rows = 0;  // rows of the tallest band
    std::uint32_t band_count = 0;
    std::vector<std::uint32_t> band_first_rows; // band_count + 1 entries, the last one the height
    std::vector<VkDeviceSize> band_offsets;     // band_count entries, from a slot's start
    std::uint32_t slots = 0;
    VkDeviceSize slot_stride = 0; // bytes between the starts of consecutive slot regions
    VkDeviceSize total_bytes = 0; // slots * slot_stride

    [[nodiscard]] Band band(std::uint32_t index) const noexcept;
    [[nodiscard]] VkDeviceSize slot_offset(std::uint32_t slot) const noexcept {
        return slot_stride * slot;
    }
    // Bytes of the image itself (width * height * texel size, no padding).
    [[nodiscard]] VkDeviceSize image_bytes() const noexcept {
        return VkDeviceSize{width} * height * texel_bytes;
    }
};

// Band height a path picks when the caller leaves it to the path: the whole image up to
// 2 MiB, else bands of at least `min_band_bytes` and at most `max_bands` bands, so a download
// of one band overlaps the upload of the last. What a band costs decides the two. On the
// H200s (docs/performance-history.md), at 1920x1080: with a submission per band on the primary
// (BandHandOff::Submit, about 10 us of copy-engine time a band), 4 bands of 2 MiB gave the
// lowest latency (0.78-0.80x the raw copies, against 0.95 with 2 bands and 0.85 with 8); with
// the primary's copies submitted ahead and released by a host signal (BandHandOff::Signal), 5
// bands beat 4 by 3-5 us in each of four comparisons, and 6 or more were slower again.
struct BandDefaults {
    VkDeviceSize min_band_bytes;
    std::uint32_t max_bands;
};
inline constexpr VkDeviceSize k_whole_image_below_bytes = 2u << 20;
inline constexpr BandDefaults k_submitted_bands{2u << 20, 4};
inline constexpr BandDefaults k_gated_bands{3u << 19, 5}; // 1.5 MiB
[[nodiscard]] std::uint32_t default_band_rows(std::uint32_t height, VkDeviceSize row_pitch,
                                              BandDefaults defaults = k_submitted_bands);

// Layout for `slots` copies of a width x height image of `format` in bands of `band_rows` (0:
// default_band_rows with `defaults`; clamped to the height), or, when `band_heights` is not empty,
// in bands of those heights, top to bottom (each at least 1, summing to the height, at most 16384
// of them; else Error). Row pitch is a multiple of every `row_alignment` and of the texel size;
// band and slot offsets of every `offset_alignment` and the texel size; slot offsets also of
// `slot_alignment` (e.g. non-coherent atom size), and slots are at least `min_slot_bytes` apart.
// Throws Error for a size or format Tandem does not move.
[[nodiscard]] StagingLayout make_staging_layout(
    std::uint32_t width, std::uint32_t height, VkFormat format, std::uint32_t slots,
    std::uint32_t band_rows, VkDeviceSize row_alignment, VkDeviceSize offset_alignment,
    VkDeviceSize slot_alignment = 1, BandDefaults defaults = k_submitted_bands,
    std::span<const std::uint32_t> band_heights = {}, VkDeviceSize min_slot_bytes = 0);

// A side of a transfer path.
enum class StagingSide { Worker, Primary };

// What a linear image needs of the memory it is bound to, to be read in place in a path's
// staging (HostImportedPath::probe_in_place): its rows `row_pitch` bytes apart, `size` bytes
// from a multiple of `alignment`, in one of `memory_type_bits`.
struct InPlaceImage {
    VkDeviceSize row_pitch = 0;
    VkDeviceSize size = 0;
    VkDeviceSize alignment = 0;
    std::uint32_t memory_type_bits = 0;
};

// The layout a path between `worker` and `primary` uses (alignments of both devices). With
// `in_place`, each slot holds such an image: rows exactly its pitch apart (a multiple of the
// texel size, at least a row's bytes; the devices' optimal alignments are hints it overrides),
// slots at least its size apart and at multiples of its alignment.
[[nodiscard]] StagingLayout staging_layout_for(const DeviceInfo& worker, const DeviceInfo& primary,
                                               std::uint32_t width, std::uint32_t height,
                                               VkFormat format, std::uint32_t slots,
                                               std::uint32_t band_rows,
                                               BandDefaults defaults = k_submitted_bands,
                                               std::span<const std::uint32_t> band_heights = {},
                                               const InPlaceImage* in_place = nullptr);

class TransferPathBackend {
public:
    TransferPathBackend(const Device& worker, const Device& primary, const StagingLayout& layout)
        : m_worker(&worker), m_primary(&primary), m_layout(layout) {}
    virtual ~TransferPathBackend() = default;
    TransferPathBackend(const TransferPathBackend&) = delete;
    TransferPathBackend& operator=(const TransferPathBackend&) = delete;

    [[nodiscard]] virtual TransferPath kind() const noexcept = 0;
    [[nodiscard]] const StagingLayout& layout() const noexcept { return m_layout; }
    [[nodiscard]] const Device& worker() const noexcept { return *m_worker; }
    [[nodiscard]] const Device& primary() const noexcept { return *m_primary; }

    // Worker side (worker copy queue): copy `band` of `image` (in `layout`, TRANSFER_SRC_
    // OPTIMAL or GENERAL) into `slot`'s staging and make it available to the other side. Band 0
    // must be recorded (and submitted) before the slot's other bands: its commands order the
    // slot's staging after the slot's previous transfer for all of them.
    virtual void record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                    VkImage image, VkImageLayout layout) const = 0;
    // Host step between the sides, run after the worker's band completed and before the primary
    // reads it (host copy's memcpy). VK_SUCCESS or the failing call's result; never throws.
    [[nodiscard]] virtual bool has_host_step() const noexcept { return false; }
    [[nodiscard]] virtual VkResult host_step(std::uint32_t /*slot*/,
                                             const Band& /*band*/) const noexcept {
        return VK_SUCCESS;
    }
    // A sentence for the last host_step that failed, when the path has more to say than its
    // VkResult (the CUDA error); empty otherwise.
    [[nodiscard]] virtual std::string host_step_error() const { return {}; }
    // The copies between the stagings queued on a StagingStream ordered by `worker_timeline`
    // (exportable, on the worker) and `gate` (exportable, on the primary), so that no host thread
    // sits between the sides (StreamHandOff): the cuda-peer path's; null for the others (and
    // has_stream() false). Throws Error when the path has one but cannot make it here.
    [[nodiscard]] virtual bool has_stream() const noexcept { return false; }
    [[nodiscard]] virtual std::unique_ptr<StagingStream>
    make_stream(const TimelineSemaphore& /*worker_timeline*/, TimelineSemaphore& /*gate*/) const {
        return nullptr;
    }
    // True when the stream signals its gate from the host (a test's stand-in for CUDA).
    [[nodiscard]] virtual bool stream_signals_from_host() const noexcept { return false; }
    // True when the primary's slot images are the staging itself (HostImportedPath reading in
    // place): the primary's side copies nothing and records its own barrier, the image staying
    // in GENERAL, so BandRecorder changes none of its layouts.
    [[nodiscard]] virtual bool primary_reads_staging() const noexcept { return false; }
    // The same for the worker's slot images (HostImportedPath written in place): the worker's
    // work writes the staging, its side copies nothing and record_worker_band expects the image
    // in GENERAL (any other layout it changes to GENERAL, which keeps the contents).
    [[nodiscard]] virtual bool worker_writes_staging() const noexcept { return false; }
    // Primary side (primary copy queue): copy `band` from `slot`'s staging into `image`
    // (TRANSFER_DST_OPTIMAL; GENERAL when primary_reads_staging(), where it copies nothing).
    virtual void record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                                     VkImage image) const = 0;

protected:
    // The VkBufferImageCopy of `band` at `slot` in this layout.
    [[nodiscard]] VkBufferImageCopy band_region(std::uint32_t slot,
                                                const Band& band) const noexcept;
    // The worker-side copy every staging path shares: for band 0, orders the slot's writes
    // after earlier copies into the slot's range of `staging`; then copies `band` of `image`
    // into it. Returns the region; the caller adds the barrier that hands the band over.
    VkBufferImageCopy record_band_download(VkCommandBuffer cmd, VkBuffer staging,
                                           std::uint32_t slot, const Band& band, VkImage image,
                                           VkImageLayout layout) const noexcept;

private:
    const Device* m_worker;
    const Device* m_primary;
    StagingLayout m_layout;
};

// The path to use for `pair`: `forced` when given (throws Error quoting the pair matrix's reason
// when the pair does not allow it), else the best the pair allows.
[[nodiscard]] TransferPath negotiate_path(const PairInfo& pair, std::optional<TransferPath> forced);

// Builds the staging resources of `path` between `worker` and `primary` (one Device for
// SameDevice); the cuda-peer path copies with `cuda_copier` when given (tests), else with CUDA.
// Throws Error when the devices refuse what the path needs.
[[nodiscard]] std::unique_ptr<TransferPathBackend>
make_transfer_path(TransferPath path, const Device& worker, const Device& primary,
                   const StagingLayout& layout, const StagingCopierFactory& cuda_copier = {});

// A buffer of `size` bytes whose memory comes from outside the device (`handle`: an opaque fd
// or a host allocation): the buffer only, memory is bound by the caller. Named `name`.
[[nodiscard]] Handle<VkBuffer> create_external_buffer(const Device& device, VkDeviceSize size,
                                                      VkBufferUsageFlags usage,
                                                      VkExternalMemoryHandleTypeFlagBits handle,
                                                      const std::string& name);

} // namespace tandem::detail
