// How gtest prints a TaskId in a failure message ("3:1"), found by argument-dependent lookup.
#pragma once

#include <ostream>

#include "tandem/task.hpp"

namespace tandem {

inline std::ostream& operator<<(std::ostream& out, TaskId id) {
    return out << to_string(id);
}

} // namespace tandem
