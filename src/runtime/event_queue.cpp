#include "runtime/event_queue.hpp"

#include <iterator>
#include <string>
#include <utility>

namespace tandem::detail {

void EventQueue::post(RuntimeEventKind kind, TaskId task, std::uint32_t device,
                      std::uint64_t generation, TaskError error, std::string_view what,
                      std::string_view more, std::string_view last) noexcept {
    RuntimeEvent event;
    event.kind = kind;
    event.task = task;
    event.device = device;
    event.generation = generation;
    event.error = error;
    bool composed = false;
    try {
        event.message.reserve(what.size() + more.size() + last.size());
        event.message.append(what).append(more).append(last);
        composed = true;
    } catch (...) {
        // Out of memory for the sentence: the event is counted dropped below.
    }
    std::lock_guard lock(m_mutex);
    event.sequence = ++m_sequence;
    if (!composed || m_capacity == 0) {
        ++m_dropped;
        return;
    }
    try {
        if (m_events.size() >= m_capacity) {
            m_events.pop_front(); // the oldest goes: the log keeps the newest
            ++m_dropped;
        }
        m_events.push_back(std::move(event));
    } catch (...) {
        ++m_dropped;
    }
}

std::vector<RuntimeEvent> EventQueue::take() {
    std::lock_guard lock(m_mutex);
    std::vector<RuntimeEvent> out(std::make_move_iterator(m_events.begin()),
                                  std::make_move_iterator(m_events.end()));
    m_events.clear();
    return out;
}

std::uint64_t EventQueue::dropped() const noexcept {
    std::lock_guard lock(m_mutex);
    return m_dropped;
}

} // namespace tandem::detail
