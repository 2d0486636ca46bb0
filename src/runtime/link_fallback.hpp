// LinkFallback: a task whose active instance's transfer link failed for its path
// (TaskInstance::link_failed: the path was dropped for the pair, the device still works) gets a
// new instance on the same device, its pending one (PendingKind::Fallback). That instance's
// preparation negotiates past the dropped path and self-tests the next one (make_link_transport
// with the runtime's PathHealth); once it is prepared the completion pass makes it active and
// retires the failed one. Meanwhile submits answer Preparing, and acquire keeps handing out the
// failed instance's last output (the never-blank rule); the generations come from the task's one
// counter, so they go on from where they were. When the new instance cannot be prepared either
// (no path left), the task answers Failed (TaskError::NoTransferPath) with why.
//
// Threads: step() runs under the runtime's schedule lock (from pump), like the Scheduler; it
// never blocks on a GPU (preparation runs on the runtime's preparation thread).
#pragma once

#include <memory>
#include <vector>

#include "runtime/task.hpp"

namespace tandem::detail {

class RuntimeImpl;

class LinkFallback {
public:
    explicit LinkFallback(RuntimeImpl& runtime) : m_runtime(&runtime) {}

    // Starts the fallback of every task whose active link failed.
    void step(const std::vector<std::shared_ptr<Task>>& tasks);

private:
    RuntimeImpl* m_runtime;
};

} // namespace tandem::detail
