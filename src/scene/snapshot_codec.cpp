#include "scene/snapshot_codec.hpp"

#include <cstdint>
#include <cstring>
#include <new>

#include "scene/byte_codec.hpp"

namespace tandem::detail {
namespace {

constexpr std::uint32_t k_snapshot_magic = 0x314e5354; // "TSN1"

constexpr std::size_t k_snapshot_header = 4 + 64 + 64 + 12 + 36 + 16 + 4;
constexpr std::size_t k_snapshot_instance = 4 + 4 + 64;

} // namespace

std::vector<std::byte> encode_snapshot(const FrameSnapshot& s) {
    std::vector<std::byte> out;
    out.reserve(k_snapshot_header + s.instances.size() * k_snapshot_instance);
    ByteWriter w{out};
    w.put(k_snapshot_magic);
    w.put(s.camera.view);
    w.put(s.camera.projection);
    w.put(s.camera.position);
    w.put(s.light.direction);
    w.put(s.light.color);
    w.put(s.light.ambient);
    w.put(s.clear_color);
    w.put(static_cast<std::uint32_t>(s.instances.size()));
    for (const InstanceSnapshot& i : s.instances) {
        w.put(i.mesh);
        w.put(i.surface ? static_cast<std::int32_t>(*i.surface) : std::int32_t{-1});
        w.put(i.transform);
    }
    return out;
}

std::optional<FrameSnapshot> decode_snapshot(std::span<const std::byte> bytes,
                                             SnapshotRefusal* why) noexcept {
    static_assert(sizeof(glm::mat4) == 64 && sizeof(glm::vec3) == 12 && sizeof(glm::vec4) == 16);
    ByteReader r{bytes};
    auto refuse = [&](std::size_t byte, const char* reason) -> std::optional<FrameSnapshot> {
        if (why != nullptr) {
            *why = {byte, reason};
        }
        return std::nullopt;
    };
    try {
        std::uint32_t magic = 0;
        std::uint32_t count = 0;
        FrameSnapshot s;
        if (!r.get(magic) || magic != k_snapshot_magic) {
            return refuse(0, "not a Tandem snapshot (no \"TSN1\" magic)");
        }
        if (!r.get(s.camera.view) || !r.get(s.camera.projection) || !r.get(s.camera.position) ||
            !r.get(s.light.direction) || !r.get(s.light.color) || !r.get(s.light.ambient) ||
            !r.get(s.clear_color) || !r.get(count)) {
            return refuse(r.at, "the header is cut short");
        }
        if ((bytes.size() - r.at) / k_snapshot_instance != count ||
            (bytes.size() - r.at) % k_snapshot_instance != 0) {
            return refuse(r.at - sizeof(count),
                          "instance count does not match the bytes that follow");
        }
        s.instances.resize(count);
        for (InstanceSnapshot& i : s.instances) {
            std::int32_t surface = -1;
            const std::size_t at = r.at;
            // -1 is the one encoding of "no surface": anything below is not a snapshot.
            if (!r.get(i.mesh) || !r.get(surface) || !r.get(i.transform)) {
                return refuse(at, "an instance is cut short");
            }
            if (surface < -1) {
                return refuse(at + sizeof(i.mesh), "an instance's surface is out of range");
            }
            if (surface >= 0) {
                i.surface = static_cast<std::uint32_t>(surface);
            }
        }
        return s;
    } catch (const std::bad_alloc&) {
        return refuse(r.at, "out of memory");
    }
}

} // namespace tandem::detail
