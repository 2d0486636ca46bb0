// StagingCopier: what moves a band from a worker's staging buffer to the primary's at the same
// offset in a path that copies between two device-local stagings (the cuda-peer path: CUDA's
// copy; in tests, the host through both devices' mappings, where there is no CUDA): at once, as
// the bridge's host step (copy()), or queued on a StagingStream ordered by the link's timelines
// (stream()).
// Threads: copy() on one thread at a time (the pair's bridge, or the host stream's thread).
// Lifetime: destroyed after the streams it made and before the stagings it reads and writes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "tandem/device_info.hpp"
#include "transfer/opaque_fd_memory.hpp"
#include "transfer/staging_stream.hpp"

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
    // A stream of these copies, each after the worker timeline reaches its value and signalling
    // `gate` (exportable, on the primary) when done. This one: the host's (HostStagingStream);
    // CUDA's copier queues them on CUDA streams. Null for a copier that has none: the link then
    // runs its copies as the bridge's host step. Throws Error when it cannot be made.
    [[nodiscard]] virtual std::unique_ptr<StagingStream>
    stream(const TimelineSemaphore& worker_timeline, TimelineSemaphore& gate) const;
    // True when stream()'s gate signals come from the host (the host's stream): the hand-off
    // names the gate for the validation layer's known false positive (k_host_signalled_only).
    [[nodiscard]] virtual bool stream_signals_from_host() const noexcept { return true; }
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
