// Must not compile: a category outside tandem/log.hpp's list (a typo of "transfer").
// tests/core/CMakeLists.txt compiles it and expects the check's sentence in the error.
#include "core/log.hpp"

void log_with_a_typo() {
    tandem::detail::log_warn("transfers", "{} failed", "the copy");
}
