// EventQueue: the RuntimeEvents (tandem/runtime.hpp) Tandem's threads post for the application
// to take (Runtime::take_events). A bounded log: at most `capacity` wait; one more pushes the
// oldest out and counts it dropped, so an application that never takes them costs a fixed
// amount of memory. post() is called with task and instance mutexes held: its own mutex is the
// innermost lock, and it never calls out (no callback runs on Tandem's threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string_view>
#include <vector>

#include "tandem/runtime.hpp"

namespace tandem::detail {

class EventQueue {
public:
    explicit EventQueue(std::size_t capacity) : m_capacity(capacity) {}
    EventQueue(const EventQueue&) = delete;
    EventQueue& operator=(const EventQueue&) = delete;

    // Keeps an event whose message is `what`, `more` and `last` in a row. Out of memory it is
    // counted dropped instead.
    void post(RuntimeEventKind kind, TaskId task, std::uint32_t device, std::uint64_t generation,
              TaskError error, std::string_view what, std::string_view more = {},
              std::string_view last = {}) noexcept;
    // Every event kept, oldest first; none kept afterwards. Throws std::bad_alloc (they stay).
    [[nodiscard]] std::vector<RuntimeEvent> take();
    [[nodiscard]] std::uint64_t dropped() const noexcept;

private:
    const std::size_t m_capacity;
    mutable std::mutex m_mutex;
    std::deque<RuntimeEvent> m_events;
    std::uint64_t m_sequence = 0;
    std::uint64_t m_dropped = 0;
};

} // namespace tandem::detail
