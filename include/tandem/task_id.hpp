// TaskId: the name of one task of one runtime for its whole life (Runtime::register_task gives
// it). Plain value: copy freely, any thread. Ids are never reused for another task, and an id
// names a task only in the runtime that gave it: every other runtime answers it as it answers an
// id that names no task (TaskError::UnknownTask; refused as a chain's producer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "tandem/export.hpp"

namespace tandem {

// An index into the runtime's table, the generation of that entry, and which runtime of the
// process gave it. A default TaskId names no task.
struct TaskId {
    std::uint32_t index = 0;
    std::uint32_t generation = 0; // 0: no task
    std::uint32_t runtime = 0;    // the runtime that gave it (each runtime has its own tag)

    [[nodiscard]] explicit operator bool() const noexcept { return generation != 0; }
    [[nodiscard]] bool operator==(const TaskId&) const = default;
    [[nodiscard]] auto operator<=>(const TaskId&) const = default;
};
// "index:generation", for logs and messages.
[[nodiscard]] TANDEM_API std::string to_string(TaskId id);

} // namespace tandem

template <>
struct std::hash<tandem::TaskId> {
    std::size_t operator()(const tandem::TaskId& id) const noexcept {
        const std::uint64_t key = (std::uint64_t{id.generation} << 32) | id.index;
        return std::hash<std::uint64_t>{}(key ^
                                          (std::uint64_t{id.runtime} * 0x9e3779b97f4a7c15ull));
    }
};
