// RuntimeProbe: the hooks Tandem's tests use to reach inside a running runtime, kept out of
// RuntimeImpl (not installed, not part of the API). Each acts on a task's active instance and
// does nothing for an id that names no live task.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/slot_ring.hpp"
#include "runtime/task_stats.hpp"
#include "tandem/task_id.hpp"

namespace tandem {
class Runtime;
}

namespace tandem::detail {

class RuntimeImpl;

class RuntimeProbe {
public:
    explicit RuntimeProbe(RuntimeImpl& impl) noexcept : m_impl(impl) {}
    explicit RuntimeProbe(Runtime& runtime) noexcept;

    // The job of `generation` of the task's active instance waits on the worker's thread until
    // release_held(task).
    void hold_generation(TaskId id, std::uint64_t generation);
    void release_held(TaskId id);
    // The next worker submit of the task's active worker reports VK_ERROR_DEVICE_LOST.
    void force_device_lost(TaskId id);
    // The slots of the task's active instance.
    [[nodiscard]] std::vector<SlotState> slot_states(TaskId id) const;
    // The active instance's recent timings (what the scheduler polls).
    [[nodiscard]] TaskPulse pulse(TaskId id, std::size_t recent) const;
    // The completion thread's rounds so far (CompletionTracker::rounds).
    [[nodiscard]] std::uint64_t completion_rounds() const noexcept;

private:
    RuntimeImpl& m_impl;
};

} // namespace tandem::detail
