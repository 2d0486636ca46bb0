#include "runtime/task_registry.hpp"

#include <string>

#include "tandem/error.hpp"

namespace tandem::detail {

Task& TaskRegistry::add(const TaskDesc& desc, const std::function<Worker&()>& place,
                        std::shared_ptr<GenerationCounter> generations) {
    std::lock_guard lock(m_mutex);
    if (m_tasks.size() >= k_capacity) {
        throw Error("Too many task registrations",
                    "A runtime holds at most " + std::to_string(k_capacity) +
                        " (a task the scheduler moved or measured counts once per device)");
    }
    Worker& worker = place();
    const auto id = static_cast<TaskId>(m_tasks.size());
    m_tasks.push_back(std::make_unique<Task>(id, desc, worker, std::move(generations)));
    Task& task = *m_tasks.back();
    worker.task_count.fetch_add(1, std::memory_order_relaxed);
    // Release: find() on another thread sees the whole task once it sees the count.
    m_count.store(m_tasks.size(), std::memory_order_release);
    return task;
}

void TaskRegistry::clear() noexcept {
    std::lock_guard lock(m_mutex);
    m_count.store(0, std::memory_order_release);
    m_tasks.clear();
}

} // namespace tandem::detail
