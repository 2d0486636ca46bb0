#include "harness/png.hpp"

#include "render/headless.hpp"

namespace tandem::harness {

void write_png(const std::string& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::uint8_t> rgba) {
    detail::write_png(path, width, height, rgba);
}

} // namespace tandem::harness
