// PNG output of read-back images (main views, task outputs). Plain function; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tandem::harness {

// Writes tightly packed RGBA8 rows as a PNG; throws tandem::Error when the file cannot be
// written.
void write_png(const std::string& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::uint8_t> rgba);

} // namespace tandem::harness
