// Byte encoding of FrameSnapshot, for handing a snapshot to a worker through an interface that
// carries bytes (the runtime's submit(task, bytes)). Host-local format (native endianness and
// float layout): it never leaves the process. Pure functions; any thread; decode never throws.
// The previous frame's camera and transforms (motion) are not carried: a decoded snapshot has
// none, so it renders without motion.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "scene/snapshot.hpp"

namespace tandem::detail {

[[nodiscard]] std::vector<std::byte> encode_snapshot(const FrameSnapshot& snapshot);

// Why decode_snapshot refused some bytes: the byte offset of the field at fault and what is wrong
// with it (static text, e.g. "instance count does not match the bytes that follow").
struct SnapshotRefusal {
    std::size_t byte = 0;
    const char* reason = "";
};

// The snapshot, or nullopt when `bytes` is not exactly one encoded snapshot; then `*why` (when
// given) says where and why.
[[nodiscard]] std::optional<FrameSnapshot> decode_snapshot(std::span<const std::byte> bytes,
                                                           SnapshotRefusal* why = nullptr) noexcept;

} // namespace tandem::detail
