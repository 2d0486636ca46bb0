#include "core/cpu.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace tandem::detail {

namespace {

// TANDEM_SPARE_CORES as 1 (true) or 0 (false); nullopt when unset or anything else.
std::optional<bool> forced_spare_cores() noexcept {
    static const std::optional<bool> forced = []() -> std::optional<bool> {
        if (const char* value = std::getenv("TANDEM_SPARE_CORES")) {
            if (std::strcmp(value, "1") == 0) {
                return true;
            }
            if (std::strcmp(value, "0") == 0) {
                return false;
            }
        }
        return std::nullopt;
    }();
    return forced;
}

} // namespace

bool has_spare_cores() noexcept {
    static const bool spare = forced_spare_cores().value_or(std::thread::hardware_concurrency() >=
                                                            k_spare_core_threshold);
    return spare;
}

std::optional<std::uint32_t> cpu_device_threads(std::uint32_t hardware_threads) noexcept {
    if (hardware_threads < k_spare_core_threshold) {
        return std::nullopt;
    }
    return hardware_threads - k_cores_kept_from_cpu_devices;
}

bool may_poll(bool cpu_device_present) noexcept {
    if (const auto forced = forced_spare_cores()) {
        return *forced;
    }
    return has_spare_cores() && !cpu_device_present;
}

namespace {
std::atomic<std::uint64_t> g_tightened{0};
} // namespace

void tighten_timer_slack() noexcept {
#if defined(__linux__)
    if (prctl(PR_SET_TIMERSLACK, k_thread_timer_slack_ns, 0, 0, 0) == 0 &&
        prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == static_cast<int>(k_thread_timer_slack_ns)) {
        // Relaxed: a count for tests, ordering nothing.
        g_tightened.fetch_add(1, std::memory_order_relaxed);
    }
#endif
}

std::uint64_t tightened_threads() noexcept {
    return g_tightened.load(std::memory_order_relaxed);
}

} // namespace tandem::detail
