#include "scene/capture_codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include <glm/gtc/type_ptr.hpp>

#include "scene/byte_codec.hpp"
#include "scene/scene_access.hpp"

namespace tandem::detail {
namespace {

constexpr std::uint32_t k_capture_magic = 0x31504354; // "TCP1"

// magic, projection, fov_y, half_height, z_near, z_far, view, light (3 x vec3), clear, count
constexpr std::size_t k_capture_header = 4 + 4 + 16 + 64 + 36 + 16 + 4;
constexpr std::size_t k_capture_instance = 4 + 4 + 64;

glm::mat4 to_glm(const Matrix4& m) {
    return glm::make_mat4(m.data());
}
glm::vec3 to_glm(const Vec3& v) {
    return {v[0], v[1], v[2]};
}

bool finite(const glm::mat4& m) {
    const float* p = glm::value_ptr(m);
    return std::all_of(p, p + 16, [](float v) { return std::isfinite(v); });
}
template <int N>
bool finite(const glm::vec<N, float>& v) {
    for (int i = 0; i < N; ++i) {
        if (!std::isfinite(v[i])) {
            return false;
        }
    }
    return true;
}

bool kept(const tandem::CaptureInstance& instance, const std::vector<std::string>& filter) {
    return filter.empty() || std::any_of(instance.tags.begin(), instance.tags.end(), [&](auto& t) {
               return std::find(filter.begin(), filter.end(), t) != filter.end();
           });
}

std::string number(float v) {
    return std::to_string(v);
}

} // namespace

Matrix4 to_matrix4(const glm::mat4& m) noexcept {
    Matrix4 out;
    std::memcpy(out.data(), glm::value_ptr(m), sizeof out);
    return out;
}

tandem::CaptureCamera capture_camera(const CameraModel& model, const glm::mat4& view) {
    tandem::CaptureCamera c;
    c.projection = model.projection == Projection::Orthographic ? tandem::Projection::Orthographic
                                                                : tandem::Projection::Perspective;
    c.fov_y = model.yfov;
    c.half_height = model.ymag;
    c.z_near = model.znear;
    c.z_far = model.zfar;
    c.view = to_matrix4(view);
    return c;
}

CaptureFrame capture_frame(const tandem::CaptureSnapshot& s, bool filtered) {
    CaptureFrame f;
    const tandem::CaptureCamera& c = s.camera;
    f.camera.projection = c.projection == tandem::Projection::Orthographic
                              ? detail::Projection::Orthographic
                              : detail::Projection::Perspective;
    f.camera.yfov = c.fov_y;
    f.camera.ymag = c.half_height;
    f.camera.xmag = c.half_height;
    f.camera.znear = c.z_near;
    f.camera.zfar = c.z_far;
    f.view = to_glm(c.view);
    f.light_direction = to_glm(s.light.direction);
    f.light_color = to_glm(s.light.color);
    f.ambient = to_glm(s.light.ambient);
    f.clear_color = {s.clear_color[0], s.clear_color[1], s.clear_color[2], s.clear_color[3]};
    f.instances.reserve(s.instances.size());
    for (std::size_t i = 0; i < s.instances.size(); ++i) {
        const tandem::CaptureInstance& inst = s.instances[i];
        if (!filtered || kept(inst, s.tag_filter)) {
            f.instances.push_back(
                {inst.mesh.index, static_cast<std::uint32_t>(i), to_glm(inst.transform)});
        }
    }
    return f;
}

std::vector<std::byte> encode_capture_frame(const CaptureFrame& f) {
    std::vector<std::byte> out;
    out.reserve(k_capture_header + f.instances.size() * k_capture_instance);
    ByteWriter w{out};
    w.put(k_capture_magic);
    w.put(static_cast<std::uint32_t>(f.camera.projection == Projection::Orthographic ? 1 : 0));
    w.put(f.camera.yfov);
    w.put(f.camera.ymag);
    w.put(f.camera.znear);
    w.put(f.camera.zfar);
    w.put(f.view);
    w.put(f.light_direction);
    w.put(f.light_color);
    w.put(f.ambient);
    w.put(f.clear_color);
    w.put(static_cast<std::uint32_t>(f.instances.size()));
    for (const CaptureFrame::Instance& i : f.instances) {
        w.put(i.mesh);
        w.put(i.index);
        w.put(i.transform);
    }
    return out;
}

std::optional<CaptureFrame> decode_capture_frame(std::span<const std::byte> bytes,
                                                 SnapshotRefusal* why) noexcept {
    static_assert(sizeof(glm::mat4) == 64 && sizeof(glm::vec3) == 12 && sizeof(glm::vec4) == 16);
    ByteReader r{bytes};
    auto refuse = [&](std::size_t byte, const char* reason) -> std::optional<CaptureFrame> {
        if (why != nullptr) {
            *why = {byte, reason};
        }
        return std::nullopt;
    };
    try {
        std::uint32_t magic = 0;
        std::uint32_t projection = 0;
        std::uint32_t count = 0;
        CaptureFrame f;
        if (!r.get(magic) || magic != k_capture_magic) {
            return refuse(0, "not a capture snapshot from tandem::encode_capture (no \"TCP1\" "
                             "magic)");
        }
        if (!r.get(projection) || projection > 1) {
            return refuse(4, "the projection is neither perspective nor orthographic");
        }
        f.camera.projection = projection == 1 ? Projection::Orthographic : Projection::Perspective;
        if (!r.get(f.camera.yfov) || !r.get(f.camera.ymag) || !r.get(f.camera.znear) ||
            !r.get(f.camera.zfar) || !r.get(f.view) || !r.get(f.light_direction) ||
            !r.get(f.light_color) || !r.get(f.ambient) || !r.get(f.clear_color) || !r.get(count)) {
            return refuse(r.at, "the header is cut short");
        }
        f.camera.xmag = f.camera.ymag;
        if ((bytes.size() - r.at) % k_capture_instance != 0 ||
            (bytes.size() - r.at) / k_capture_instance != count) {
            return refuse(r.at - sizeof(count),
                          "the instance count does not match the bytes that follow");
        }
        f.instances.resize(count);
        for (CaptureFrame::Instance& i : f.instances) {
            if (!r.get(i.mesh) || !r.get(i.index) || !r.get(i.transform)) {
                return refuse(r.at, "an instance is cut short");
            }
        }
        return f;
    } catch (const std::bad_alloc&) {
        return refuse(r.at, "out of memory");
    }
}

std::string check_capture_frame(const CaptureFrame& f, std::size_t mesh_count, std::size_t drawn) {
    const CameraModel& c = f.camera;
    const bool perspective = c.projection == Projection::Perspective;
    if (perspective && !(std::isfinite(c.yfov) && c.yfov > 0.0f && c.yfov < 3.1f)) {
        return "the camera's vertical field of view is " + number(c.yfov) +
               " radians; give fov_y between 0 and 3.1";
    }
    if (!perspective && !(std::isfinite(c.ymag) && c.ymag > 0.0f)) {
        return "the orthographic camera's half height is " + number(c.ymag) +
               "; give half_height above 0";
    }
    if (!std::isfinite(c.znear) || (perspective ? c.znear <= 0.0f : c.znear < 0.0f)) {
        return "the camera's z_near is " + number(c.znear) + "; give " +
               (perspective ? "a perspective camera a z_near above 0"
                            : "an orthographic camera a z_near of 0 or more");
    }
    if (!std::isfinite(c.zfar) || c.zfar <= c.znear) {
        return "the camera's z_far is " + number(c.zfar) + " and its z_near " + number(c.znear) +
               "; give a finite z_far beyond z_near";
    }
    const float det = glm::determinant(f.view);
    if (!finite(f.view) || !std::isfinite(det) || det == 0.0f) {
        return "the camera's view matrix is not finite or cannot be inverted; give a world-to-"
               "camera matrix (tandem::look_at makes one: eye and target must differ, and up "
               "must not point along the view)";
    }
    if (!finite(f.light_direction) || !finite(f.light_color) || !finite(f.ambient) ||
        glm::length(f.light_direction) <= 0.0f) {
        return "the light has a value that is not finite or a direction of length 0; give "
               "finite numbers and a direction the light travels";
    }
    if (!finite(f.clear_color)) {
        return "the clear colour is not finite; give four numbers from 0 to 1";
    }
    if (drawn > k_max_capture_instances) {
        return std::to_string(drawn) + " instances are drawn; draw at most " +
               std::to_string(k_max_capture_instances) +
               " per snapshot (a tag filter or fewer instances)";
    }
    for (const CaptureFrame::Instance& i : f.instances) {
        if (i.mesh >= mesh_count) {
            return "instance " + std::to_string(i.index) + " names mesh " + std::to_string(i.mesh) +
                   ", but the task's scene has " + std::to_string(mesh_count) +
                   " mesh(es); use a MeshId from the builder that built the scene given to "
                   "tandem::capture_workload";
        }
        if (!finite(i.transform)) {
            return "instance " + std::to_string(i.index) +
                   " has a transform that is not finite; give finite numbers";
        }
    }
    return {};
}

FrameSnapshot frame_snapshot(const CaptureFrame& f, float aspect) {
    FrameSnapshot out;
    out.camera.view = f.view;
    out.camera.projection = projection_matrix(f.camera, aspect);
    out.camera.position = glm::vec3(glm::inverse(f.view)[3]);
    const float len = glm::length(f.light_direction);
    out.light.direction = len > 0.0f ? f.light_direction / len : glm::vec3(0.0f, -1.0f, 0.0f);
    out.light.color = f.light_color;
    out.light.ambient = f.ambient;
    out.clear_color = f.clear_color;
    out.instances.reserve(f.instances.size());
    for (const CaptureFrame::Instance& i : f.instances) {
        InstanceSnapshot inst;
        inst.mesh = i.mesh;
        inst.transform = i.transform;
        out.instances.push_back(inst);
    }
    return out;
}

} // namespace tandem::detail

namespace tandem {

Matrix4 look_at(const Vec3& eye, const Vec3& target, const Vec3& up) {
    const glm::vec3 e = detail::to_glm(eye);
    const glm::vec3 f = glm::normalize(detail::to_glm(target) - e);
    const glm::vec3 s = glm::normalize(glm::cross(f, detail::to_glm(up)));
    const glm::vec3 u = glm::cross(s, f);
    glm::mat4 view(1.0f);
    for (int c = 0; c < 3; ++c) {
        view[c][0] = s[c];
        view[c][1] = u[c];
        view[c][2] = -f[c];
    }
    view[3][0] = -glm::dot(s, e);
    view[3][1] = -glm::dot(u, e);
    view[3][2] = glm::dot(f, e);
    return detail::to_matrix4(view);
}

Matrix4 translation(float x, float y, float z) {
    Matrix4 m = k_identity;
    m[12] = x;
    m[13] = y;
    m[14] = z;
    return m;
}

Matrix4 multiply(const Matrix4& a, const Matrix4& b) {
    return detail::to_matrix4(detail::to_glm(a) * detail::to_glm(b));
}

std::string check_capture(const CaptureSnapshot& snapshot, const Scene& scene) {
    const detail::CaptureFrame all = detail::capture_frame(snapshot, false);
    const auto drawn = static_cast<std::size_t>(std::count_if(
        snapshot.instances.begin(), snapshot.instances.end(),
        [&](const CaptureInstance& i) { return detail::kept(i, snapshot.tag_filter); }));
    std::string why =
        detail::check_capture_frame(all, detail::SceneAccess::assets(scene)->meshes.size(), drawn);
    return why.empty() ? why : "The capture snapshot cannot be drawn: " + why;
}

std::vector<std::byte> encode_capture(const CaptureSnapshot& snapshot) {
    return detail::encode_capture_frame(detail::capture_frame(snapshot, true));
}

} // namespace tandem
