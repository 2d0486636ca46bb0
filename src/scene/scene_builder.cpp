// tandem::SceneBuilder and tandem::Scene (tandem/scene.hpp): the application's arrays checked
// and copied into a SceneAssets, the model every device uploads and the renderer draws.
#include "tandem/scene.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "scene/primitives.hpp"
#include "scene/scene.hpp"
#include "scene/scene_access.hpp"
#include "tandem/error.hpp"

namespace tandem {
namespace {

using detail::SceneAssets;

std::shared_ptr<SceneAssets> empty_assets() {
    auto assets = std::make_shared<SceneAssets>();
    assets->materials.push_back({"default", glm::vec4(1.0f), std::nullopt});
    return assets;
}

std::string name_suffix(const std::string& name) {
    return name.empty() ? "" : " '" + name + "'";
}

bool all_finite(std::span<const float> values) {
    return std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); });
}

// The first element that is not finite, as "x of vertex 3".
std::string first_not_finite(std::span<const float> values, std::size_t per_vertex) {
    static const char* const k_axis[] = {"x", "y", "z"};
    static const char* const k_uv[] = {"u", "v"};
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(values[i])) {
            const std::size_t c = i % per_vertex;
            return std::string(per_vertex == 2 ? k_uv[c] : k_axis[c]) + " of vertex " +
                   std::to_string(i / per_vertex) + " is " + std::to_string(values[i]);
        }
    }
    return {};
}

// Checks one primitive and converts it; `what` names it ("mesh 'floor' primitive 1").
detail::Primitive convert(const PrimitiveDesc& p, const std::string& what,
                          std::size_t material_count) {
    const char* const fix_lengths =
        "Give 3 floats per vertex for positions and normals and 2 for UVs, the same vertices in "
        "each";
    if (p.positions.size() % 3 != 0) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " has " + std::to_string(p.positions.size()) +
                        " position floats, not a whole number of vertices (3 floats each)",
                    fix_lengths);
    }
    const std::size_t vertices = p.positions.size() / 3;
    if (vertices < 3 || vertices > k_max_primitive_vertices) {
        throw Error(
            ErrorCategory::InvalidArgument, what + " has " + std::to_string(vertices) + " vertices",
            "Give a primitive 3 to " + std::to_string(k_max_primitive_vertices) + " vertices");
    }
    if (!p.normals.empty() && p.normals.size() != p.positions.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " has " + std::to_string(p.normals.size()) + " normal floats for " +
                        std::to_string(vertices) + " vertices (" +
                        std::to_string(p.positions.size()) + " expected)",
                    std::string(fix_lengths) + ", or no normals to have them computed");
    }
    if (!p.uvs.empty() && p.uvs.size() != vertices * 2) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " has " + std::to_string(p.uvs.size()) + " UV floats for " +
                        std::to_string(vertices) + " vertices (" + std::to_string(vertices * 2) +
                        " expected)",
                    std::string(fix_lengths) + ", or no UVs");
    }
    const char* const fix_values = "Give finite numbers (no NaN or infinity)";
    if (!all_finite(p.positions)) {
        throw Error(ErrorCategory::InvalidArgument,
                    what +
                        " has a position that is not finite: " + first_not_finite(p.positions, 3),
                    fix_values);
    }
    if (!all_finite(p.normals)) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " has a normal that is not finite: " + first_not_finite(p.normals, 3),
                    fix_values);
    }
    if (!all_finite(p.uvs)) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " has a UV that is not finite: " + first_not_finite(p.uvs, 2),
                    fix_values);
    }
    if (!p.indices16.empty() && !p.indices32.empty()) {
        throw Error(ErrorCategory::InvalidArgument, what + " has both 16-bit and 32-bit indices",
                    "Give indices16 or indices32, not both");
    }
    if (p.material.index >= material_count) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " names material " + std::to_string(p.material.index) +
                        ", which this builder does not have (it has " +
                        std::to_string(material_count) + ", the default one included)",
                    "Use a MaterialId returned by this builder's add_material, or MaterialId{} "
                    "for the default material");
    }

    detail::Primitive out;
    out.material = p.material.index;
    out.vertices.resize(vertices);
    for (std::size_t v = 0; v < vertices; ++v) {
        detail::Vertex& x = out.vertices[v];
        x.position = {p.positions[3 * v], p.positions[3 * v + 1], p.positions[3 * v + 2]};
        if (!p.normals.empty()) {
            x.normal = {p.normals[3 * v], p.normals[3 * v + 1], p.normals[3 * v + 2]};
            if (glm::length(x.normal) <= 0.0f) {
                throw Error(ErrorCategory::InvalidArgument,
                            what + " has a normal of length 0 at vertex " + std::to_string(v),
                            "Give every vertex a normal of some length (Tandem normalises "
                            "them), or no normals to have them computed");
            }
        }
        if (!p.uvs.empty()) {
            x.uv = {p.uvs[2 * v], p.uvs[2 * v + 1]};
        }
    }
    auto take = [&](auto indices) {
        if (indices.size() > k_max_primitive_vertices) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " has " + std::to_string(indices.size()) + " indices",
                        "Give a primitive at most " + std::to_string(k_max_primitive_vertices) +
                            " indices");
        }
        out.indices.resize(indices.size());
        for (std::size_t i = 0; i < indices.size(); ++i) {
            if (indices[i] >= vertices) {
                throw Error(ErrorCategory::InvalidArgument,
                            what + " has index " + std::to_string(indices[i]) + " at position " +
                                std::to_string(i) + ", but only " + std::to_string(vertices) +
                                " vertices (0 to " + std::to_string(vertices - 1) + ")",
                            "Give indices below the primitive's vertex count");
            }
            out.indices[i] = indices[i];
        }
    };
    if (!p.indices16.empty()) {
        take(p.indices16);
    } else if (!p.indices32.empty()) {
        take(p.indices32);
    } else {
        out.indices.resize(vertices);
        for (std::size_t v = 0; v < vertices; ++v) {
            out.indices[v] = static_cast<std::uint32_t>(v);
        }
    }
    if (out.indices.size() % 3 != 0) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " has " + std::to_string(out.indices.size()) +
                        (p.indices16.empty() && p.indices32.empty() ? " vertices and no indices"
                                                                    : " indices") +
                        ", not a whole number of triangles",
                    "Give three indices (or, without indices, three vertices) per triangle");
    }
    if (p.normals.empty()) {
        detail::compute_vertex_normals(out);
    }
    return out;
}

const detail::Mesh& mesh_at(const SceneAssets& assets, MeshId mesh) {
    if (mesh.index >= assets.meshes.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The scene has no mesh " + std::to_string(mesh.index) + " (it has " +
                        std::to_string(assets.meshes.size()) + ")",
                    "Use a MeshId returned by the builder that built this scene");
    }
    return assets.meshes[mesh.index];
}

} // namespace

Scene::Scene(std::shared_ptr<const detail::SceneAssets> assets) : m_assets(std::move(assets)) {}

std::uint32_t Scene::mesh_count() const noexcept {
    return static_cast<std::uint32_t>(m_assets->meshes.size());
}
std::uint32_t Scene::material_count() const noexcept {
    return static_cast<std::uint32_t>(m_assets->materials.size());
}
std::uint32_t Scene::image_count() const noexcept {
    return static_cast<std::uint32_t>(m_assets->textures.size());
}

MeshBounds Scene::mesh_bounds(MeshId mesh) const {
    const detail::Bounds& b = mesh_at(*m_assets, mesh).bounds;
    return {{b.min.x, b.min.y, b.min.z}, {b.max.x, b.max.y, b.max.z}};
}

const std::string& Scene::mesh_name(MeshId mesh) const {
    return mesh_at(*m_assets, mesh).name;
}

std::optional<MeshId> Scene::find_mesh(std::string_view name) const {
    for (std::size_t i = 0; i < m_assets->meshes.size(); ++i) {
        if (m_assets->meshes[i].name == name) {
            return MeshId{static_cast<std::uint32_t>(i)};
        }
    }
    return std::nullopt;
}

SceneBuilder::SceneBuilder() : m_assets(empty_assets()) {}
SceneBuilder::~SceneBuilder() = default;
SceneBuilder::SceneBuilder(SceneBuilder&& other) noexcept
    : m_assets(std::exchange(other.m_assets, nullptr)) {}
SceneBuilder& SceneBuilder::operator=(SceneBuilder&& other) noexcept {
    m_assets = std::exchange(other.m_assets, nullptr);
    return *this;
}

std::uint32_t SceneBuilder::mesh_count() const noexcept {
    return m_assets ? static_cast<std::uint32_t>(m_assets->meshes.size()) : 0;
}
std::uint32_t SceneBuilder::material_count() const noexcept {
    return m_assets ? static_cast<std::uint32_t>(m_assets->materials.size()) : 0;
}
std::uint32_t SceneBuilder::image_count() const noexcept {
    return m_assets ? static_cast<std::uint32_t>(m_assets->textures.size()) : 0;
}

ImageId SceneBuilder::add_image(std::uint32_t width, std::uint32_t height,
                                std::span<const std::uint8_t> rgba, std::string name) {
    if (!m_assets) {
        m_assets = empty_assets(); // a builder moved from starts again
    }
    const std::string what =
        "Image " + std::to_string(m_assets->textures.size()) + name_suffix(name);
    if (width == 0 || height == 0 || width > k_max_image_side || height > k_max_image_side) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " is " + std::to_string(width) + "x" + std::to_string(height),
                    "Give an image 1 to " + std::to_string(k_max_image_side) + " texels per side");
    }
    const std::size_t expected = std::size_t{width} * height * 4;
    if (rgba.size() != expected) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " is " + std::to_string(width) + "x" + std::to_string(height) +
                        " but has " + std::to_string(rgba.size()) + " bytes (" +
                        std::to_string(expected) + " expected)",
                    "Give width * height * 4 bytes: R, G, B, A per texel, rows tightly packed");
    }
    detail::Texture t;
    t.name = name.empty() ? "image" + std::to_string(m_assets->textures.size()) : std::move(name);
    t.width = width;
    t.height = height;
    t.rgba.assign(rgba.begin(), rgba.end());
    const auto id = static_cast<std::uint32_t>(m_assets->textures.size());
    m_assets->textures.push_back(std::move(t));
    return ImageId{id};
}

MaterialId SceneBuilder::add_material(const MaterialDesc& material) {
    if (!m_assets) {
        m_assets = empty_assets();
    }
    const std::string what =
        "Material " + std::to_string(m_assets->materials.size()) + name_suffix(material.name);
    for (std::size_t c = 0; c < 4; ++c) {
        const float v = material.base_color[c];
        if (!std::isfinite(v) || v < 0.0f || v > 1.0f) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " has base colour component " + std::to_string(c) + " of " +
                            std::to_string(v),
                        "Give base colour components from 0 to 1");
        }
    }
    if (material.base_color_image &&
        material.base_color_image->index >= m_assets->textures.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    what + " names image " + std::to_string(material.base_color_image->index) +
                        ", which this builder does not have (it has " +
                        std::to_string(m_assets->textures.size()) + ")",
                    "Add the image first and use the ImageId add_image returned");
    }
    detail::Material m;
    m.name = material.name.empty() ? "material" + std::to_string(m_assets->materials.size())
                                   : material.name;
    m.base_color = {material.base_color[0], material.base_color[1], material.base_color[2],
                    material.base_color[3]};
    if (material.base_color_image) {
        m.base_color_texture = material.base_color_image->index;
    }
    const auto id = static_cast<std::uint32_t>(m_assets->materials.size());
    m_assets->materials.push_back(std::move(m));
    return MaterialId{id};
}

MeshId SceneBuilder::add_mesh(std::string name, std::span<const PrimitiveDesc> primitives) {
    if (!m_assets) {
        m_assets = empty_assets();
    }
    const std::string what = "Mesh " + std::to_string(m_assets->meshes.size()) + name_suffix(name);
    if (primitives.empty()) {
        throw Error(ErrorCategory::InvalidArgument, what + " has no primitives",
                    "Give a mesh at least one primitive");
    }
    detail::Mesh mesh;
    mesh.name = name.empty() ? "mesh" + std::to_string(m_assets->meshes.size()) : std::move(name);
    for (std::size_t i = 0; i < primitives.size(); ++i) {
        mesh.primitives.push_back(convert(primitives[i], what + " primitive " + std::to_string(i),
                                          m_assets->materials.size()));
    }
    detail::compute_bounds(mesh);
    const auto id = static_cast<std::uint32_t>(m_assets->meshes.size());
    m_assets->meshes.push_back(std::move(mesh));
    return MeshId{id};
}

std::shared_ptr<const Scene> SceneBuilder::build() {
    if (!m_assets || m_assets->meshes.empty()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The scene builder holds no mesh, so there is nothing to draw",
                    "Add at least one mesh (add_mesh) before build()");
    }
    std::shared_ptr<const SceneAssets> assets = std::exchange(m_assets, empty_assets());
    return detail::SceneAccess::make(std::move(assets));
}

} // namespace tandem

namespace tandem::detail {

SceneAssets& SceneAccess::builder_assets(tandem::SceneBuilder& builder) {
    if (!builder.m_assets) {
        builder.m_assets = empty_assets();
    }
    return *builder.m_assets;
}

} // namespace tandem::detail
