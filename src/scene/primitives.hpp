// Built-in meshes made in code, each one primitive with outward normals, UVs and bounds.
// Pure functions; any thread.
#pragma once

#include <cstdint>

#include "scene/scene.hpp"

namespace tandem::detail {

// A unit square in the XZ plane facing +Y, scaled to `width` x `depth`.
[[nodiscard]] Mesh make_plane(float width, float depth, std::uint32_t material);
// A rectangle in the XY plane facing +Z (a screen); `mirror_u` flips the image left-right.
[[nodiscard]] Mesh make_quad(float width, float height, std::uint32_t material,
                             bool mirror_u = false);
[[nodiscard]] Mesh make_box(const glm::vec3& size, std::uint32_t material);
[[nodiscard]] Mesh make_sphere(float radius, std::uint32_t segments, std::uint32_t rings,
                               std::uint32_t material);
[[nodiscard]] Mesh make_cylinder(float radius, float height, std::uint32_t segments,
                                 std::uint32_t material);
// Recomputes a mesh's bounds from its vertices.
void compute_bounds(Mesh& mesh);
// Normals for a primitive that comes without any: each vertex gets the area-weighted average of
// the faces that use it (smooth where triangles share vertices, flat where they do not); a
// vertex of no face, or of faces of zero area only, gets +Y. Indices must be in range.
void compute_vertex_normals(Primitive& primitive);

} // namespace tandem::detail
