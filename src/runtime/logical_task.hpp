// LogicalTask: one task as the application knows it (one TaskId for its whole life), over its
// registrations in RuntimeImpl, one per device it ran on or was measured on. Submits go to the
// active registration; acquire hands out the newest output of the active registration once it
// is newer than what was shown, else the shown registration's (so a move never shows a blank or
// an older frame). All registrations draw their generations from one counter, so outputs of
// different devices compare.
//
// Threads: `mutex` guards everything below it; the scheduler (pump's thread) changes the
// registrations, the application's threads read them in submit/acquire/release/stats. Lock
// order: a logical task's mutex before a registration's (RuntimeImpl's Task::mutex), never
// after.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/task_state.hpp"
#include "sched/cost_model.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

// One device's registration of a logical task.
struct Registration {
    std::uint32_t device = 0; // adapter index
    TaskId id = 0;            // RuntimeImpl's registration
    bool trial = true;        // only trial jobs ran here (it never was active)
    // The registration's newest generation when it last became active: older outputs of it
    // (trial jobs) are not shown.
    std::uint64_t activated_after = 0;
    // The scheduler's view (its thread only).
    std::uint64_t ready_seen = 0; // TaskStats::ready at the last observation
    std::uint32_t trial_jobs = 0; // trial jobs submitted here
    bool unusable = false;        // its preparation or a trial failed: never chosen again
    // Its transfer link failed for its path (RuntimeImpl::link_failed): replaced by a fallback
    // registration on the same device (runtime/link_fallback.hpp), never used again.
    bool link_failed = false;
};

struct LogicalTask {
    LogicalTask(TaskDesc task_desc, std::string task_key, WorkloadShape task_shape,
                bool automatic_placement)
        : desc(std::move(task_desc)), key(std::move(task_key)), shape(std::move(task_shape)),
          automatic(automatic_placement) {}

    TaskId id = 0; // the first registration's id (set before the task is published)
    const TaskDesc desc;
    const std::string key; // the scheduler's name for it (unique among the runtime's tasks)
    const WorkloadShape shape;
    const bool automatic;
    const std::shared_ptr<GenerationCounter> generations = std::make_shared<GenerationCounter>(0);
    // Set while trial jobs may need the application's latest snapshot (copied in submit).
    std::atomic<bool> keep_snapshot{false};

    mutable std::mutex mutex;
    std::vector<Registration> regs; // never shrinks; [0] is the first
    std::size_t active = 0;
    std::optional<std::size_t> pending; // a move's registration, still being prepared
    // A fallback's registration on the active one's device, still being prepared (LinkFallback),
    // and why the task has none when its preparation failed too (submits answer Failed with it).
    std::optional<std::size_t> fallback;
    std::string fallback_error;
    std::size_t shown = 0;
    std::uint64_t shown_generation = 0; // newest generation handed out
    std::uint64_t moves = 0;
    std::vector<std::byte> snapshot; // the latest submitted, while keep_snapshot
    bool has_snapshot = false;
    bool external_execute = false; // the application reports execute times itself

    // The registration on `device` whose link has not failed, if any. Caller holds mutex (or is
    // the scheduler's thread).
    [[nodiscard]] std::optional<std::size_t> on(std::uint32_t device) const noexcept {
        for (std::size_t i = 0; i < regs.size(); ++i) {
            if (regs[i].device == device && !regs[i].link_failed) {
                return i;
            }
        }
        return std::nullopt;
    }
};

} // namespace tandem::detail
