#include "runtime/task_table.hpp"

#include <atomic>
#include <limits>
#include <mutex>

namespace tandem::detail {

namespace {

// Tags of the process's runtimes, from 1 (0 is no runtime's: a default or hand-made TaskId).
std::atomic<std::uint32_t> g_tags{0};

} // namespace

TaskTable::TaskTable() : m_tag(g_tags.fetch_add(1, std::memory_order_relaxed) + 1) {}

std::shared_ptr<Task> TaskTable::find(TaskId id) const {
    std::shared_lock lock(m_mutex);
    if (id.runtime != m_tag || id.index >= m_entries.size()) {
        return nullptr;
    }
    const Entry& e = m_entries[id.index];
    return e.generation == id.generation ? e.task : nullptr;
}

std::shared_ptr<Task> TaskTable::live(TaskId id) const {
    std::shared_ptr<Task> task = find(id);
    if (task) {
        std::lock_guard lock(task->mutex);
        if (!task->live) {
            return nullptr;
        }
    }
    return task;
}

void TaskTable::remove(TaskId id) {
    std::shared_ptr<Task> gone; // destroyed outside the lock
    std::unique_lock lock(m_mutex);
    if (id.runtime != m_tag || id.index >= m_entries.size()) {
        return;
    }
    Entry& e = m_entries[id.index];
    if (e.generation != id.generation || !e.task) {
        return;
    }
    gone = std::move(e.task);
    --m_live;
    if (e.generation == std::numeric_limits<std::uint32_t>::max()) {
        return; // never used again: its next id would wrap to one that named a task
    }
    ++e.generation;
    m_free.push_back(id.index);
}

void TaskTable::snapshot(std::vector<std::shared_ptr<Task>>& out) const {
    out.clear();
    std::shared_lock lock(m_mutex);
    out.reserve(m_live);
    for (const Entry& e : m_entries) {
        if (e.task) {
            out.push_back(e.task);
        }
    }
}

std::size_t TaskTable::size() const {
    std::shared_lock lock(m_mutex);
    return m_live;
}

void TaskTable::clear() {
    std::vector<Entry> gone;
    std::unique_lock lock(m_mutex);
    gone.swap(m_entries);
    m_free.clear();
    m_live = 0;
}

} // namespace tandem::detail
