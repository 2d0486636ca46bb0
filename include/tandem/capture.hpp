// Capture tasks: a Scene (tandem/scene.hpp) drawn by Tandem's renderer on whichever device the
// task is placed on, from a CaptureSnapshot the application submits with each update (a camera,
// a light and the instances to draw: a mesh and its transform, with tags to filter by).
//
// clang-format off
//     tandem::TaskDesc desc;
//     desc.factory = tandem::capture_workload(scene); // uploads `scene` once per device
//     const tandem::TaskId task = runtime.register_task(desc);
//     tandem::CaptureSnapshot shot;
//     shot.camera.view = tandem::look_at({0, 2, 6}, {0, 0, 0}, {0, 1, 0});
//     shot.instances.push_back({mesh, tandem::translation(0, 1, 0), {"worker"}});
//     (void)runtime.submit(task, tandem::encode_capture(shot));
// clang-format on
//
// The output is a function of the snapshot, the scene, the task's size and the device type
// only: the same snapshot drawn on the primary and on a worker of the same kind gives the same
// pixels. The image is cleared to the clear colour, then every drawn instance is lit by one
// directional light plus ambient (Lambert), its material's colour times its image.
//
// Matrices are column-major, as glTF and GLSL keep them: element (row r, column c) is at
// [c * 4 + r], a translation at [12], [13], [14].
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tandem/export.hpp"
#include "tandem/scene.hpp"
#include "tandem/workload.hpp"

namespace tandem {

using Matrix4 = std::array<float, 16>;
using Vec3 = std::array<float, 3>;

inline constexpr Matrix4 k_identity{1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f,
                                    0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f};

enum class Projection { Perspective, Orthographic };

struct CaptureCamera {
    Projection projection = Projection::Perspective;
    float fov_y = 0.8f;       // perspective: the vertical field of view, radians, in (0, 3.1)
    float half_height = 1.0f; // orthographic: half the view's height in world units
    float z_near = 0.05f;     // > 0 for perspective, >= 0 for orthographic
    float z_far = 100.0f;     // > z_near
    // World to camera: the camera looks down its -Z axis with +Y up in the image. The aspect
    // ratio is the task's width / height (an orthographic view's half width follows from it).
    Matrix4 view = k_identity;
};

struct CaptureLight {
    Vec3 direction{-0.4f, -1.0f, -0.3f}; // the way the light travels (any length but 0)
    Vec3 color{0.85f, 0.85f, 0.8f};
    Vec3 ambient{0.25f, 0.25f, 0.28f};
};

struct CaptureInstance {
    MeshId mesh;
    Matrix4 transform = k_identity; // mesh space to world space
    std::vector<std::string> tags;
};

inline constexpr std::uint32_t k_max_capture_instances = 4096; // drawn per snapshot

struct CaptureSnapshot {
    CaptureCamera camera;
    CaptureLight light;
    std::array<float, 4> clear_color{0.08f, 0.09f, 0.11f, 1.0f};
    std::vector<CaptureInstance> instances;
    // Draw only the instances with at least one of these tags; empty: every instance.
    std::vector<std::string> tag_filter;
};

// The view matrix of a camera at `eye` looking at `target`, `up` giving the image's up.
[[nodiscard]] TANDEM_API Matrix4 look_at(const Vec3& eye, const Vec3& target, const Vec3& up);
[[nodiscard]] TANDEM_API Matrix4 translation(float x, float y, float z);
// Column-major product a * b (b applied first).
[[nodiscard]] TANDEM_API Matrix4 multiply(const Matrix4& a, const Matrix4& b);

// A sentence saying why `snapshot` cannot be drawn from `scene` (an instance naming a mesh the
// scene does not have, a matrix or light value that is not finite, a view matrix that cannot be
// inverted, a field of view or clip planes out of range, more than k_max_capture_instances
// instances drawn); empty when it can be. A capture task checks every submitted snapshot the
// same way: one that cannot be drawn is refused by submit() (Failed, TaskError::BadBytes) with
// that sentence, and nothing changes.
[[nodiscard]] TANDEM_API std::string check_capture(const CaptureSnapshot& snapshot,
                                                   const Scene& scene);

// The bytes to submit (Runtime::submit): the camera, the light, the clear colour and the
// instances the tag filter keeps (tags themselves are not sent). A host-local encoding: it never
// leaves the process. Per-frame: throws nothing but std::bad_alloc.
[[nodiscard]] TANDEM_API std::vector<std::byte> encode_capture(const CaptureSnapshot& snapshot);

// A factory for TaskDesc::factory drawing `scene`: on each device a task is prepared on, the
// scene is uploaded once (and shared by every capture task of the same Scene there) and a
// pipeline is made for the task's format; each job draws its decoded snapshot into the slot's
// image. Throws tandem::Error for a null scene.
[[nodiscard]] TANDEM_API WorkloadFactory capture_workload(std::shared_ptr<const Scene> scene);

} // namespace tandem
