// StagingStream: the copies between a path's two stagings ordered on the GPUs by timelines, with
// no host thread between the sides (StreamHandOff; the cuda-peer path). Each queued copy waits
// until the worker timeline reaches a value, copies its bytes from the worker's staging to the
// primary's at the same offset, then signals the primary's gate timeline to a value; copies run
// in the order queued. CUDA's (CudaPeerPath: CUDA streams that wait on the worker timeline and
// signal the gate, both imported into CUDA), or the host's (HostStagingStream: a thread that
// waits, copies with a StagingCopier and signals the gate from the host), which stands in for
// CUDA in tests so that the Vulkan side of the hand-off is checked where there is no CUDA.
//
// Threads: enqueue() and finish() from one thread at a time (the link's submit thread, then its
// teardown); poll() from any thread. Lifetime: destroyed before the timelines and stagings it
// uses.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include <vulkan/vulkan_core.h>

#include "sync/host_bridge.hpp"
#include "sync/timeline_semaphore.hpp"

namespace tandem::detail {

class StagingCopier;

class StagingStream {
public:
    virtual ~StagingStream() = default;
    StagingStream() = default;
    StagingStream(const StagingStream&) = delete;
    StagingStream& operator=(const StagingStream&) = delete;

    // Queues: once the worker timeline reaches `after`, copy `bytes` at `offset`, then signal the
    // gate to `signal`. Never blocks on a GPU and never throws: empty, or a sentence saying what
    // failed (this copy is then not queued; those queued before stay).
    [[nodiscard]] virtual std::string enqueue(VkDeviceSize offset, VkDeviceSize bytes,
                                              std::uint64_t after,
                                              std::uint64_t signal) noexcept = 0;
    // What failed in a queued copy once one has (it stays failed); empty while all is well.
    // Never blocks.
    [[nodiscard]] virtual std::string poll() noexcept = 0;
    // Waits up to `timeout` until every queued copy ran or one failed: true when nothing queued
    // is left pending.
    [[nodiscard]] virtual bool finish(std::chrono::milliseconds timeout) noexcept = 0;
};

// The host's stream: a HostBridge of its own (a thread that polls the worker timeline and runs
// each copy once its value is reached, in order), which copies with `copier` and signals `gate`
// from the host. After a failure it runs nothing more. Like CUDA's, it has no timeout of its own.
class HostStagingStream final : public StagingStream {
public:
    HostStagingStream(const StagingCopier& copier, const TimelineSemaphore& worker_timeline,
                      TimelineSemaphore& gate);

    [[nodiscard]] std::string enqueue(VkDeviceSize offset, VkDeviceSize bytes, std::uint64_t after,
                                      std::uint64_t signal) noexcept override;
    [[nodiscard]] std::string poll() noexcept override;
    [[nodiscard]] bool finish(std::chrono::milliseconds timeout) noexcept override;

private:
    // One copy and its gate signal, on the bridge's thread; a failure's words go to m_error.
    [[nodiscard]] VkResult run_one(VkDeviceSize offset, VkDeviceSize bytes,
                                   std::uint64_t signal) noexcept;

    const StagingCopier& m_copier;
    TimelineSemaphore& m_gate;
    std::mutex m_mutex;
    std::string m_error; // what a copy said when it failed; guarded by m_mutex
    HostBridge m_bridge; // last: stopped (its thread detached) before the members above go
};

} // namespace tandem::detail
