#include "cuda_ceiling.hpp"

#include <chrono>
#include <memory>
#include <vector>

#include "core/cuda_driver.hpp"
#include "transfer/cuda_interop.hpp"

namespace tandem::bench {

CopyCeiling measure_cuda_copy(const detail::Device& worker, const detail::Device& primary,
                              VkDeviceSize bytes, std::uint32_t batch, std::uint32_t runs) {
    const detail::CudaDriver& cuda = detail::cuda_driver();
    const int from_ordinal = worker.info().cuda.ordinal;
    const int to_ordinal = primary.info().cuda.ordinal;
    const detail::CudaGpu from_gpu(cuda, from_ordinal);
    std::unique_ptr<detail::CudaGpu> other;
    if (to_ordinal != from_ordinal) {
        other = std::make_unique<detail::CudaGpu>(cuda, to_ordinal);
        from_gpu.enable_peer_access(*other);
    }
    const detail::CudaGpu& to_gpu = other ? *other : from_gpu;
    const detail::CudaMemory source(from_gpu, bytes);
    const detail::CudaMemory target(to_gpu, bytes);
    const std::vector<std::uint8_t> data = pattern(bytes, 41);
    detail::cu_check(cuda, from_gpu.make_current(), "cuCtxSetCurrent");
    detail::cu_check(cuda, cuda.cuMemcpyHtoD(source.pointer(), data.data(), bytes), "cuMemcpyHtoD");

    const auto copies = [&](std::uint32_t n) {
        detail::cu_check(cuda, from_gpu.make_current(), "cuCtxSetCurrent");
        const auto t0 = Clock::now();
        for (std::uint32_t i = 0; i < n; ++i) {
            detail::cu_check(cuda,
                             cuda.cuMemcpyPeerAsync(target.pointer(), to_gpu.context(),
                                                    source.pointer(), from_gpu.context(), bytes,
                                                    from_gpu.stream()),
                             "cuMemcpyPeerAsync");
        }
        detail::cu_check(cuda, cuda.cuStreamSynchronize(from_gpu.stream()), "cuStreamSynchronize");
        return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    };
    (void)copies(1); // warm-up
    (void)copies(batch);
    std::vector<double> gbps;
    std::vector<double> latency;
    for (std::uint32_t r = 0; r < runs; ++r) {
        const double us = copies(batch);
        gbps.push_back(static_cast<double>(bytes) * batch / us / 1e3);
        latency.push_back(copies(1));
    }
    CopyCeiling out;
    out.gbps = stats_of(gbps);
    out.latency_us = stats_of(latency);
    std::vector<std::uint8_t> back(bytes);
    detail::cu_check(cuda, to_gpu.make_current(), "cuCtxSetCurrent");
    detail::cu_check(cuda, cuda.cuMemcpyDtoH(back.data(), target.pointer(), bytes), "cuMemcpyDtoH");
    out.verified = back == data;
    return out;
}

} // namespace tandem::bench
