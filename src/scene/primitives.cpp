#include "scene/primitives.hpp"

#include <cmath>

namespace tandem::detail {
namespace {

constexpr float k_pi = 3.14159265358979f;

void add_face(Primitive& p, const glm::vec3& origin, const glm::vec3& u, const glm::vec3& v,
              const glm::vec3& normal, bool mirror_u = false) {
    const auto base = static_cast<std::uint32_t>(p.vertices.size());
    const float u0 = mirror_u ? 1.0f : 0.0f;
    const float u1 = mirror_u ? 0.0f : 1.0f;
    p.vertices.push_back({origin, normal, {u0, 1.0f}});
    p.vertices.push_back({origin + u, normal, {u1, 1.0f}});
    p.vertices.push_back({origin + u + v, normal, {u1, 0.0f}});
    p.vertices.push_back({origin + v, normal, {u0, 0.0f}});
    for (std::uint32_t i : {0u, 1u, 2u, 0u, 2u, 3u}) {
        p.indices.push_back(base + i);
    }
}

Mesh single(const char* name, Primitive p) {
    Mesh mesh;
    mesh.name = name;
    mesh.primitives.push_back(std::move(p));
    compute_bounds(mesh);
    return mesh;
}

} // namespace

void compute_bounds(Mesh& mesh) {
    mesh.bounds = {};
    for (const Primitive& p : mesh.primitives) {
        for (const Vertex& v : p.vertices) {
            mesh.bounds.add(v.position);
        }
    }
}

void compute_vertex_normals(Primitive& p) {
    std::vector<glm::vec3> sum(p.vertices.size(), glm::vec3(0.0f));
    for (std::size_t t = 0; t + 2 < p.indices.size(); t += 3) {
        const glm::vec3& a = p.vertices[p.indices[t]].position;
        const glm::vec3& b = p.vertices[p.indices[t + 1]].position;
        const glm::vec3& c = p.vertices[p.indices[t + 2]].position;
        const glm::vec3 n = glm::cross(b - a, c - a);
        for (std::size_t k = 0; k < 3; ++k) {
            sum[p.indices[t + k]] += n;
        }
    }
    for (std::size_t v = 0; v < sum.size(); ++v) {
        const float len = glm::length(sum[v]);
        p.vertices[v].normal = len > 1e-20f ? sum[v] / len : glm::vec3(0.0f, 1.0f, 0.0f);
    }
}

Mesh make_plane(float width, float depth, std::uint32_t material) {
    Primitive p;
    p.material = material;
    add_face(p, {-width / 2, 0, depth / 2}, {width, 0, 0}, {0, 0, -depth}, {0, 1, 0});
    return single("plane", std::move(p));
}

Mesh make_quad(float width, float height, std::uint32_t material, bool mirror_u) {
    Primitive p;
    p.material = material;
    add_face(p, {-width / 2, -height / 2, 0}, {width, 0, 0}, {0, height, 0}, {0, 0, 1}, mirror_u);
    return single("quad", std::move(p));
}

Mesh make_box(const glm::vec3& size, std::uint32_t material) {
    Primitive p;
    p.material = material;
    const glm::vec3 h = size * 0.5f;
    add_face(p, {-h.x, -h.y, h.z}, {size.x, 0, 0}, {0, size.y, 0}, {0, 0, 1});   // +Z
    add_face(p, {h.x, -h.y, -h.z}, {-size.x, 0, 0}, {0, size.y, 0}, {0, 0, -1}); // -Z
    add_face(p, {h.x, -h.y, h.z}, {0, 0, -size.z}, {0, size.y, 0}, {1, 0, 0});   // +X
    add_face(p, {-h.x, -h.y, -h.z}, {0, 0, size.z}, {0, size.y, 0}, {-1, 0, 0}); // -X
    add_face(p, {-h.x, h.y, h.z}, {size.x, 0, 0}, {0, 0, -size.z}, {0, 1, 0});   // +Y
    add_face(p, {-h.x, -h.y, -h.z}, {size.x, 0, 0}, {0, 0, size.z}, {0, -1, 0}); // -Y
    return single("box", std::move(p));
}

Mesh make_sphere(float radius, std::uint32_t segments, std::uint32_t rings,
                 std::uint32_t material) {
    Primitive p;
    p.material = material;
    for (std::uint32_t r = 0; r <= rings; ++r) {
        const float v = static_cast<float>(r) / static_cast<float>(rings);
        const float theta = v * k_pi;
        for (std::uint32_t s = 0; s <= segments; ++s) {
            const float u = static_cast<float>(s) / static_cast<float>(segments);
            const float phi = u * 2.0f * k_pi;
            const glm::vec3 n{std::sin(theta) * std::cos(phi), std::cos(theta),
                              -std::sin(theta) * std::sin(phi)};
            p.vertices.push_back({n * radius, n, {u, v}});
        }
    }
    const std::uint32_t row = segments + 1;
    for (std::uint32_t r = 0; r < rings; ++r) {
        for (std::uint32_t s = 0; s < segments; ++s) {
            const std::uint32_t a = r * row + s;
            const std::uint32_t b = a + row;
            for (std::uint32_t i : {a, b, a + 1, a + 1, b, b + 1}) {
                p.indices.push_back(i);
            }
        }
    }
    return single("sphere", std::move(p));
}

Mesh make_cylinder(float radius, float height, std::uint32_t segments, std::uint32_t material) {
    Primitive p;
    p.material = material;
    const float h = height * 0.5f;
    // Side.
    for (std::uint32_t s = 0; s <= segments; ++s) {
        const float u = static_cast<float>(s) / static_cast<float>(segments);
        const float phi = u * 2.0f * k_pi;
        const glm::vec3 n{std::cos(phi), 0.0f, -std::sin(phi)};
        p.vertices.push_back({n * radius + glm::vec3(0, -h, 0), n, {u, 1.0f}});
        p.vertices.push_back({n * radius + glm::vec3(0, h, 0), n, {u, 0.0f}});
    }
    for (std::uint32_t s = 0; s < segments; ++s) {
        const std::uint32_t a = 2 * s;
        for (std::uint32_t i : {a, a + 2, a + 1, a + 1, a + 2, a + 3}) {
            p.indices.push_back(i);
        }
    }
    // Caps: a centre vertex and a ring each.
    for (float side : {1.0f, -1.0f}) {
        const auto centre = static_cast<std::uint32_t>(p.vertices.size());
        const glm::vec3 n{0.0f, side, 0.0f};
        p.vertices.push_back({{0.0f, side * h, 0.0f}, n, {0.5f, 0.5f}});
        for (std::uint32_t s = 0; s <= segments; ++s) {
            const float phi = static_cast<float>(s) / static_cast<float>(segments) * 2.0f * k_pi;
            const glm::vec2 c{std::cos(phi), -std::sin(phi)};
            p.vertices.push_back(
                {{c.x * radius, side * h, c.y * radius}, n, {0.5f + c.x / 2, 0.5f + c.y / 2}});
        }
        for (std::uint32_t s = 0; s < segments; ++s) {
            const std::uint32_t a = centre + 1 + s;
            if (side > 0) {
                p.indices.insert(p.indices.end(), {centre, a, a + 1});
            } else {
                p.indices.insert(p.indices.end(), {centre, a + 1, a});
            }
        }
    }
    return single("cylinder", std::move(p));
}

} // namespace tandem::detail
