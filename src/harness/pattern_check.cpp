#include "harness/pattern_check.hpp"

#include "workloads/pattern.hpp"

namespace tandem::harness {

std::int64_t pattern_mismatch(const std::uint8_t* pixels, std::uint64_t generation,
                              std::uint32_t width, std::uint32_t height) noexcept {
    return detail::pattern_mismatch(pixels, generation, width, height);
}

} // namespace tandem::harness
