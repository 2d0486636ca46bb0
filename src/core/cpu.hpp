// What the host CPU allows Tandem's own threads. Any thread.
#pragma once

#include <cstdint>

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

} // namespace tandem::detail
