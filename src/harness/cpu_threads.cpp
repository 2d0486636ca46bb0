#include "harness/cpu_threads.hpp"

#include <cstdlib>
#include <string>
#include <thread>

#include "core/cpu.hpp"

namespace tandem::harness {

void keep_cores_from_cpu_devices() {
    const auto threads = detail::cpu_device_threads(std::thread::hardware_concurrency());
    if (threads && std::getenv("LP_NUM_THREADS") == nullptr) {
        (void)setenv("LP_NUM_THREADS", std::to_string(*threads).c_str(), 0);
    }
}

} // namespace tandem::harness
