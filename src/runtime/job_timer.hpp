// JobTimer: the GPU time of every job of one task registration, for whatever workload the task
// runs. It owns a timestamp query pool with two queries per slot and a small host-visible
// buffer; the job thread brackets the commands Workload::record wrote for a job with a
// timestamp before (after resetting the slot's two queries in the same command buffer) and one
// after, and the same commands copy the pair into the slot's part of the buffer
// (vkCmdCopyQueryPoolResults, with availability). So a finished job's time is read from host
// memory: no thread calls vkGetQueryPoolResults, which on lavapipe waits for the whole device
// (it calls vkDeviceWaitIdle whatever the flags), and reading costs the reader nothing on the
// worker's device. What is timed is the workload's own commands on the worker's main queue:
// not Tandem's layout transition for the transfer, not the transfer itself.
//
// Each slot's pair belongs to the generation submitted last in it. completed() (the worker's
// completion watcher, once it saw the job's work complete) takes it; reuse() (the job thread,
// before it records the slot again, when the slot's previous job has completed by the slot
// ring's rules) takes it when the watcher has not yet. So each job's time is taken once,
// whichever comes first. GpuTimes collects them; its owner (Task) guards it with its mutex.
//
// Threads: made on the preparation thread (create(); null where the worker's main queue family
// has no timestampValidBits or no timestamp period); begin/end/reuse/submitted on the worker's
// job thread, completed on its watcher. m_mutex guards which generation each slot holds; it is
// taken by those two threads only, never while holding another lock, and held only to read a
// slot's 32 bytes. Nothing here waits. Lifetime: destroyed with its task, after the task's work
// drained.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/handle.hpp"
#include "core/resources.hpp"
#include "runtime/latency.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

// One job's GPU time.
struct JobTime {
    std::uint64_t generation = 0;
    double us = 0;
};

// The GPU times of one registration's jobs (the owner serialises access: Task::mutex).
struct GpuTimes {
    LatencySamples samples;
    double total_us = 0;
    std::uint64_t first_generation = 0; // 0: none yet
    double first_us = 0;

    void add(const JobTime& t) {
        samples.add(t.us);
        total_us += t.us;
        // Times arrive almost in generation order; the first job's is the oldest generation's.
        if (first_generation == 0 || t.generation < first_generation) {
            first_generation = t.generation;
            first_us = t.us;
        }
    }
    // What stats() copies under the owner's lock, to summarise outside it.
    struct Snapshot {
        LatencySamples::Snapshot samples;
        double total_us = 0;
        double first_us = 0;
    };
    [[nodiscard]] Snapshot snapshot() const { return {samples.snapshot(), total_us, first_us}; }
    [[nodiscard]] static GpuTimeStats summarise(Snapshot snapshot);
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
