// CUDA objects on one GPU for moving Vulkan memory with CUDA (the cuda-peer path and its check):
// the GPU's primary context with a stream of its own, Vulkan memory imported as an opaque fd and
// mapped as one buffer, Vulkan timelines imported as external semaphores, cuMemAlloc memory, and
// an event that orders one GPU's stream after another's.
// Every object makes its GPU's context current before a CUDA call, so any thread may use them.
//
// Threads: set-up on any thread; a CudaGpu's stream is used by one thread at a time.
// Lifetime: a CudaGpu outlives what was made on it; each object frees its CUDA resource in its
// destructor (after the stream drained), before the Vulkan memory behind an import goes.
#pragma once

#include <string>

#include <vulkan/vulkan_core.h>

#include "core/cuda_driver.hpp"

namespace tandem::detail {

// Throws tandem::Error naming `call` and the CUDA error unless `result` is CUDA_SUCCESS.
void cu_check(const CudaDriver& cuda, cuda::CUresult result, const char* call);

class CudaGpu {
public:
    // CUDA device `ordinal` (DeviceInfo::cuda.ordinal). Throws Error.
    CudaGpu(const CudaDriver& cuda, int ordinal);
    ~CudaGpu();
    CudaGpu(const CudaGpu&) = delete;
    CudaGpu& operator=(const CudaGpu&) = delete;

    // Makes the context current on the calling thread; the CUDA result.
    [[nodiscard]] cuda::CUresult make_current() const noexcept;
    [[nodiscard]] const CudaDriver& driver() const noexcept { return m_cuda; }
    [[nodiscard]] int ordinal() const noexcept { return m_ordinal; }
    [[nodiscard]] cuda::CUcontext context() const noexcept { return m_context; }
    [[nodiscard]] cuda::CUstream stream() const noexcept { return m_stream; }
    // Lets this GPU's copies reach `peer`'s memory directly (cuCtxEnablePeerAccess; already
    // enabled counts as done). Throws Error.
    void enable_peer_access(const CudaGpu& peer) const;

private:
    const CudaDriver& m_cuda;
    int m_ordinal = 0;
    cuda::CUdevice m_device = 0;
    cuda::CUcontext m_context = nullptr;
    cuda::CUstream m_stream = nullptr;
};

// A Vulkan allocation of `allocation` bytes behind an opaque fd, imported on `gpu` (dedicated when
// the Vulkan allocation is) and mapped for its first `bytes`. Owns the fd once constructed; a
// failed import closes it. Throws Error.
class CudaImportedBuffer {
public:
    CudaImportedBuffer(const CudaGpu& gpu, int fd, VkDeviceSize allocation, VkDeviceSize bytes,
                       bool dedicated);
    ~CudaImportedBuffer();
    CudaImportedBuffer(const CudaImportedBuffer&) = delete;
    CudaImportedBuffer& operator=(const CudaImportedBuffer&) = delete;

    [[nodiscard]] cuda::CUdeviceptr pointer() const noexcept { return m_mapped; }

private:
    const CudaGpu& m_gpu;
    cuda::CUexternalMemory m_memory = nullptr;
    cuda::CUdeviceptr m_mapped = 0;
};

// A Vulkan timeline semaphore behind an opaque fd, imported on `gpu`. Owns the fd once
// constructed; a failed import closes it. Throws Error.
class CudaImportedTimeline {
public:
    CudaImportedTimeline(const CudaGpu& gpu, int fd);
    ~CudaImportedTimeline();
    CudaImportedTimeline(const CudaImportedTimeline&) = delete;
    CudaImportedTimeline& operator=(const CudaImportedTimeline&) = delete;

    [[nodiscard]] cuda::CUexternalSemaphore handle() const noexcept { return m_semaphore; }

private:
    const CudaGpu& m_gpu;
    cuda::CUexternalSemaphore m_semaphore = nullptr;
};

// `bytes` of cuMemAlloc memory on `gpu`. Throws Error.
class CudaMemory {
public:
    CudaMemory(const CudaGpu& gpu, std::size_t bytes);
    ~CudaMemory();
    CudaMemory(const CudaMemory&) = delete;
    CudaMemory& operator=(const CudaMemory&) = delete;

    [[nodiscard]] cuda::CUdeviceptr pointer() const noexcept { return m_pointer; }

private:
    const CudaGpu& m_gpu;
    cuda::CUdeviceptr m_pointer = 0;
};

// Makes `gpu`'s context current on the calling thread for its life and then restores the one that
// was (a thread of the application's may use CUDA itself). result() is cuCtxSetCurrent's.
class CudaContextScope {
public:
    explicit CudaContextScope(const CudaGpu& gpu) noexcept;
    ~CudaContextScope();
    CudaContextScope(const CudaContextScope&) = delete;
    CudaContextScope& operator=(const CudaContextScope&) = delete;

    [[nodiscard]] cuda::CUresult result() const noexcept { return m_result; }

private:
    const CudaDriver& m_cuda;
    cuda::CUcontext m_previous = nullptr;
    bool m_restore = false;
    cuda::CUresult m_result = cuda::CUDA_SUCCESS;
};

// A stream of its own on `gpu` (non-blocking). Its destructor does not wait: CUDA releases it
// once the work queued on it is done. Throws Error.
class CudaStream {
public:
    explicit CudaStream(const CudaGpu& gpu);
    ~CudaStream();
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;

    [[nodiscard]] cuda::CUstream handle() const noexcept { return m_stream; }

private:
    const CudaGpu& m_gpu;
    cuda::CUstream m_stream = nullptr;
};

// A CUDA event on `gpu` (no timing), for ordering another stream after work on this GPU's.
// Throws Error.
class CudaEvent {
public:
    explicit CudaEvent(const CudaGpu& gpu);
    ~CudaEvent();
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;

    [[nodiscard]] cuda::CUevent handle() const noexcept { return m_event; }

private:
    const CudaGpu& m_gpu;
    cuda::CUevent m_event = nullptr;
};

} // namespace tandem::detail
