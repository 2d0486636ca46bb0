// TaskRegistry: the runtime's fixed-capacity table of task registrations (Task, task_state.hpp),
// one per (task, device). It owns the Tasks: made at registration, destroyed by clear() at
// shutdown, once every thread that reads them has stopped and their work drained. A TaskId is
// the index of its registration, usable by any thread the moment add() returns it.
//
// Threads: add() on the registering thread (the application's, or the scheduler's under its
// schedule lock), serialised by the registration lock; find(), count() and operator[] on any
// thread, without a lock: the table never reallocates (capacity k_capacity, reserved up front)
// and the count is published with release after the Task is built, read with acquire.
// Lock order: the registration lock is the outermost; under it only the placement callback
// runs (it reads the workers' task counts), never a task's mutex.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/task_state.hpp"

namespace tandem::detail {

class TaskRegistry {
public:
    static constexpr std::size_t k_capacity = 256;

    TaskRegistry() { m_tasks.reserve(k_capacity); }
    TaskRegistry(const TaskRegistry&) = delete;
    TaskRegistry& operator=(const TaskRegistry&) = delete;

    // Registers a task on the worker `place` returns (called under the registration lock, so
    // concurrent registrations place one after another) and counts it on that worker. Throws
    // Error when the table is full, or what `place` throws; nothing is registered then.
    Task& add(const TaskDesc& desc, const std::function<Worker&()>& place,
              std::shared_ptr<GenerationCounter> generations);

    // The registration `id`; null when there is none. Lock-free.
    [[nodiscard]] Task* find(TaskId id) const noexcept {
        // Acquire: pairs with the release in add(), so the task is fully built.
        const std::size_t count = m_count.load(std::memory_order_acquire);
        return id < count ? m_tasks[id].get() : nullptr;
    }
    // Registrations [0, count()) are fully built. Lock-free.
    [[nodiscard]] std::size_t count() const noexcept {
        // Acquire: as find().
        return m_count.load(std::memory_order_acquire);
    }
    // The registration at `index` < count().
    [[nodiscard]] Task& operator[](std::size_t index) const noexcept { return *m_tasks[index]; }

    // Destroys every Task (shutdown: nothing may read them any more).
    void clear() noexcept;

private:
    std::mutex m_mutex;                         // the registration lock
    std::vector<std::unique_ptr<Task>> m_tasks; // capacity k_capacity, never reallocates
    // Tasks [0, m_count) are fully built; release on registration, acquire on lookup.
    std::atomic<std::size_t> m_count{0};
};

} // namespace tandem::detail
