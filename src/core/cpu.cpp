#include "core/cpu.hpp"

#include <thread>

namespace tandem::detail {

bool has_spare_cores() noexcept {
    static const bool spare = std::thread::hardware_concurrency() >= k_spare_core_threshold;
    return spare;
}

} // namespace tandem::detail
