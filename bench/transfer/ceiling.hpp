// The ceiling a transfer path is compared with, measured in the same run on the same devices: a
// plain vkCmdCopyBuffer of the same byte count, device-local -> host-visible (download, "d2h")
// and host-visible -> device-local (upload, "h2d"), on the device's transfer queue.
// Throughput: `batch` back-to-back copies in one submission. Latency: one copy, submitted ahead
// and released by a host signal after `lead`; both timed by host clock from that signal to the
// observed completion. Data verified after the timed runs. Benchmark thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "bench_util.hpp"
#include "core/device.hpp"

namespace tandem::bench {

enum class Direction { DeviceToHost, HostToDevice };
[[nodiscard]] const char* to_string(Direction d) noexcept;

struct CopyCeiling {
    Stats gbps;       // throughput of `batch` copies
    Stats latency_us; // one copy
    bool verified = false;
    VkMemoryPropertyFlags host_memory_flags = 0; // of the host-visible side
};

// The timing both ceilings share: `many` (`batch` transfers of `bytes`) and `single` (one),
// each submitted to `queue` waiting for a host signal, released and spun on; after a warm-up of
// each, `runs` times: the batch's GB/s, and the single's latency released `lead` after its
// submission. `what` names the measurement in errors. Throws Error on a failed call or a hang.
struct ReleasedCopyTimes {
    Stats gbps;
    Stats latency_us;
};
[[nodiscard]] ReleasedCopyTimes
time_released_copies(const detail::Device& device, const detail::Queue& queue,
                     VkCommandBuffer single, VkCommandBuffer many, VkDeviceSize bytes,
                     std::uint32_t batch, std::uint32_t runs, std::chrono::microseconds lead,
                     const std::string& what);

// `ring`: the batch's copies cycle through this many pairs of buffers (1: every copy between
// the same two, which stay in the CPU's caches when the device is one; a stream of frames in
// flight touches a buffer per frame).
[[nodiscard]] CopyCeiling measure_copy_ceiling(const detail::Device& device, Direction direction,
                                               VkDeviceSize bytes, std::uint32_t batch,
                                               std::uint32_t runs, std::chrono::microseconds lead,
                                               std::uint32_t ring = 1);

// The same measurement with an optimally tiled RGBA8 image of `extent` on the device side
// (vkCmdCopyImageToBuffer / vkCmdCopyBufferToImage): what the paths' copies can reach at best,
// reported next to the ceiling so a gap between the two is seen as the image copies' own.
[[nodiscard]] CopyCeiling measure_image_copy(const detail::Device& device, Direction direction,
                                             VkExtent2D extent, std::uint32_t batch,
                                             std::uint32_t runs, std::chrono::microseconds lead);

} // namespace tandem::bench

namespace tandem::bench {

// What cutting one copy of `bytes` (device -> host when `download`, else host -> device) into
// `bands` pieces costs the device's transfer queue, by how the pieces are told apart: one
// submission per piece, each signalling a timeline value (as TransferLink's bands are); one
// submission with an event set after each piece (only where the transfer queue's family has
// graphics or compute: vkCmdSetEvent2 is not allowed on a transfer-only family, and events_us is
// then empty); one submission with only barriers between the pieces; one submission per piece
// with the pieces alternating between the device's two copy engines (QueueRole::Transfer and
// SecondTransfer; one queue when it has only one), all released at once. Each: the latency of the
// whole, from the host's release to the observed completion (median of `runs`); with a submission
// per piece, also when the first piece is seen. Diagnostic: it explains what a band costs on a
// given device.
struct BandSplitCost {
    Stats submissions_us;
    Stats events_us;
    Stats barriers_us;
    Stats two_queues_us;
    Stats first_piece_us; // one submission per piece: when the first piece's value is seen
};
[[nodiscard]] BandSplitCost measure_band_split(const detail::Device& device, VkDeviceSize bytes,
                                               std::uint32_t bands, bool download,
                                               std::uint32_t runs, std::chrono::microseconds lead);

// Whether the worker's download and the primary's upload slow each other down when they run at
// once, as a banded transfer's do: one copy of `bytes` device -> host on `worker` and host ->
// device on `primary` (each device its own host-visible buffer), timed alone and released
// together (one host signal right after the other), each from its release to its observed
// completion (median of `runs`). Diagnostic.
struct ConcurrentCopies {
    Stats d2h_alone_us;
    Stats h2d_alone_us;
    Stats d2h_together_us;
    Stats h2d_together_us;
};
[[nodiscard]] ConcurrentCopies measure_concurrent_copies(const detail::Device& worker,
                                                         const detail::Device& primary,
                                                         VkDeviceSize bytes, std::uint32_t runs,
                                                         std::chrono::microseconds lead);

} // namespace tandem::bench
