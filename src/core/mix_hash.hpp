// mix32: a 32-bit integer hash (xor-shift and multiply, full avalanche), the one the pattern
// workload and its shader use (shaders/pattern.comp) and tests use for deterministic grain.
#pragma once

#include <cstdint>

namespace tandem::detail {

[[nodiscard]] constexpr std::uint32_t mix32(std::uint32_t v) noexcept {
    v ^= v >> 16;
    v *= 0x7feb352du;
    v ^= v >> 15;
    v *= 0x846ca68bu;
    v ^= v >> 16;
    return v;
}

} // namespace tandem::detail
