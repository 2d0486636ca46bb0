// LinkFallback: a logical task whose active registration's transfer link failed for its path
// (RuntimeImpl::link_failed: the path was dropped for the pair, the device still works) is
// registered again on the same device. That registration's preparation negotiates past the
// dropped path and self-tests the next one (make_link_transport with the runtime's PathHealth);
// once it is prepared it becomes the active one. Meanwhile submits answer Preparing, and acquire
// keeps handing out the failed registration's last output (TaskRouter's never-blank rule); the
// generations come from the task's one counter, so they go on from where they were. When the
// new registration cannot be prepared either (no path left), the task answers Failed with why.
//
// Threads: step() runs under the TaskRouter's schedule lock (from pump), like the Scheduler; it
// never blocks on a GPU (preparation runs on the runtime's preparation thread).
#pragma once

#include <vector>

#include "runtime/logical_task.hpp"

namespace tandem::detail {

class RuntimeImpl;

class LinkFallback {
public:
    explicit LinkFallback(RuntimeImpl& runtime) : m_runtime(&runtime) {}

    // Starts the fallback of every task whose active link failed, and makes each prepared
    // fallback registration active.
    void step(const std::vector<LogicalTask*>& tasks);

private:
    void start(LogicalTask& task);
    void settle(LogicalTask& task);

    RuntimeImpl* m_runtime;
};

} // namespace tandem::detail
