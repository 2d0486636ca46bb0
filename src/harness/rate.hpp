// Parsing of request rates (streams, the CLI, the benchmarks). Pure function; any thread.
#pragma once

#include <string_view>

namespace tandem::harness {

// A rate in Hz: any positive finite number, with '.' or ',' as the decimal mark ("37.5",
// "37,5"). Throws tandem::Error with a sentence naming the bad text ("0", "-1", "nan", "inf",
// "abc", "").
[[nodiscard]] double parse_rate_hz(std::string_view text);

} // namespace tandem::harness
