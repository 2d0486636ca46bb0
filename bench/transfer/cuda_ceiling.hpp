// The cuda-peer path's own ceiling, measured in the same run: CUDA's copy of the same bytes from
// cuMemAlloc memory on the worker's GPU into cuMemAlloc memory on the primary's (a peer copy
// between two GPUs, a copy within the GPU when both adapters are one), with no Vulkan memory or
// synchronisation involved. Throughput: `batch` copies queued back to back on the worker's
// stream; latency: one copy; both timed by host clock around the stream's synchronisation.
// Verified: the bytes read back from the primary side equal what was written on the worker's.
// Benchmark thread only. Throws Error when CUDA refuses.
#pragma once

#include <cstdint>

#include "ceiling.hpp"
#include "core/device.hpp"

namespace tandem::bench {

[[nodiscard]] CopyCeiling measure_cuda_copy(const detail::Device& worker,
                                            const detail::Device& primary, VkDeviceSize bytes,
                                            std::uint32_t batch, std::uint32_t runs);

} // namespace tandem::bench
