// The scene of gltf_writer.hpp's make_test_gltf() made from plain arrays with the public
// SceneBuilder (tandem/scene.hpp), as an engine would give its own meshes: "panels" (two
// primitives with 16-bit or 32-bit indices: a red factor on the left, the green 4x4 image on the
// right) and "triangle" (blue, no indices, no normals), both at the origin with tag "worker".
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tandem/capture.hpp"
#include "tandem/scene.hpp"

namespace tandem::test {

struct ArrayScene {
    std::shared_ptr<const Scene> scene;
    std::vector<CaptureInstance> instances;
};

inline std::vector<std::uint8_t> green_texels() {
    std::vector<std::uint8_t> px(4 * 4 * 4);
    for (std::size_t i = 0; i < 16; ++i) {
        px[i * 4 + 0] = 20;
        px[i * 4 + 1] = 230;
        px[i * 4 + 2] = 40;
        px[i * 4 + 3] = 255;
    }
    return px;
}

inline ArrayScene make_array_scene(bool indices32 = false) {
    SceneBuilder b;
    const std::vector<std::uint8_t> green = green_texels();
    const ImageId image = b.add_image(4, 4, green, "green");
    const MaterialId red = b.add_material({{1.0f, 0.1f, 0.1f, 1.0f}, std::nullopt, "red"});
    const MaterialId textured = b.add_material({{1.0f, 1.0f, 1.0f, 1.0f}, image, "textured"});
    const MaterialId blue = b.add_material({{0.1f, 0.1f, 1.0f, 1.0f}, std::nullopt, "blue"});

    const std::vector<float> left = {-2, -1, 0, -0.1f, -1, 0, -0.1f, 1, 0, -2, 1, 0};
    const std::vector<float> right = {0.1f, -1, 0, 2, -1, 0, 2, 1, 0, 0.1f, 1, 0};
    const std::vector<float> normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    const std::vector<float> uvs = {0, 1, 1, 1, 1, 0, 0, 0};
    const std::vector<std::uint16_t> idx16 = {0, 1, 2, 0, 2, 3};
    const std::vector<std::uint32_t> idx32(idx16.begin(), idx16.end());
    PrimitiveDesc l;
    l.positions = left;
    l.normals = normals;
    l.uvs = uvs;
    l.material = red;
    PrimitiveDesc r = l;
    r.positions = right;
    r.material = textured;
    for (PrimitiveDesc* p : {&l, &r}) {
        if (indices32) {
            p->indices32 = idx32;
        } else {
            p->indices16 = idx16;
        }
    }
    const MeshId panels = b.add_mesh("panels", {l, r});

    const std::vector<float> tri = {-0.5f, 1.2f, 0.5f, 0.5f, 1.2f, 0.5f, 0.0f, 1.9f, 0.5f};
    PrimitiveDesc t;
    t.positions = tri;
    t.material = blue;
    const MeshId triangle = b.add_mesh("triangle", {t});

    ArrayScene out;
    out.scene = b.build();
    out.instances = {{panels, k_identity, {"worker"}}, {triangle, k_identity, {"worker"}}};
    return out;
}

} // namespace tandem::test
