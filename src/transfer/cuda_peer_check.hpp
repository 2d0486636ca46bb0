// CUDA peer check: moves one known RGBA8 image from the worker GPU to the primary GPU the way a
// CUDA peer path would, and verifies it byte for byte on the primary. For NVIDIA pairs whose
// pair matrix has the CUDA peer entry (PairInfo::cuda_peer); Tandem does not negotiate this
// path yet, and this is how it is checked on a machine that has one
// (tandem-bench-transfer --cuda-check, test_cuda_peer_check).
//
// The chain, each step on its own GPU:
//   worker Vulkan: the image -> an exportable device-local buffer, released to
//     VK_QUEUE_FAMILY_EXTERNAL, signalling an exportable timeline;
//   worker CUDA (the buffer and the timeline imported as opaque fds): waits for that value,
//     peer-copies the buffer into cuMemAlloc memory on the primary GPU (a peer copy between two
//     Vulkan-imported buffers took a slow path on the H200s, 34-36 GB/s against 352-389 into
//     CUDA-native memory, so it bounces through CUDA memory on the primary side);
//   primary CUDA: copies that into the primary's imported buffer, signals the primary's
//     imported timeline;
//   primary Vulkan: waits for it GPU-side, acquires the buffer, copies it into the primary image.
// The host orders the two CUDA streams (it synchronises the worker's before the primary's
// starts): a check of the path, not yet a pipelined transfer.
// The host sees the primary's value by polling the counter (a thread blocked in
// vkWaitSemaphores on a CUDA-signalled timeline woke about 10 ms late on the H200s).
//
// Threads: one call at a time per pair of devices; both devices idle otherwise. Blocking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "tandem/device_info.hpp"

namespace tandem::detail {

struct CudaPeerCheck {
    bool ran = false;     // false: skipped, `reason` says why (the pair matrix's words)
    bool one_gpu = false; // both adapters were one GPU: a copy within it stood in for the peer copy
    bool verified = false; // every run's primary image equalled the worker's, byte for byte
    std::string reason;    // why skipped, or what failed (empty when verified)
    std::uint32_t runs = 0;
    std::uint64_t bytes = 0;
    // Per run: the whole chain, from the worker's submission to the primary image's copy seen
    // complete on the host (us); and the peer copy alone, timed on the host around a stream
    // synchronisation (GB/s, 10^9 bytes per second).
    std::vector<double> chain_us;
    std::vector<double> peer_gbps;
    // Per run, the ceiling measured in the same run: the same CUDA copy (same size, same GPUs,
    // same stream) between two cuMemAlloc buffers, with no Vulkan memory or synchronisation
    // involved (us and GB/s).
    std::vector<double> plain_us;
    std::vector<double> plain_gbps;
};

// Runs the check `runs` times over a width x height RGBA8 image (a fresh pattern each run, the
// primary image poisoned before each). With `one_gpu_too`, two openings of one NVIDIA GPU (no
// CUDA peer entry: nothing to copy between peers) run the same chain with a copy within the GPU
// in place of the peer copy, which checks every other step on a machine with one GPU. Never
// throws: a failure is `ran` with `reason`.
[[nodiscard]] CudaPeerCheck run_cuda_peer_check(const Device& worker, const Device& primary,
                                                const PairInfo& pair, std::uint32_t width,
                                                std::uint32_t height, std::uint32_t runs,
                                                bool one_gpu_too = false);

} // namespace tandem::detail
