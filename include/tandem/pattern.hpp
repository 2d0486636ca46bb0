// The built-in "pattern" workload's reference: texel (x, y) of generation g of a width-wide
// output, as the RGBA8 bytes packed little-endian (R in the low byte). Any delivered pattern
// image can be checked against it exactly.
//
// clang-format off
//     std::uint32_t expected = tandem::pattern_texel(lease.generation, 0, 0, lease.extent.width);
// clang-format on
#pragma once

#include <cstdint>

#include "tandem/export.hpp"

namespace tandem {

[[nodiscard]] TANDEM_API std::uint32_t pattern_texel(std::uint64_t generation, std::uint32_t x,
                                                     std::uint32_t y, std::uint32_t width) noexcept;

} // namespace tandem
