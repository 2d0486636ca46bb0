// The check of a delivered "pattern" output against the workload's CPU reference, texel by
// texel (tandem/pattern.hpp defines one texel), as the frame loop and the benchmarks verify
// what they read back. Pure function; any thread.
#pragma once

#include <cstdint>

namespace tandem::harness {

// -1 when `pixels` (tightly packed RGBA8 rows of width x height) is generation `generation` of
// the pattern, else the index of the first texel that differs.
[[nodiscard]] std::int64_t pattern_mismatch(const std::uint8_t* pixels, std::uint64_t generation,
                                            std::uint32_t width, std::uint32_t height) noexcept;

} // namespace tandem::harness
