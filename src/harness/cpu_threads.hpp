// The render threads of a CPU Vulkan device (lavapipe) in Tandem's tools: the `tandem` CLI and
// the benchmarks set LP_NUM_THREADS for themselves by core/cpu.hpp's rule, since the library
// never changes a process's environment. Main thread, before any Vulkan instance exists
// (lavapipe reads the variable then); not thread-safe (setenv).
#pragma once

namespace tandem::harness {

// Sets LP_NUM_THREADS to detail::cpu_device_threads(hardware threads) where that keeps cores
// free (machines of 8 or more threads), unless the user set it.
void keep_cores_from_cpu_devices();

} // namespace tandem::harness
