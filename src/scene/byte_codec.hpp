// ByteWriter and ByteReader: the trivially copyable values of a snapshot's wire format, appended
// to and read from a byte buffer in host byte order (snapshots never leave the process). The
// reader refuses to read past the end instead of reading garbage. Used by the frame-snapshot and
// capture-snapshot codecs.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace tandem::detail {

struct ByteWriter {
    std::vector<std::byte>& out;
    template <typename T>
    void put(const T& value) {
        static_assert(std::is_trivially_copyable_v<T>);
        const auto* p = reinterpret_cast<const std::byte*>(&value);
        out.insert(out.end(), p, p + sizeof(T));
    }
};

struct ByteReader {
    std::span<const std::byte> in;
    std::size_t at = 0;
    // False, and nothing read, when fewer than sizeof(T) bytes are left.
    template <typename T>
    [[nodiscard]] bool get(T& value) {
        static_assert(std::is_trivially_copyable_v<T>);
        if (in.size() - at < sizeof(T)) {
            return false;
        }
        std::memcpy(&value, in.data() + at, sizeof(T));
        at += sizeof(T);
        return true;
    }
};

} // namespace tandem::detail
