// The ceiling a transfer path is compared with, measured in the same run on the same devices: a
// plain vkCmdCopyBuffer of the same byte count, device-local -> host-visible (download, "d2h")
// and host-visible -> device-local (upload, "h2d"), on the device's transfer queue.
// Throughput: `batch` back-to-back copies in one submission. Latency: one copy, submitted ahead
// and released by a host signal after `lead`; both timed by host clock from that signal to the
// observed completion. Data verified after the timed runs. Benchmark thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "bench_util.hpp"
#include "core/device.hpp"

namespace tandem::bench {

enum class Direction { DeviceToHost, HostToDevice };
[[nodiscard]] const char* to_string(Direction d) noexcept;

struct CopyCeiling {
    Stats gbps;        // throughput of `batch` copies, from the release to the last completion
    Stats steady_gbps; // the same batch less its first copy (see ReleasedCopyTimes)
    Stats latency_us;  // one copy
    bool verified = false;
    VkMemoryPropertyFlags host_memory_flags = 0; // of the host-visible side
};

// The timing both ceilings share: `many` (`batch` transfers of `bytes`) and `single` (one),
// each submitted to `queue` waiting for a host signal, released `lead` after its submission and
// spun on; after a warm-up of each, `runs` times: the batch's GB/s, and the single's latency.
// `steady_gbps` pairs each run's batch with its single: (batch - 1) copies over the batch's time
// less one copy's, the rate from the first copy's completion to the last's. That is how a path's
// stream is timed (path_bench.hpp: first completion to last), so the two compare alike.
// `what` names the measurement in errors. Throws Error on a failed call or a hang.
struct ReleasedCopyTimes {
    Stats gbps;
    Stats steady_gbps;
    Stats latency_us;
};
[[nodiscard]] ReleasedCopyTimes
time_released_copies(const detail::Device& device, const detail::Queue& queue,
                     VkCommandBuffer single, VkCommandBuffer many, VkDeviceSize bytes,
                     std::uint32_t batch, std::uint32_t runs, std::chrono::microseconds lead,
                     const std::string& what);

// `ring`: the batch's copies cycle through this many pairs of buffers (1: every copy between
// the same two). 0, the default, takes enough pairs that the batch's buffers hold
// k_uncached_ring_bytes, or one pair a copy: a copy never reads what an earlier copy of the batch
// left in a cache. With one pair, an H200 re-reads the host buffer from its L2 cache (50 MiB):
// 80-84 GB/s host -> device at 8 MiB, above what PCIe 5.0 x16 carries (63 GB/s), and a CPU
// device keeps both buffers in the CPU's caches. A stream of frames touches a buffer per frame.
inline constexpr VkDeviceSize k_uncached_ring_bytes = VkDeviceSize{256} << 20;
[[nodiscard]] std::uint32_t uncached_ring(VkDeviceSize bytes, std::uint32_t batch);
[[nodiscard]] CopyCeiling measure_copy_ceiling(const detail::Device& device, Direction direction,
                                               VkDeviceSize bytes, std::uint32_t batch,
                                               std::uint32_t runs, std::chrono::microseconds lead,
                                               std::uint32_t ring = 0);

// The same measurement with an optimally tiled RGBA8 image of `extent` on the device side
// (vkCmdCopyImageToBuffer / vkCmdCopyBufferToImage), over an uncached ring: what the paths'
// copies can reach at best, reported next to the ceiling so a gap between the two is seen as the
// image copies' own.
[[nodiscard]] CopyCeiling measure_image_copy(const detail::Device& device, Direction direction,
                                             VkExtent2D extent, std::uint32_t batch,
                                             std::uint32_t runs, std::chrono::microseconds lead);

// A ceiling's rate timed as a path's stream is: its steady rate where it has one (CUDA's copy
// does not: its batch rate).
[[nodiscard]] inline double steady_rate(const CopyCeiling& c) noexcept {
    return c.steady_gbps.n > 0 ? c.steady_gbps.median : c.gbps.median;
}

// The PCIe link between `device` and the host, GB/s of payload one way (transfer rate x width x
// 128/130, PCIe 3.0 and later), read from sysfs at the bus address VK_EXT_pci_bus_info gives;
// nothing for a CPU device, a device without the extension, or a link sysfs does not describe.
// A host copy ceiling above it is a measurement error (a cache, not the link), never a ceiling.
struct PcieLink {
    double gbps = 0.0;
    std::string text; // e.g. "32.0 GT/s x16 at 0000:19:00.0"
};
[[nodiscard]] std::optional<PcieLink> pcie_link(const detail::Device& device);

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
