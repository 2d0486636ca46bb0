#include "core/cpu.hpp"

#include <cstdlib>
#include <cstring>
#include <thread>

namespace tandem::detail {

bool has_spare_cores() noexcept {
    static const bool spare = [] {
        if (const char* forced = std::getenv("TANDEM_SPARE_CORES")) {
            if (std::strcmp(forced, "1") == 0) {
                return true;
            }
            if (std::strcmp(forced, "0") == 0) {
                return false;
            }
        }
        return std::thread::hardware_concurrency() >= k_spare_core_threshold;
    }();
    return spare;
}

} // namespace tandem::detail
