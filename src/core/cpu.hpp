// What the host CPU allows Tandem's own threads. Any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <thread>
#include <utility>

#include "core/log.hpp"

namespace tandem::detail {

// Hardware threads at which a machine counts as having cores to spare.
inline constexpr std::uint32_t k_spare_core_threshold = 8;

// True when the machine has at least k_spare_core_threshold hardware threads. Tandem's threads
// poll briefly before sleeping only then (a poll saves a wake-up of tens of microseconds per
// job); on a smaller machine polling takes CPU time from the application and from a CPU Vulkan
// device such as lavapipe, so they sleep at once. TANDEM_SPARE_CORES=1 or 0 overrides the
// count (read once per process), so both behaviours can be tested on any machine.
[[nodiscard]] bool has_spare_cores() noexcept;

// Whether Tandem's threads may poll before sleeping where these devices run: a machine with
// cores to spare, and no CPU Vulkan device among them (lavapipe renders on every core, so a
// polling thread takes CPU time straight from the worker it waits for). TANDEM_SPARE_CORES=1
// or 0 decides alone when set.
[[nodiscard]] bool may_poll(bool cpu_device_present) noexcept;

// How late the kernel may wake a sleeping thread of Tandem's that sleeps instead of polling
// (Linux timer slack): 1 us. Where Tandem's threads may not poll (may_poll false: a CPU device
// among the runtime's devices, or a small machine) they wait for GPU progress in short sleeps
// (tens of microseconds), and every hop of a frame through such a thread pays what they
// oversleep: under Linux's default slack of 50 us a 10 us sleep lasted about 80 us on the
// development machine (32 us with 1 us of slack). On the H200 with lavapipe as the worker it
// lifted 960x540 inputs by about a quarter with the bridge's short sleeps (docs/performance.md).
// Threads that poll first keep the default: on the H200 opened twice, where they do, 1 us of
// slack made their backed-off polls more frequent and 960x540 inputs about a sixth slower.
inline constexpr unsigned long k_thread_timer_slack_ns = 1000;

// Sets the calling thread's timer slack to k_thread_timer_slack_ns (Linux; nothing elsewhere).
// Called at the start of Tandem's own threads that sleep instead of polling (start_waiting_thread:
// a Worker's made without `spin`, the completion thread of a runtime whose threads may not poll;
// and by a PairBridge whose bridges never spin); never on the application's. Counts the thread in
// tightened_threads() once the kernel holds it to that slack.
void tighten_timer_slack() noexcept;

// A thread of Tandem's (start_logged_thread) running `body`; one that `sleeps` instead of polling
// (may_poll false) runs it under tighten_timer_slack().
//     m_thread = start_waiting_thread(!spin, [this] { run(); });
template <typename Body>
[[nodiscard]] std::thread start_waiting_thread(bool sleeps, Body&& body) {
    return start_logged_thread([sleeps, body = std::forward<Body>(body)]() mutable {
        if (sleeps) {
            tighten_timer_slack();
        }
        body();
    });
}

// How many threads tighten_timer_slack() tightened in this process so far: the tests' witness,
// since not every kernel lets a process read another thread's slack (/proc/.../timerslack_ns).
[[nodiscard]] std::uint64_t tightened_threads() noexcept;

// Hardware threads a CPU Vulkan device keeps free for the application and Tandem's threads.
inline constexpr std::uint32_t k_cores_kept_from_cpu_devices = 2;

// How many threads a CPU Vulkan device (lavapipe, LP_NUM_THREADS) should render with on a
// machine of `hardware_threads`: all but k_cores_kept_from_cpu_devices where it has cores to
// spare (k_spare_core_threshold or more), else nullopt (the driver's default, every thread).
// On the H200 machine (16 threads), lavapipe rendering captures on all 16 made 1% of the
// primary's frames 14-22% longer (the application thread waited for a core); on 14, none.
// The library never sets the variable (an application's environment is its own): the `tandem`
// tools set it for themselves (harness/cpu_threads.hpp).
[[nodiscard]] std::optional<std::uint32_t>
cpu_device_threads(std::uint32_t hardware_threads) noexcept;

} // namespace tandem::detail
