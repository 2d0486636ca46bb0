// The pair's pipelined ceiling: what a stream of frames can reach from one device to another on
// one transfer path with nothing of Tandem's runtime in between. The path's own staging and band
// copies (one band per frame: the whole image), `slots` frames in flight (each into a target of
// its slot), and the least work
// between the sides the pair allows: where the pair shares a timeline semaphore and the path has
// no host step, every frame is submitted ahead and the receiver's copy waits GPU-side for the
// sender's (and the sender's for the receiver to have read the slot); otherwise one host thread
// spins on both timelines and submits each side the moment it may (running the path's host step
// in between). Throughput is the frames' bytes over the time from the end of a warm-up tenth to
// the last frame's arrival, so it counts what min(download, upload) leaves out: the two sides
// taking turns, the hand-off between the devices, two contexts sharing one GPU. Each slot's target
// is compared with the sender's image at the end. Benchmark thread only; throws tandem::Error.
#pragma once

#include <cstdint>
#include <string>

#include "bench_util.hpp"
#include "core/device.hpp"
#include "tandem/device_info.hpp"

namespace tandem::bench {

struct PairPipeline {
    Stats gbps;
    Stats frames_per_s;
    bool gpu_side = false; // the receiver waited GPU-side (else the host handed each frame on)
    bool verified = false; // every slot's last frame arrived byte for byte
};

// Whether measure_pair_pipeline drives `path`: the paths through staging without a copy stream
// of their own (not same-device, zero-copy or cuda-peer).
[[nodiscard]] bool pair_pipeline_drives(TransferPath path) noexcept;

// `runs` streams of `frames` RGBA8 frames of `extent` from `sender` to `receiver` on `path`
// (which `pair`, sender -> receiver, must allow), `slots` in flight, each landing in its slot's
// own target image.
[[nodiscard]] PairPipeline measure_pair_pipeline(const detail::Device& sender,
                                                 const detail::Device& receiver,
                                                 const PairInfo& pair, TransferPath path,
                                                 VkExtent2D extent, std::uint32_t slots,
                                                 std::uint32_t frames, std::uint32_t runs);

} // namespace tandem::bench
