#include "render/frustum.hpp"

namespace tandem::detail {

Frustum frustum_from(const glm::mat4& m) {
    // Rows of the (column-major) matrix; Gribb and Hartmann, with clip depth in [0, w].
    auto row = [&](int r) { return glm::vec4(m[0][r], m[1][r], m[2][r], m[3][r]); };
    const glm::vec4 r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
    Frustum f{{r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2}};
    for (glm::vec4& p : f.planes) {
        const float len = glm::length(glm::vec3(p));
        if (len > 0.0f) {
            p /= len;
        }
    }
    return f;
}

bool intersects(const Frustum& frustum, const Bounds& box) {
    if (box.empty) {
        return false;
    }
    for (const glm::vec4& p : frustum.planes) {
        // The box corner furthest along the plane's normal.
        const glm::vec3 far_corner{p.x >= 0 ? box.max.x : box.min.x,
                                   p.y >= 0 ? box.max.y : box.min.y,
                                   p.z >= 0 ? box.max.z : box.min.z};
        if (glm::dot(glm::vec3(p), far_corner) + p.w < 0.0f) {
            return false;
        }
    }
    return true;
}

} // namespace tandem::detail
