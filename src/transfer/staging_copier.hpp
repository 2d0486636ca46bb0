// StagingCopier: what moves a band from a worker's staging buffer to the primary's at the same
// offset in a path whose host step copies between two device-local stagings (the cuda-peer path:
// CUDA's copy; in tests, the host through both devices' mappings, where there is no CUDA).
// Threads: copy() on one thread at a time (the pair's bridge). Lifetime: destroyed before the
// stagings it reads and writes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "tandem/device_info.hpp"
#include "transfer/opaque_fd_memory.hpp"

namespace tandem::detail {

// Moves bytes from the worker's staging to the primary's at the same offset.
class StagingCopier {
public:
    virtual ~StagingCopier() = default;
    StagingCopier() = default;
    StagingCopier(const StagingCopier&) = delete;
    StagingCopier& operator=(const StagingCopier&) = delete;
    // Copies `bytes` at `offset`, done when it returns: empty, or a sentence saying what failed.
    // Never throws.
    [[nodiscard]] virtual std::string copy(VkDeviceSize offset,
                                           VkDeviceSize bytes) const noexcept = 0;
};

// Makes the copier of a path from its two stagings (the worker's on `worker`, the primary's on
// `primary`), each `bytes` long. Throws Error.
using StagingCopierFactory = std::function<std::unique_ptr<StagingCopier>(
    const Device& worker, const ExportableBuffer& worker_staging, const Device& primary,
    const ExportableBuffer& primary_staging, VkDeviceSize bytes)>;

// Makes the cuda-peer path available in `pair` where shared memory is (both need opaque-fd memory
// on the two devices), for a stand-in copier in place of CUDA (tests); true when it changed it.
inline bool allow_cuda_stand_in(PairInfo& pair) {
    if (!pair.allows(TransferPath::SharedMemory) || pair.allows(TransferPath::CudaPeer)) {
        return false;
    }
    for (PathAvailability& a : pair.paths) {
        if (a.path == TransferPath::CudaPeer) {
            a.available = true;
            a.reason = "a stand-in copies in place of CUDA";
        }
    }
    return true;
}

} // namespace tandem::detail
