// JobTimer: the GPU time of each job recorded into one of a few slots (a task registration's
// slot ring, a calibration's capture) that its recorder times, for whatever commands the job
// records (the runtime leaves some jobs on a CPU device untimed: TaskInstance::time_next_job;
// a slot's untimed job calls none of begin, end and submitted, and its reuse() answers none). It
// owns a timestamp query pool with two queries per slot and a small host-visible buffer; the
// recording thread brackets a job's commands with a timestamp before (after resetting the slot's
// two queries in the same command buffer) and one after, and the same commands copy the pair into
// the slot's part of the buffer (vkCmdCopyQueryPoolResults, with availability). So a finished
// job's time is read from host memory: no thread calls vkGetQueryPoolResults, which on lavapipe
// waits for the whole device (it calls vkDeviceWaitIdle whatever the flags), and reading costs
// the reader nothing on the device. In the runtime what is timed is the workload's own commands
// on the worker's main queue: not Tandem's layout transition for the transfer, not the transfer.
//
// Each slot's pair belongs to the generation submitted last in it. completed() (once the job's
// work was seen complete: the runtime's completion watcher) takes it; reuse() (the recording
// thread, before it records the slot again, when the slot's previous job has completed) takes it
// when completed() has not yet. So each job's time is taken once, whichever comes first.
//
// Threads: create() at set-up (null where the device's main queue family has no
// timestampValidBits or no timestamp period); begin/end/reuse/submitted on the recording thread,
// completed on the thread that sees jobs complete. m_mutex guards which generation each slot
// holds; it is taken by those two threads only, never while holding another lock, and held only
// to read a slot's 32 bytes. Nothing here waits. Lifetime: destroyed after its jobs' work
// drained.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/resources.hpp"

namespace tandem::detail {

// One job's GPU time.
struct JobTime {
    std::uint64_t generation = 0;
    double us = 0;
};

class JobTimer {
public:
    // Null when `device`'s main queue family writes no timestamps. Throws Error when the pool
    // or the buffer cannot be made.
    [[nodiscard]] static std::unique_ptr<JobTimer> create(const Device& device, std::uint32_t slots,
                                                          const std::string& name);

    // Before the workload's commands: resets the slot's queries and writes the first timestamp.
    void begin(VkCommandBuffer cmd, std::uint32_t slot) const noexcept;
    // After them: the second timestamp, and the commands that copy both to the host buffer.
    void end(VkCommandBuffer cmd, std::uint32_t slot) const noexcept;
    // The job thread is about to record `slot` again (its previous job completed): that job's
    // time when completed() has not taken it yet. The slot then holds no generation.
    [[nodiscard]] std::optional<JobTime> reuse(std::uint32_t slot) noexcept;
    // The slot's commands for `generation` were submitted (before the watcher hears of them).
    void submitted(std::uint32_t slot, std::uint64_t generation) noexcept;
    // The watcher saw the job of `generation` in `slot` complete: its time, unless reuse() took
    // it (or its commands did not run to the end: a lost device).
    [[nodiscard]] std::optional<JobTime> completed(std::uint32_t slot,
                                                   std::uint64_t generation) noexcept;

private:
    JobTimer(const Device& device, std::uint32_t slots, TimestampPool pool, Buffer results);
    // Reads the slot's pair for its pending generation and clears it; caller holds m_mutex.
    [[nodiscard]] std::optional<JobTime> take_locked(std::uint32_t slot) noexcept;

    static constexpr VkDeviceSize k_slot_bytes = 4 * sizeof(std::uint64_t);
    const Device& m_device;
    std::uint32_t m_slots;
    Handle<VkQueryPool> m_queries;
    double m_period_ns;
    std::uint64_t m_mask;
    // Per slot: (begin, available, end, available), written by the slot's commands.
    Buffer m_results;
    std::mutex m_mutex;
    std::vector<std::uint64_t> m_pending; // per slot: the generation its pair is for (0: none)
};

} // namespace tandem::detail
