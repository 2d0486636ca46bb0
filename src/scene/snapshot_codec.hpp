// Byte encoding of FrameSnapshot, for handing a snapshot to a worker through an interface that
// carries bytes (the runtime's submit(task, bytes)). Host-local format (native endianness and
// float layout): it never leaves the process. Pure functions; any thread; decode never throws.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "scene/snapshot.hpp"

namespace tandem::detail {

[[nodiscard]] std::vector<std::byte> encode_snapshot(const FrameSnapshot& snapshot);
// The snapshot, or nullopt when `bytes` is not exactly one encoded snapshot.
[[nodiscard]] std::optional<FrameSnapshot>
decode_snapshot(std::span<const std::byte> bytes) noexcept;

} // namespace tandem::detail
