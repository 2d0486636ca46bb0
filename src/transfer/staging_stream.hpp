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
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include <vulkan/vulkan_core.h>

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

// The host's stream: one thread, which waits on the worker timeline from the host, copies with
// `copier` and signals `gate` from the host. After a failure it runs nothing more.
class HostStagingStream final : public StagingStream {
public:
    HostStagingStream(const StagingCopier& copier, const TimelineSemaphore& worker_timeline,
                      TimelineSemaphore& gate);
    ~HostStagingStream() override; // stops the thread: what is still queued never runs

    [[nodiscard]] std::string enqueue(VkDeviceSize offset, VkDeviceSize bytes, std::uint64_t after,
                                      std::uint64_t signal) noexcept override;
    [[nodiscard]] std::string poll() noexcept override;
    [[nodiscard]] bool finish(std::chrono::milliseconds timeout) noexcept override;

private:
    struct Copy {
        VkDeviceSize offset = 0;
        VkDeviceSize bytes = 0;
        std::uint64_t after = 0;
        std::uint64_t signal = 0;
    };
    void run();
    // One copy, outside the lock: empty, or what failed.
    [[nodiscard]] std::string run_one(const Copy& copy);

    const StagingCopier& m_copier;
    const TimelineSemaphore& m_worker_timeline;
    TimelineSemaphore& m_gate;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Copy> m_queue; // guarded by m_mutex, as the three below
    bool m_running_one = false;
    bool m_stop = false;
    std::string m_error;
    std::thread m_thread; // last: started once the members above exist
};

} // namespace tandem::detail
