// LinkFailures: a transfer path that fails in use. It owns the runtime's PathHealth (which
// paths of each (worker, primary) pair passed their self-test and which were dropped; null
// without src/transfer), which preparations consult. When a task's transport fails while its
// worker's device works, retire() drops the path for the pair and retires the task's link: its
// Free and in-flight slots retire (its published output stays readable) and it answers Failed
// with the reason; its logical task is then prepared again on the same device with the next
// path (runtime/link_fallback.hpp). A failure that is the device's is left to the caller, which
// loses the worker, as before.
//
// Threads: retire() from the pump (CompletionTracker) and the worker's transfer thread
// (JobPipeline), which may both see one failure: the first retires, the second sees it done;
// the queries from any thread. Lock order: retire() takes the task's mutex with nothing else
// held. Memory order: link_failed is stored with release after link_error and the retired
// slots, and read with acquire.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "runtime/slot_transport.hpp"
#include "runtime/task_registry.hpp"

namespace tandem::detail {

class LinkFailures {
public:
    LinkFailures(const TaskRegistry& tasks, const Device& primary,
                 const std::atomic<std::int64_t>& timeout_ms)
        : m_tasks(tasks), m_primary(primary), m_timeout_ms(timeout_ms) {}

    [[nodiscard]] PathHealth* health() const noexcept { return m_health.get(); }
    // The task's transport failed: true when its path is to blame (dropped for the pair, the
    // task's link retired: failed()), false when its worker's device is (the caller loses the
    // worker). `from_pump`: the pump noticed it (a bridge timeout is then the device's).
    [[nodiscard]] bool retire(Task& task, bool from_pump) noexcept;
    // Whether the registration's link failed for its path (not its device), and why; the paths
    // dropped for its (device, primary) pair.
    [[nodiscard]] bool failed(TaskId id) const noexcept;
    [[nodiscard]] std::string failure(TaskId id) const;
    [[nodiscard]] std::vector<DroppedTransferPath> dropped_paths(TaskId id) const;

private:
    const TaskRegistry& m_tasks;
    const Device& m_primary;
    const std::atomic<std::int64_t>& m_timeout_ms;
    std::shared_ptr<PathHealth> m_health = make_path_health();
};

} // namespace tandem::detail
