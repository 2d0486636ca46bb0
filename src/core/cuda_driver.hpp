// CudaDriver: the few CUDA driver-API entry points Tandem uses, loaded from libcuda.so.1 at run
// time with dlopen. The NVIDIA driver installs that library; no CUDA toolkit is needed to build
// Tandem, so the types, constants and signatures below are declared here after NVIDIA's
// documented driver-API ABI (cuda.h, CUDA 11.x-13.x), only as far as Tandem uses them.
//
// Threads: cuda_driver() loads the library once (thread-safe) and never unloads it; the table is
// read-only afterwards, and the CUDA calls themselves are thread-safe. cuInit is called once,
// by cuda_driver(), only when libcuda.so.1 loaded.
#pragma once

#include <cstddef>
#include <string>

namespace tandem::detail::cuda {

using CUresult = int;
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
using CUcontext = CUctx_st*;
struct CUstream_st;
using CUstream = CUstream_st*;
struct CUevent_st;
using CUevent = CUevent_st*;
struct CUextMemory_st;
using CUexternalMemory = CUextMemory_st*;
struct CUextSemaphore_st;
using CUexternalSemaphore = CUextSemaphore_st*;
struct CUuuid {
    char bytes[16];
};

inline constexpr int CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD = 1;
inline constexpr unsigned CUDA_EXTERNAL_MEMORY_DEDICATED = 0x1;
inline constexpr int CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD = 9;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;

struct CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
    int type;
    union {
        int fd;
        struct {
            void* handle;
            const void* name;
        } win32;
        const void* nvSciBufObject;
    } handle;
    unsigned long long size;
    unsigned int flags;
    unsigned int reserved[16];
};

struct CUDA_EXTERNAL_MEMORY_BUFFER_DESC {
    unsigned long long offset;
    unsigned long long size;
    unsigned int flags;
    unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
    int type;
    union {
        int fd;
        struct {
            void* handle;
            const void* name;
        } win32;
        const void* nvSciSyncObj;
    } handle;
    unsigned int flags;
    unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS {
    struct {
        struct {
            unsigned long long value;
        } fence;
        union {
            void* fence;
            unsigned long long reserved;
        } nvSciSync;
        struct {
            unsigned long long key;
        } keyedMutex;
        unsigned int reserved[12];
    } params;
    unsigned int flags;
    unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS {
    struct {
        struct {
            unsigned long long value;
        } fence;
        union {
            void* fence;
            unsigned long long reserved;
        } nvSciSync;
        struct {
            unsigned long long key;
            unsigned int timeoutMs;
        } keyedMutex;
        unsigned int reserved[10];
    } params;
    unsigned int flags;
    unsigned int reserved[16];
};

} // namespace tandem::detail::cuda

namespace tandem::detail {

struct CudaDriver {
    // libcuda.so.1 loaded, every entry point below found, and cuInit(0) succeeded.
    bool ready = false;
    // Why not, in a sentence (the loader's or cuInit's words); empty when ready.
    std::string error;

    cuda::CUresult (*cuInit)(unsigned flags) = nullptr;
    cuda::CUresult (*cuGetErrorString)(cuda::CUresult, const char**) = nullptr;
    cuda::CUresult (*cuDeviceGetCount)(int*) = nullptr;
    cuda::CUresult (*cuDeviceGet)(cuda::CUdevice*, int) = nullptr;
    cuda::CUresult (*cuDeviceGetName)(char*, int, cuda::CUdevice) = nullptr;
    cuda::CUresult (*cuDeviceGetUuid)(cuda::CUuuid*, cuda::CUdevice) = nullptr;
    cuda::CUresult (*cuDeviceCanAccessPeer)(int*, cuda::CUdevice, cuda::CUdevice) = nullptr;
    cuda::CUresult (*cuDevicePrimaryCtxRetain)(cuda::CUcontext*, cuda::CUdevice) = nullptr;
    cuda::CUresult (*cuDevicePrimaryCtxRelease)(cuda::CUdevice) = nullptr;
    cuda::CUresult (*cuCtxSetCurrent)(cuda::CUcontext) = nullptr;
    cuda::CUresult (*cuCtxGetCurrent)(cuda::CUcontext*) = nullptr;
    cuda::CUresult (*cuCtxEnablePeerAccess)(cuda::CUcontext, unsigned) = nullptr;
    cuda::CUresult (*cuStreamCreate)(cuda::CUstream*, unsigned) = nullptr;
    cuda::CUresult (*cuStreamDestroy)(cuda::CUstream) = nullptr;
    cuda::CUresult (*cuStreamSynchronize)(cuda::CUstream) = nullptr;
    cuda::CUresult (*cuStreamQuery)(cuda::CUstream) = nullptr;
    cuda::CUresult (*cuStreamWaitEvent)(cuda::CUstream, cuda::CUevent, unsigned) = nullptr;
    cuda::CUresult (*cuEventCreate)(cuda::CUevent*, unsigned) = nullptr;
    cuda::CUresult (*cuEventDestroy)(cuda::CUevent) = nullptr;
    cuda::CUresult (*cuEventRecord)(cuda::CUevent, cuda::CUstream) = nullptr;
    cuda::CUresult (*cuMemAlloc)(cuda::CUdeviceptr*, std::size_t) = nullptr;
    cuda::CUresult (*cuMemFree)(cuda::CUdeviceptr) = nullptr;
    cuda::CUresult (*cuMemcpyPeerAsync)(cuda::CUdeviceptr, cuda::CUcontext, cuda::CUdeviceptr,
                                        cuda::CUcontext, std::size_t, cuda::CUstream) = nullptr;
    cuda::CUresult (*cuMemcpyDtoDAsync)(cuda::CUdeviceptr, cuda::CUdeviceptr, std::size_t,
                                        cuda::CUstream) = nullptr;
    cuda::CUresult (*cuMemcpyHtoD)(cuda::CUdeviceptr, const void*, std::size_t) = nullptr;
    cuda::CUresult (*cuMemcpyDtoH)(void*, cuda::CUdeviceptr, std::size_t) = nullptr;
    cuda::CUresult (*cuImportExternalMemory)(
        cuda::CUexternalMemory*, const cuda::CUDA_EXTERNAL_MEMORY_HANDLE_DESC*) = nullptr;
    cuda::CUresult (*cuExternalMemoryGetMappedBuffer)(
        cuda::CUdeviceptr*, cuda::CUexternalMemory,
        const cuda::CUDA_EXTERNAL_MEMORY_BUFFER_DESC*) = nullptr;
    cuda::CUresult (*cuDestroyExternalMemory)(cuda::CUexternalMemory) = nullptr;
    cuda::CUresult (*cuImportExternalSemaphore)(
        cuda::CUexternalSemaphore*, const cuda::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC*) = nullptr;
    cuda::CUresult (*cuSignalExternalSemaphoresAsync)(
        const cuda::CUexternalSemaphore*, const cuda::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS*,
        unsigned, cuda::CUstream) = nullptr;
    cuda::CUresult (*cuWaitExternalSemaphoresAsync)(
        const cuda::CUexternalSemaphore*, const cuda::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS*,
        unsigned, cuda::CUstream) = nullptr;
    cuda::CUresult (*cuDestroyExternalSemaphore)(cuda::CUexternalSemaphore) = nullptr;

    // "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"-style text for `result`.
    [[nodiscard]] std::string describe(const char* call, cuda::CUresult result) const;
};

// The process's CUDA driver table: loaded, resolved and initialised on the first call. Never
// throws; look at `ready` and `error`. $TANDEM_NO_CUDA=1 makes it report the library absent
// without loading it.
[[nodiscard]] const CudaDriver& cuda_driver();

} // namespace tandem::detail
