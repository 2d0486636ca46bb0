// The renderer against an independent reference: a small CPU rasteriser (edge functions, a
// depth test with LESS, the mesh shader's lighting) draws overlapping flat triangles of known
// colours at known depths, lit from several angles, through an orthographic and a perspective
// camera, and every physical device present renders the same snapshot. A pixel whose colour
// the reference is sure of (the same at its centre and at eight points 1/16 pixel around it)
// must match within 1 of 255 per channel; an edge pixel must show the colour of one of the sides
// meeting there, and edge pixels are few. Devices of different kinds (lavapipe beside a GPU)
// agree within the README's bound: 4 of 255 per channel.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>
#include <gtest/gtest.h>

#include "render/headless.hpp"
#include "render/mesh_cache.hpp"
#include "render/renderer.hpp"
#include "scene/scene.hpp"
#include "scene/scene_access.hpp"
#include "scene/snapshot.hpp"
#include "tandem/scene.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_w = 96;
constexpr std::uint32_t k_h = 64;
constexpr int k_channel_tolerance = 1;      // float rounding of the lighting, then UNORM
constexpr int k_cross_device_tolerance = 4; // README: "at most 4 (of 255) between kinds"
using Rgba = std::array<std::uint8_t, 4>;
using Pixels = std::vector<std::uint8_t>;

// One flat triangle in pixel space (x right and y down in pixels, z the depth, 0 near), where
// the orthographic view shows it as it is; the perspective view places it in the world.
struct Triangle {
    std::array<glm::vec3, 3> corners;
    glm::vec3 normal; // unit
    glm::vec4 colour; // the material's base colour
};

// Overlapping at three depths, lit at four angles (the last pair, a quad facing away from the
// light, ambient only: its shared diagonal must leave no seam).
const std::vector<Triangle> k_triangles = {
    {{glm::vec3{4.3f, 5.1f, 0.6f}, {70.2f, 12.7f, 0.6f}, {20.6f, 58.9f, 0.6f}},
     {0.0f, 0.0f, -1.0f},
     {0.9f, 0.3f, 0.2f, 1.0f}},
    {{glm::vec3{30.5f, 3.2f, 0.3f}, {91.4f, 40.3f, 0.3f}, {41.7f, 61.2f, 0.3f}},
     {0.6f, 0.0f, -0.8f},
     {0.2f, 0.7f, 0.4f, 1.0f}},
    {{glm::vec3{2.2f, 40.4f, 0.45f}, {88.9f, 55.3f, 0.45f}, {60.1f, 30.8f, 0.45f}},
     {0.0f, 0.6f, -0.8f},
     {0.3f, 0.4f, 0.95f, 1.0f}},
    {{glm::vec3{50.3f, 8.4f, 0.2f}, {84.7f, 8.4f, 0.2f}, {84.7f, 26.6f, 0.2f}},
     {0.0f, 0.0f, 1.0f},
     {1.0f, 0.9f, 0.2f, 1.0f}},
    {{glm::vec3{50.3f, 8.4f, 0.2f}, {84.7f, 26.6f, 0.2f}, {50.3f, 26.6f, 0.2f}},
     {0.0f, 0.0f, 1.0f},
     {1.0f, 0.9f, 0.2f, 1.0f}},
};

detail::LightSnapshot light() {
    detail::LightSnapshot l;
    l.direction = {0.0f, 0.6f, 0.8f}; // the way it travels
    l.color = {0.8f, 0.75f, 0.7f};
    l.ambient = {0.15f, 0.2f, 0.25f};
    return l;
}
constexpr glm::vec4 k_clear{0.1f, 0.1f, 0.15f, 1.0f};

std::uint8_t unorm8(float c) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(c, 0.0f, 1.0f) * 255.0f));
}

// shaders/mesh.frag for an untextured material (its white texel times the base colour).
Rgba shade(const glm::vec4& base, const glm::vec3& world_normal, const detail::LightSnapshot& l) {
    const glm::vec3 n = glm::normalize(world_normal);
    const float diffuse = std::max(glm::dot(n, -l.direction), 0.0f);
    const glm::vec3 c = glm::vec3(base) * (l.ambient + l.color * diffuse);
    return {unorm8(c.r), unorm8(c.g), unorm8(c.b), unorm8(base.a)};
}

// The scene as `view_proj` and `model` show it: each triangle in framebuffer coordinates
// (pixels, y down; z the depth) with its shaded colour.
struct ScreenTriangle {
    std::array<glm::dvec3, 3> p;
    Rgba colour;
};

std::vector<ScreenTriangle> project(const glm::mat4& view_proj, const glm::mat4& model) {
    const glm::mat3 normal_matrix = glm::transpose(glm::inverse(glm::mat3(model)));
    std::vector<ScreenTriangle> out;
    for (const Triangle& t : k_triangles) {
        ScreenTriangle s;
        for (int i = 0; i < 3; ++i) {
            const glm::vec4 clip = view_proj * (model * glm::vec4(t.corners[i], 1.0f));
            EXPECT_GT(clip.w, 0.0f) << "the scene lies in front of the camera";
            const glm::dvec3 ndc = glm::dvec3(clip) / static_cast<double>(clip.w);
            s.p[i] = {(ndc.x + 1.0) * 0.5 * k_w, (ndc.y + 1.0) * 0.5 * k_h, ndc.z};
        }
        s.colour = shade(t.colour, normal_matrix * t.normal, light());
        out.push_back(s);
    }
    return out;
}

// The colour at framebuffer point (x, y): the nearest triangle covering it (both windings, depth
// test LESS against a clear of 1), else the clear colour.
Rgba sample(const std::vector<ScreenTriangle>& scene, double x, double y) {
    const auto edge = [](const glm::dvec3& a, const glm::dvec3& b, double px, double py) {
        return (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x);
    };
    Rgba colour = {unorm8(k_clear.r), unorm8(k_clear.g), unorm8(k_clear.b), unorm8(k_clear.a)};
    double nearest = 1.0;
    for (const ScreenTriangle& t : scene) {
        const double w0 = edge(t.p[1], t.p[2], x, y);
        const double w1 = edge(t.p[2], t.p[0], x, y);
        const double w2 = edge(t.p[0], t.p[1], x, y);
        const double area = w0 + w1 + w2;
        const bool inside = (w0 >= 0 && w1 >= 0 && w2 >= 0) || (w0 <= 0 && w1 <= 0 && w2 <= 0);
        if (area == 0.0 || !inside) {
            continue;
        }
        const double depth = (w0 * t.p[0].z + w1 * t.p[1].z + w2 * t.p[2].z) / area;
        if (depth >= 0.0 && depth < nearest) {
            nearest = depth;
            colour = t.colour;
        }
    }
    return colour;
}

bool near(const Rgba& a, const Rgba& b, int tolerance) {
    for (int c = 0; c < 4; ++c) {
        if (std::abs(int{a[c]} - int{b[c]}) > tolerance) {
            return false;
        }
    }
    return true;
}

Rgba pixel(const Pixels& p, std::uint32_t x, std::uint32_t y) {
    const std::size_t i = (std::size_t{y} * k_w + x) * 4;
    return {p[i], p[i + 1], p[i + 2], p[i + 3]};
}

// Per pixel, the reference's colours: at the centre first, then any other seen 1/16 pixel
// around it (an edge pixel, which may take either side's colour).
using Reference = std::vector<std::vector<Rgba>>;

Reference reference(const std::vector<ScreenTriangle>& scene) {
    constexpr double d = 1.0 / 16.0;
    constexpr std::array<std::pair<double, double>, 8> around = {
        {{-d, -d}, {0.0, -d}, {d, -d}, {-d, 0.0}, {d, 0.0}, {-d, d}, {0.0, d}, {d, d}}};
    Reference out;
    for (std::uint32_t y = 0; y < k_h; ++y) {
        for (std::uint32_t x = 0; x < k_w; ++x) {
            const double cx = x + 0.5;
            const double cy = y + 0.5;
            std::vector<Rgba> sides = {sample(scene, cx, cy)};
            for (const auto& [dx, dy] : around) {
                const Rgba s = sample(scene, cx + dx, cy + dy);
                if (std::find(sides.begin(), sides.end(), s) == sides.end()) {
                    sides.push_back(s);
                }
            }
            out.push_back(std::move(sides));
        }
    }
    return out;
}

std::string text(const Rgba& c) {
    return std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) + "," +
           std::to_string(c[3]);
}

// Every pixel within k_channel_tolerance of its reference colour, or of a side's at an edge.
void expect_matches(const Pixels& rendered, const Reference& expected, const std::string& what) {
    std::size_t wrong = 0;
    for (std::uint32_t y = 0; y < k_h; ++y) {
        for (std::uint32_t x = 0; x < k_w; ++x) {
            const std::vector<Rgba>& sides = expected[std::size_t{y} * k_w + x];
            const Rgba got = pixel(rendered, x, y);
            const bool ok = std::any_of(sides.begin(), sides.end(), [&](const Rgba& s) {
                return near(got, s, k_channel_tolerance);
            });
            if (!ok && ++wrong <= 5) {
                ADD_FAILURE() << what << ": pixel (" << x << ", " << y << ") is " << text(got)
                              << "; the reference has " << text(sides[0])
                              << (sides.size() > 1 ? " (an edge pixel)" : "");
            }
        }
    }
    EXPECT_EQ(wrong, 0u) << what << ": pixels unlike the reference";
}

class CpuReference : public VulkanTest, public ::testing::WithParamInterface<const char*> {
protected:
    std::uint32_t virtual_devices() const override { return 1; } // each physical device once
};

TEST_P(CpuReference, FlatTrianglesMatchOnEveryDevice) {
    const bool perspective = std::string(GetParam()) == "perspective";
    // One mesh: each triangle a primitive with its own material and its normal at each corner.
    SceneBuilder builder;
    std::vector<std::array<float, 9>> positions(k_triangles.size());
    std::vector<std::array<float, 9>> normals(k_triangles.size());
    std::vector<PrimitiveDesc> primitives;
    for (std::size_t i = 0; i < k_triangles.size(); ++i) {
        const Triangle& t = k_triangles[i];
        for (int c = 0; c < 3; ++c) {
            for (int k = 0; k < 3; ++k) {
                positions[i][3 * c + k] = t.corners[c][k];
                normals[i][3 * c + k] = t.normal[k];
            }
        }
        PrimitiveDesc p;
        p.positions = positions[i];
        p.normals = normals[i];
        MaterialDesc material;
        material.base_color = {t.colour.r, t.colour.g, t.colour.b, t.colour.a};
        p.material = builder.add_material(material);
        primitives.push_back(p);
    }
    (void)builder.add_mesh("triangles", primitives);
    const auto assets = detail::SceneAccess::assets(*builder.build());

    detail::FrameSnapshot snap;
    snap.light = light();
    snap.clear_color = k_clear;
    detail::InstanceSnapshot instance;
    if (perspective) {
        // Pixel space into the world: 1/32 unit a pixel, y up, depth 0.2..0.6 at 0.8..2.4 units
        // behind the origin; a camera in front, a little off axis.
        instance.transform = glm::scale(glm::mat4(1.0f), {1.0f / 32, -1.0f / 32, -4.0f}) *
                             glm::translate(glm::mat4(1.0f), {-0.5f * k_w, -0.5f * k_h, 0.0f});
        snap.camera.position = {0.3f, 0.2f, 1.0f};
        snap.camera.view =
            glm::inverse(detail::camera_transform(snap.camera.position, {0.0f, 0.0f, -1.6f}));
        detail::CameraModel lens;
        lens.yfov = 1.2f;
        lens.znear = 0.1f;
        lens.zfar = 20.0f;
        snap.camera.projection = detail::projection_matrix(lens, float{k_w} / float{k_h});
    } else {
        // Clip space straight from pixel space: x and y over the target, z the depth itself.
        glm::mat4 p(1.0f);
        p[0][0] = 2.0f / k_w;
        p[1][1] = 2.0f / k_h;
        p[3][0] = -1.0f;
        p[3][1] = -1.0f;
        snap.camera.projection = p;
        snap.camera.position = {0.5f * k_w, 0.5f * k_h, -1.0f};
    }
    snap.instances.push_back(instance);
    const Reference expected =
        reference(project(snap.camera.projection * snap.camera.view, instance.transform));
    // Edge pixels (within 1/16 pixel of an edge) are a few in 100 here, and not none.
    const auto edges = static_cast<std::size_t>(std::count_if(
        expected.begin(), expected.end(), [](const auto& sides) { return sides.size() > 1; }));
    EXPECT_GT(edges, 0u);
    EXPECT_LT(edges, expected.size() / 20);

    std::vector<std::pair<std::string, Pixels>> renders;
    for (std::uint32_t a = 0; a < adapters().size(); ++a) {
        detail::Device& device = open(a);
        detail::MeshCache cache(device);
        cache.upload(assets);
        const detail::Renderer renderer(cache, VK_FORMAT_R8G8B8A8_UNORM);
        detail::HeadlessView view(renderer, {k_w, k_h}, "reference view");
        detail::RenderStats stats;
        const Pixels p = view.render(snap, {}, &stats);
        ASSERT_EQ(p.size(), std::size_t{k_w} * k_h * 4);
        EXPECT_EQ(stats.culled, 0u);
        const std::string what =
            device.info().name + " (" + device.info().type + "), " + GetParam();
        if (const char* dir = std::getenv("TANDEM_TEST_PNG_DIR")) {
            detail::write_png(std::string(dir) + "/reference_" + GetParam() + "_" +
                                  std::to_string(a) + ".png",
                              k_w, k_h, p);
        }
        expect_matches(p, expected, what);
        renders.emplace_back(what, p);
    }
    // Devices of different kinds, away from edges: within the README's bound of each other.
    ASSERT_FALSE(renders.empty());
    for (std::size_t i = 1; i < renders.size(); ++i) {
        int largest = 0;
        for (std::uint32_t y = 0; y < k_h; ++y) {
            for (std::uint32_t x = 0; x < k_w; ++x) {
                if (expected[std::size_t{y} * k_w + x].size() > 1) {
                    continue;
                }
                const Rgba a = pixel(renders[0].second, x, y);
                const Rgba b = pixel(renders[i].second, x, y);
                for (int c = 0; c < 4; ++c) {
                    largest = std::max(largest, std::abs(int{a[c]} - int{b[c]}));
                }
            }
        }
        std::printf("[ devices  ] %s and %s: largest difference %d of 255\n",
                    renders[0].first.c_str(), renders[i].first.c_str(), largest);
        EXPECT_LE(largest, k_cross_device_tolerance)
            << renders[0].first << " and " << renders[i].first;
    }
}

INSTANTIATE_TEST_SUITE_P(Cameras, CpuReference, ::testing::Values("orthographic", "perspective"),
                         [](const auto& p) { return std::string(p.param); });

} // namespace
} // namespace tandem::test
