// Scene data from the application's own arrays: images (RGBA8), materials (a base colour factor
// and an optional image) and meshes (one or more primitives of positions, optional normals and
// UVs, 16- or 32-bit indices), gathered by a SceneBuilder and frozen into an immutable Scene. A
// capture task (tandem/capture.hpp) uploads a Scene once per device it runs on and draws it from
// each job's CaptureSnapshot; tandem/gltf.hpp fills a builder from a glTF file instead.
//
// clang-format off
//     tandem::SceneBuilder builder;
//     const tandem::ImageId checker = builder.add_image(8, 8, texels);   // 8 * 8 * 4 bytes
//     const tandem::MaterialId paint = builder.add_material({{1, 1, 1, 1}, checker});
//     tandem::PrimitiveDesc floor;
//     floor.positions = positions; // x, y, z per vertex
//     floor.uvs = uvs;             // u, v per vertex (optional)
//     floor.indices16 = indices;   // or indices32, or neither: the vertices in order
//     floor.material = paint;
//     const tandem::MeshId mesh = builder.add_mesh("floor", {floor});
//     const std::shared_ptr<const tandem::Scene> scene = builder.build();
// clang-format on
//
// Coordinates are glTF's: right-handed, +Y up; both faces of a triangle are drawn. UV (0, 0) is
// the first texel of the image's first row; images repeat outside 0..1 and are sampled linearly.
// Colours are used as given (UNORM, no sRGB conversion).
//
// Every add_ checks its input when it is called and throws a tandem::Error saying what is wrong
// and what to do (an index out of range, arrays whose lengths do not match, a value that is not
// finite, an image whose byte count is not width * height * 4, an id this builder did not
// return); nothing is added then. The arrays are copied: they may go once the call returns.
// Threads: a SceneBuilder is used by one thread at a time. A Scene never changes: any thread may
// read it, and every capture task and device that draws it shares it.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tandem/export.hpp"

namespace tandem {

namespace detail {
struct SceneAssets;
struct SceneAccess;
} // namespace detail

// Ids are handed out by one SceneBuilder, in order from 0, and name that builder's scene only.
struct ImageId {
    std::uint32_t index = 0;
    friend bool operator==(ImageId, ImageId) = default;
};
// MaterialId{} is the default material: white, no image. add_material() returns 1, 2, ...
struct MaterialId {
    std::uint32_t index = 0;
    friend bool operator==(MaterialId, MaterialId) = default;
};
struct MeshId {
    std::uint32_t index = 0;
    friend bool operator==(MeshId, MeshId) = default;
};

struct MaterialDesc {
    // Multiplies the image's texels (or is the colour, without an image); each in 0..1.
    std::array<float, 4> base_color{1.0f, 1.0f, 1.0f, 1.0f};
    std::optional<ImageId> base_color_image;
    std::string name;
};

// One draw of triangles (a list: every three indices, or vertices, make one) with one material.
struct PrimitiveDesc {
    std::span<const float> positions; // x, y, z per vertex
    // x, y, z per vertex. Empty: computed from the triangles, each vertex the area-weighted
    // average of the faces that use it (smooth where triangles share vertices; give each face
    // its own vertices for flat faces), as glTF files without normals get them.
    std::span<const float> normals;
    std::span<const float> uvs; // u, v per vertex; empty: (0, 0) everywhere
    // At most one of the two; neither: the vertices in order, three per triangle.
    std::span<const std::uint16_t> indices16;
    std::span<const std::uint32_t> indices32;
    MaterialId material;
};

// Axis-aligned bounds in mesh space.
struct MeshBounds {
    std::array<float, 3> min{};
    std::array<float, 3> max{};
};

inline constexpr std::uint32_t k_max_image_side = 8192;
inline constexpr std::uint32_t k_max_primitive_vertices = 1u << 26; // and as many indices

class TANDEM_API Scene {
public:
    [[nodiscard]] std::uint32_t mesh_count() const noexcept;
    [[nodiscard]] std::uint32_t material_count() const noexcept; // the default one included
    [[nodiscard]] std::uint32_t image_count() const noexcept;
    // Throws tandem::Error for a mesh this scene does not have.
    [[nodiscard]] MeshBounds mesh_bounds(MeshId mesh) const;
    [[nodiscard]] const std::string& mesh_name(MeshId mesh) const;
    // The first mesh called `name`.
    [[nodiscard]] std::optional<MeshId> find_mesh(std::string_view name) const;

private:
    friend struct detail::SceneAccess;
    explicit Scene(std::shared_ptr<const detail::SceneAssets> assets);
    std::shared_ptr<const detail::SceneAssets> m_assets;
};

class TANDEM_API SceneBuilder {
public:
    SceneBuilder();
    ~SceneBuilder();
    SceneBuilder(SceneBuilder&&) noexcept;
    SceneBuilder& operator=(SceneBuilder&&) noexcept;
    SceneBuilder(const SceneBuilder&) = delete;
    SceneBuilder& operator=(const SceneBuilder&) = delete;

    // `rgba`: width * height texels of 4 bytes (R, G, B, A), rows top to bottom, tightly packed;
    // width and height from 1 to k_max_image_side.
    ImageId add_image(std::uint32_t width, std::uint32_t height, std::span<const std::uint8_t> rgba,
                      std::string name = {});
    MaterialId add_material(const MaterialDesc& material);
    // At least one primitive; each with 3 to k_max_primitive_vertices vertices.
    MeshId add_mesh(std::string name, std::span<const PrimitiveDesc> primitives);
    MeshId add_mesh(std::string name, std::initializer_list<PrimitiveDesc> primitives) {
        return add_mesh(std::move(name),
                        std::span<const PrimitiveDesc>(primitives.begin(), primitives.size()));
    }

    [[nodiscard]] std::uint32_t mesh_count() const noexcept;
    [[nodiscard]] std::uint32_t material_count() const noexcept; // the default one included
    [[nodiscard]] std::uint32_t image_count() const noexcept;

    // The scene of everything added so far; the builder is empty again afterwards (new ids
    // start from 0). Throws tandem::Error when no mesh was added.
    [[nodiscard]] std::shared_ptr<const Scene> build();

private:
    friend struct detail::SceneAccess;
    std::shared_ptr<detail::SceneAssets> m_assets;
};

} // namespace tandem
