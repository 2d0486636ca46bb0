// libFuzzer target: decoding snapshot bytes (what a worker receives) must refuse anything that
// is not exactly one encoded snapshot, never crash; what it accepts re-encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "scene/snapshot_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    if (const auto snapshot = tandem::detail::decode_snapshot(bytes)) {
        const auto again = tandem::detail::encode_snapshot(*snapshot);
        if (again.size() != size || std::memcmp(again.data(), data, size) != 0) {
            std::abort();
        }
    }
    return 0;
}
