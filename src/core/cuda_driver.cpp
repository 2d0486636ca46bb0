#include "core/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <mutex>

namespace tandem::detail {
namespace {

// Finds the first of `names` in `library` (the driver exports versioned names, "_v2", for
// entry points whose ABI changed; the unversioned one is the older ABI).
template <typename Fn>
bool resolve(void* library, Fn& out, std::initializer_list<const char*> names,
             std::string& missing) {
    for (const char* name : names) {
        if (void* symbol = ::dlsym(library, name)) {
            out = reinterpret_cast<Fn>(symbol);
            return true;
        }
    }
    missing = *names.begin();
    return false;
}

CudaDriver load() {
    CudaDriver d;
    if (const char* off = std::getenv("TANDEM_NO_CUDA"); off != nullptr && off[0] == '1') {
        d.error = "no libcuda.so.1: CUDA is turned off ($TANDEM_NO_CUDA=1)";
        return d;
    }
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* text = ::dlerror(); // once: a second call returns null
        std::string why = text != nullptr ? text : "";
        const std::string name = "libcuda.so.1: ";
        if (why.rfind(name, 0) == 0) {
            why.erase(0, name.size()); // the loader starts with the name, said already
        }
        d.error = "no libcuda.so.1 (the NVIDIA driver's CUDA library)" +
                  (why.empty() ? std::string() : ": " + why);
        return d;
    }
    std::string missing;
    const bool all =
        resolve(library, d.cuInit, {"cuInit"}, missing) &&
        resolve(library, d.cuGetErrorString, {"cuGetErrorString"}, missing) &&
        resolve(library, d.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
        resolve(library, d.cuDeviceGet, {"cuDeviceGet"}, missing) &&
        resolve(library, d.cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
        resolve(library, d.cuDeviceGetUuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, missing) &&
        resolve(library, d.cuDeviceCanAccessPeer, {"cuDeviceCanAccessPeer"}, missing) &&
        resolve(library, d.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
        resolve(library, d.cuDevicePrimaryCtxRelease,
                {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, missing) &&
        resolve(library, d.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
        resolve(library, d.cuCtxGetCurrent, {"cuCtxGetCurrent"}, missing) &&
        resolve(library, d.cuCtxEnablePeerAccess, {"cuCtxEnablePeerAccess"}, missing) &&
        resolve(library, d.cuStreamCreate, {"cuStreamCreate"}, missing) &&
        resolve(library, d.cuStreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"}, missing) &&
        resolve(library, d.cuStreamSynchronize, {"cuStreamSynchronize"}, missing) &&
        resolve(library, d.cuStreamQuery, {"cuStreamQuery"}, missing) &&
        resolve(library, d.cuStreamWaitEvent, {"cuStreamWaitEvent"}, missing) &&
        resolve(library, d.cuEventCreate, {"cuEventCreate"}, missing) &&
        resolve(library, d.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, missing) &&
        resolve(library, d.cuEventRecord, {"cuEventRecord"}, missing) &&
        resolve(library, d.cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
        resolve(library, d.cuMemFree, {"cuMemFree_v2"}, missing) &&
        resolve(library, d.cuMemcpyPeerAsync, {"cuMemcpyPeerAsync"}, missing) &&
        resolve(library, d.cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, missing) &&
        resolve(library, d.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
        resolve(library, d.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
        resolve(library, d.cuImportExternalMemory, {"cuImportExternalMemory"}, missing) &&
        resolve(library, d.cuExternalMemoryGetMappedBuffer, {"cuExternalMemoryGetMappedBuffer"},
                missing) &&
        resolve(library, d.cuDestroyExternalMemory, {"cuDestroyExternalMemory"}, missing) &&
        resolve(library, d.cuImportExternalSemaphore, {"cuImportExternalSemaphore"}, missing) &&
        resolve(library, d.cuSignalExternalSemaphoresAsync, {"cuSignalExternalSemaphoresAsync"},
                missing) &&
        resolve(library, d.cuWaitExternalSemaphoresAsync, {"cuWaitExternalSemaphoresAsync"},
                missing) &&
        resolve(library, d.cuDestroyExternalSemaphore, {"cuDestroyExternalSemaphore"}, missing);
    if (!all) {
        d.error = "libcuda.so.1 lacks " + missing + " (a CUDA driver older than CUDA 11?)";
        return d;
    }
    const cuda::CUresult r = d.cuInit(0);
    if (r != cuda::CUDA_SUCCESS) {
        d.error = "libcuda.so.1 loaded but " + d.describe("cuInit", r);
        return d;
    }
    d.ready = true;
    return d; // the library stays loaded for the life of the process
}

} // namespace

std::string CudaDriver::describe(const char* call, cuda::CUresult result) const {
    const char* text = nullptr;
    if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != cuda::CUDA_SUCCESS ||
        text == nullptr) {
        text = "unknown error";
    }
    return std::string(call) + " failed with CUDA error " + std::to_string(result) + " (" + text +
           ")";
}

const CudaDriver& cuda_driver() {
    static std::once_flag once;
    static CudaDriver driver;
    std::call_once(once, [] { driver = load(); });
    return driver;
}

} // namespace tandem::detail
