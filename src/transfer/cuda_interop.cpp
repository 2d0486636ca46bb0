#include "transfer/cuda_interop.hpp"

#include <unistd.h>

#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

constexpr const char* k_cuda_hint =
    "Check the NVIDIA driver, and that CUDA sees both GPUs (CUDA_VISIBLE_DEVICES)";
constexpr cuda::CUresult k_peer_access_already_enabled = 704;

// A CUDA call's failure in Tandem's categories. Out of memory and a driver, device or peer
// access that is missing are told apart; any other CUDA failure is Other, as it is no VkResult.
ErrorCategory category_of_cuda(cuda::CUresult result) noexcept {
    switch (result) {
    case 2: // CUDA_ERROR_OUT_OF_MEMORY
        return ErrorCategory::OutOfMemory;
    case 35:  // CUDA_ERROR_INSUFFICIENT_DRIVER
    case 100: // CUDA_ERROR_NO_DEVICE
    case 217: // CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
    case 801: // CUDA_ERROR_NOT_SUPPORTED
    case 803: // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        return ErrorCategory::Unsupported;
    default:
        return ErrorCategory::Other;
    }
}

// An import's step: on failure the fd is still the caller's, so it is closed before the throw.
void check_or_close(const CudaDriver& cuda, cuda::CUresult result, int fd, const char* call) {
    if (result != cuda::CUDA_SUCCESS) {
        ::close(fd);
        cu_check(cuda, result, call);
    }
}

} // namespace

void cu_check(const CudaDriver& cuda, cuda::CUresult result, const char* call) {
    if (result != cuda::CUDA_SUCCESS) {
        throw Error(category_of_cuda(result), cuda.describe(call, result), k_cuda_hint);
    }
}

CudaGpu::CudaGpu(const CudaDriver& cuda, int ordinal) : m_cuda(cuda), m_ordinal(ordinal) {
    if (!m_cuda.ready) {
        throw Error(ErrorCategory::Unsupported, "CUDA is not available: " + m_cuda.error,
                    k_cuda_hint);
    }
    cu_check(m_cuda, m_cuda.cuDeviceGet(&m_device, ordinal), "cuDeviceGet");
    cu_check(m_cuda, m_cuda.cuDevicePrimaryCtxRetain(&m_context, m_device),
             "cuDevicePrimaryCtxRetain");
    const cuda::CUresult current = make_current();
    const cuda::CUresult stream =
        current == cuda::CUDA_SUCCESS
            ? m_cuda.cuStreamCreate(&m_stream, cuda::CU_STREAM_NON_BLOCKING)
            : current;
    if (stream != cuda::CUDA_SUCCESS) {
        (void)m_cuda.cuDevicePrimaryCtxRelease(m_device);
        cu_check(m_cuda, stream,
                 current != cuda::CUDA_SUCCESS ? "cuCtxSetCurrent" : "cuStreamCreate");
    }
}

CudaGpu::~CudaGpu() {
    (void)make_current();
    (void)m_cuda.cuStreamSynchronize(m_stream);
    (void)m_cuda.cuStreamDestroy(m_stream);
    (void)m_cuda.cuDevicePrimaryCtxRelease(m_device);
}

cuda::CUresult CudaGpu::make_current() const noexcept {
    return m_cuda.cuCtxSetCurrent(m_context);
}

void CudaGpu::enable_peer_access(const CudaGpu& peer) const {
    cu_check(m_cuda, make_current(), "cuCtxSetCurrent");
    const cuda::CUresult r = m_cuda.cuCtxEnablePeerAccess(peer.context(), 0);
    if (r != k_peer_access_already_enabled) {
        cu_check(m_cuda, r, "cuCtxEnablePeerAccess");
    }
}

CudaImportedBuffer::CudaImportedBuffer(const CudaGpu& gpu, int fd, VkDeviceSize allocation,
                                       VkDeviceSize bytes, bool dedicated)
    : m_gpu(gpu) {
    const CudaDriver& cuda = gpu.driver();
    check_or_close(cuda, gpu.make_current(), fd, "cuCtxSetCurrent");
    cuda::CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc{};
    desc.type = cuda::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    desc.handle.fd = fd;
    desc.size = allocation;
    desc.flags = dedicated ? cuda::CUDA_EXTERNAL_MEMORY_DEDICATED : 0;
    check_or_close(cuda, cuda.cuImportExternalMemory(&m_memory, &desc), fd,
                   "cuImportExternalMemory");
    cuda::CUDA_EXTERNAL_MEMORY_BUFFER_DESC buffer{};
    buffer.size = bytes;
    const cuda::CUresult mapped =
        cuda.cuExternalMemoryGetMappedBuffer(&m_mapped, m_memory, &buffer);
    if (mapped != cuda::CUDA_SUCCESS) {
        (void)cuda.cuDestroyExternalMemory(m_memory);
        cu_check(cuda, mapped, "cuExternalMemoryGetMappedBuffer");
    }
}

CudaImportedBuffer::~CudaImportedBuffer() {
    const CudaDriver& cuda = m_gpu.driver();
    (void)m_gpu.make_current();
    (void)cuda.cuMemFree(m_mapped); // a mapped external buffer is freed this way
    (void)cuda.cuDestroyExternalMemory(m_memory);
}

CudaImportedTimeline::CudaImportedTimeline(const CudaGpu& gpu, int fd) : m_gpu(gpu) {
    const CudaDriver& cuda = gpu.driver();
    check_or_close(cuda, gpu.make_current(), fd, "cuCtxSetCurrent");
    cuda::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc{};
    desc.type = cuda::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
    desc.handle.fd = fd;
    check_or_close(cuda, cuda.cuImportExternalSemaphore(&m_semaphore, &desc), fd,
                   "cuImportExternalSemaphore (timeline)");
}

CudaImportedTimeline::~CudaImportedTimeline() {
    (void)m_gpu.make_current();
    (void)m_gpu.driver().cuDestroyExternalSemaphore(m_semaphore);
}

CudaMemory::CudaMemory(const CudaGpu& gpu, std::size_t bytes) : m_gpu(gpu) {
    cu_check(gpu.driver(), gpu.make_current(), "cuCtxSetCurrent");
    cu_check(gpu.driver(), gpu.driver().cuMemAlloc(&m_pointer, bytes), "cuMemAlloc");
}

CudaMemory::~CudaMemory() {
    (void)m_gpu.make_current();
    (void)m_gpu.driver().cuMemFree(m_pointer);
}

CudaContextScope::CudaContextScope(const CudaGpu& gpu) noexcept : m_cuda(gpu.driver()) {
    m_restore = m_cuda.cuCtxGetCurrent(&m_previous) == cuda::CUDA_SUCCESS;
    m_result = gpu.make_current();
}

CudaContextScope::~CudaContextScope() {
    if (m_restore) {
        (void)m_cuda.cuCtxSetCurrent(m_previous);
    }
}

CudaStream::CudaStream(const CudaGpu& gpu) : m_gpu(gpu) {
    const CudaDriver& cuda = gpu.driver();
    cu_check(cuda, gpu.make_current(), "cuCtxSetCurrent");
    cu_check(cuda, cuda.cuStreamCreate(&m_stream, cuda::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

CudaStream::~CudaStream() {
    (void)m_gpu.make_current();
    (void)m_gpu.driver().cuStreamDestroy(m_stream);
}

CudaEvent::CudaEvent(const CudaGpu& gpu) : m_gpu(gpu) {
    const CudaDriver& cuda = gpu.driver();
    cu_check(cuda, gpu.make_current(), "cuCtxSetCurrent");
    cu_check(cuda, cuda.cuEventCreate(&m_event, cuda::CU_EVENT_DISABLE_TIMING), "cuEventCreate");
}

CudaEvent::~CudaEvent() {
    (void)m_gpu.make_current();
    (void)m_gpu.driver().cuEventDestroy(m_event);
}

} // namespace tandem::detail
