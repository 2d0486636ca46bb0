// libFuzzer target: decoding capture-snapshot bytes (what a capture task's worker receives from
// tandem::encode_capture) must refuse anything that is not exactly one encoded capture, never
// crash; what it accepts re-encodes to the same bytes, and checking it against a scene and
// turning it into the renderer's snapshot never crash either.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "scene/capture_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    if (const auto frame = tandem::detail::decode_capture_frame(bytes)) {
        const auto again = tandem::detail::encode_capture_frame(*frame);
        if (again.size() != size || std::memcmp(again.data(), data, size) != 0) {
            std::abort();
        }
        if (tandem::detail::check_capture_frame(*frame, 4, frame->instances.size()).empty()) {
            (void)tandem::detail::frame_snapshot(*frame, 1.5f);
        }
    }
    return 0;
}
