// The capture snapshot's internal form and its bytes: what tandem::encode_capture
// (tandem/capture.hpp) sends with a job and the capture workload decodes, checks against its
// scene and turns into the renderer's FrameSnapshot for the task's aspect ratio. Host-local
// encoding (native endianness and float layout): it never leaves the process. Pure functions;
// any thread; decode never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "scene/scene.hpp"
#include "scene/snapshot.hpp"
#include "scene/snapshot_codec.hpp"
#include "tandem/capture.hpp"

namespace tandem::detail {

struct CaptureFrame {
    struct Instance {
        std::uint32_t mesh = 0;
        std::uint32_t index = 0; // in the application's CaptureSnapshot::instances, for messages
        glm::mat4 transform{1.0f};
    };
    CameraModel camera; // the projection; its aspect is the task's
    glm::mat4 view{1.0f};
    glm::vec3 light_direction{0.0f, -1.0f, 0.0f}; // as given (normalised when drawn)
    glm::vec3 light_color{1.0f};
    glm::vec3 ambient{0.2f};
    glm::vec4 clear_color{0.0f, 0.0f, 0.0f, 1.0f};
    std::vector<Instance> instances;
};

// The application's snapshot; with `filtered`, only the instances its tag filter keeps.
[[nodiscard]] CaptureFrame capture_frame(const tandem::CaptureSnapshot& snapshot, bool filtered);

[[nodiscard]] std::vector<std::byte> encode_capture_frame(const CaptureFrame& frame);
// The frame, or nullopt when `bytes` is not exactly one encoded capture; then `*why` (when
// given) says where and why.
[[nodiscard]] std::optional<CaptureFrame>
decode_capture_frame(std::span<const std::byte> bytes, SnapshotRefusal* why = nullptr) noexcept;

// Why `frame` cannot be drawn from a scene of `mesh_count` meshes when `drawn` of its instances
// are drawn (one sentence, saying what to change); empty when it can.
[[nodiscard]] std::string check_capture_frame(const CaptureFrame& frame, std::size_t mesh_count,
                                              std::size_t drawn);

// A matrix in the public form, bit for bit.
[[nodiscard]] Matrix4 to_matrix4(const glm::mat4& m) noexcept;
// A scene camera with its world-to-camera `view` as the public CaptureCamera (the orthographic
// half width follows the task's aspect, as projection_matrix has it).
[[nodiscard]] tandem::CaptureCamera capture_camera(const CameraModel& model, const glm::mat4& view);

// The renderer's snapshot of a checked frame for a target of aspect `aspect` (width / height).
[[nodiscard]] FrameSnapshot frame_snapshot(const CaptureFrame& frame, float aspect);

} // namespace tandem::detail
