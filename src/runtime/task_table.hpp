// TaskTable: the runtime's tasks by TaskId, with no fixed capacity. An id is an index into the
// table and the generation of that entry: when a task leaves the table its entry's generation
// grows, so the old id never names another task (an entry whose generation would wrap is never
// used again). Each table has a tag of its own (TaskId::runtime), so an id another runtime of the
// process gave names no task here. A task stays in the table after it is unregistered, answering
// UnknownTask to every call but release, until its last instance is retired; then remove() takes it
// out.
//
// Threads: any. find() and snapshot() take a shared lock for a moment (no thread holds the
// exclusive one for longer than a push or an erase); the Tasks are shared_ptrs, so a caller
// keeps its task alive for the length of its call whatever another thread removes meanwhile.
// Never holds a task's mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "runtime/task.hpp"

namespace tandem::detail {

class TaskTable {
public:
    TaskTable();
    // The tag of this table's ids.
    [[nodiscard]] std::uint32_t tag() const noexcept { return m_tag; }

    // A new entry for `make(id)`'s task. Throws what `make` throws, or std::bad_alloc; nothing
    // is added then.
    template <typename Make>
    std::shared_ptr<Task> add(Make&& make) {
        std::unique_lock lock(m_mutex);
        const bool reuse = !m_free.empty();
        if (!reuse) {
            m_entries.push_back(Entry{});
        }
        const auto index = reuse ? m_free.back() : static_cast<std::uint32_t>(m_entries.size() - 1);
        std::shared_ptr<Task> task;
        try {
            task = make(TaskId{index, m_entries[index].generation, m_tag});
        } catch (...) {
            if (!reuse) {
                m_entries.pop_back();
            }
            throw;
        }
        if (reuse) {
            m_free.pop_back();
        }
        m_entries[index].task = task;
        ++m_live;
        return task;
    }
    // The task `id` names (live or unregistered); null when none does.
    [[nodiscard]] std::shared_ptr<Task> find(TaskId id) const;
    // The task `id` names while it is live; null once it is unregistered, or when none is named.
    // Takes the task's mutex for a moment: caller holds no task's mutex.
    [[nodiscard]] std::shared_ptr<Task> live(TaskId id) const;
    // Takes the task out for good: its id never names a task again.
    void remove(TaskId id);
    // Every task in the table, into `out` (cleared first; its capacity is reused).
    void snapshot(std::vector<std::shared_ptr<Task>>& out) const;
    // Tasks in the table (live and unregistered ones not yet removed).
    [[nodiscard]] std::size_t size() const;
    // Drops every task (shutdown).
    void clear();

private:
    struct Entry {
        std::uint32_t generation = 1; // of the task it holds, or of the next one
        std::shared_ptr<Task> task;
    };
    const std::uint32_t m_tag;
    mutable std::shared_mutex m_mutex;
    std::vector<Entry> m_entries;
    std::vector<std::uint32_t> m_free; // indices without a task
    std::size_t m_live = 0;
};

} // namespace tandem::detail
