// The layer's log: one line per call on stderr, prefixed "tandem-layer: ". The layer never owns
// stdout (the program's own output must stay as it is); it speaks only when something is wrong,
// or about everything it does when TANDEM_FRAMEGEN_LOG=1. Any thread may call these.
#pragma once

#include <string_view>

namespace tandem::layer {

// Something is wrong (a bad setting, a report that could not be written): always printed.
void log_problem(std::string_view line);

// What the layer did (a device opened, a swapchain's usage changed, a report written): printed
// only when TANDEM_FRAMEGEN_LOG=1.
void log_info(std::string_view line);

} // namespace tandem::layer
