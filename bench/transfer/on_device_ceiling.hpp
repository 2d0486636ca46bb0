// The ceiling of a device-local transfer path (same-device, shared-memory): the path's own copies
// of an RGBA8 image of `extent`, done within one device on one queue with nothing between them,
// measured in the same run. ImageToImage is the same-device path's one copy; ThroughBuffer is
// the shared-memory path's two (image -> device-local buffer -> image), which that path splits
// between the worker's and the primary's opening of the GPU. Throughput: `batch` transfers in
// one submission; latency: one, released by a host signal after `lead`; both timed by host
// clock. The destination is read back and compared after the timed runs. Benchmark thread only.
#pragma once

#include <chrono>
#include <cstdint>

#include "ceiling.hpp"
#include "core/device.hpp"

namespace tandem::bench {

enum class OnDeviceCopy { ImageToImage, ThroughBuffer };
[[nodiscard]] const char* to_string(OnDeviceCopy copy) noexcept;

[[nodiscard]] CopyCeiling measure_on_device_copy(const detail::Device& device,
                                                 detail::QueueRole queue, OnDeviceCopy copy,
                                                 VkExtent2D extent, std::uint32_t batch,
                                                 std::uint32_t runs,
                                                 std::chrono::microseconds lead);

} // namespace tandem::bench
