// Scene data from plain arrays (tandem/scene.hpp, capture.hpp, gltf.hpp): the builder turns the
// application's arrays into the same model the glTF loader makes from the equivalent file;
// every bad input is refused with a sentence saying what is wrong and what to do, and adds
// nothing; capture snapshots are checked, filtered by tag and encoded for a worker.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include <gtest/gtest.h>

#include "gltf_writer.hpp"
#include "scene/capture_codec.hpp"
#include "scene/scene_access.hpp"
#include "scene_arrays.hpp"
#include "tandem/error.hpp"
#include "tandem/gltf.hpp"

namespace tandem::test {
namespace {

const detail::SceneAssets& assets_of(const Scene& scene) {
    return *detail::SceneAccess::assets(scene);
}

template <typename F>
std::string refusal(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(accepted)";
}

const std::vector<float> k_tri = {0, 0, 0, 1, 0, 0, 0, 1, 0};

TEST(SceneBuilder, ArraysMakeTheModelTheGltfLoaderMakesFromTheSameScene) {
    const ArrayScene arrays = make_array_scene();
    const auto folder = temp_folder("scene-builder");
    SceneBuilder b;
    const GltfContents file = load_gltf(write_test_gltf(folder, GltfForm::Binary).string(), b);
    const auto gltf = b.build();

    const detail::SceneAssets& a = assets_of(*arrays.scene);
    const detail::SceneAssets& g = assets_of(*gltf);
    ASSERT_EQ(a.meshes.size(), g.meshes.size());
    for (std::size_t m = 0; m < a.meshes.size(); ++m) {
        ASSERT_EQ(a.meshes[m].primitives.size(), g.meshes[m].primitives.size()) << m;
        EXPECT_EQ(a.meshes[m].name, g.meshes[m].name);
        for (std::size_t p = 0; p < a.meshes[m].primitives.size(); ++p) {
            const detail::Primitive& x = a.meshes[m].primitives[p];
            const detail::Primitive& y = g.meshes[m].primitives[p];
            EXPECT_EQ(x.indices, y.indices) << m << "/" << p;
            EXPECT_EQ(x.material, y.material) << m << "/" << p;
            ASSERT_EQ(x.vertices.size(), y.vertices.size());
            for (std::size_t v = 0; v < x.vertices.size(); ++v) {
                EXPECT_EQ(x.vertices[v].position, y.vertices[v].position) << m << "/" << p;
                EXPECT_EQ(x.vertices[v].normal, y.vertices[v].normal) << m << "/" << p;
                EXPECT_EQ(x.vertices[v].uv, y.vertices[v].uv) << m << "/" << p;
            }
        }
        EXPECT_EQ(a.meshes[m].bounds.min, g.meshes[m].bounds.min);
        EXPECT_EQ(a.meshes[m].bounds.max, g.meshes[m].bounds.max);
    }
    ASSERT_EQ(a.materials.size(), g.materials.size());
    for (std::size_t i = 0; i < a.materials.size(); ++i) {
        EXPECT_EQ(a.materials[i].base_color, g.materials[i].base_color) << i;
        EXPECT_EQ(a.materials[i].base_color_texture, g.materials[i].base_color_texture) << i;
    }
    ASSERT_EQ(a.textures.size(), 1u);
    ASSERT_EQ(g.textures.size(), 1u);
    EXPECT_EQ(a.textures[0].rgba, g.textures[0].rgba);

    // The file's nodes are the same instances, its camera a perspective one at its node.
    ASSERT_EQ(file.instances.size(), arrays.instances.size());
    for (std::size_t i = 0; i < file.instances.size(); ++i) {
        EXPECT_EQ(file.instances[i].mesh, arrays.instances[i].mesh);
        EXPECT_EQ(file.instances[i].transform, arrays.instances[i].transform);
        EXPECT_EQ(file.instances[i].tags, arrays.instances[i].tags);
    }
    ASSERT_EQ(file.cameras.size(), 1u);
    EXPECT_EQ(file.cameras[0].name, "cam");
    EXPECT_EQ(file.cameras[0].camera.projection, Projection::Perspective);
    EXPECT_FLOAT_EQ(file.cameras[0].camera.fov_y, 1.0f);
    EXPECT_FLOAT_EQ(file.cameras[0].camera.z_near, 0.1f);
    EXPECT_FLOAT_EQ(file.cameras[0].camera.z_far, 50.0f);
    EXPECT_FLOAT_EQ(file.cameras[0].camera.view[13], -0.3f);
    EXPECT_FLOAT_EQ(file.cameras[0].camera.view[14], -4.0f);
}

TEST(SceneBuilder, SixteenAndThirtyTwoBitIndicesGiveTheSameMesh) {
    const auto a = make_array_scene(false);
    const auto b = make_array_scene(true);
    const auto& pa = assets_of(*a.scene).meshes[0].primitives;
    const auto& pb = assets_of(*b.scene).meshes[0].primitives;
    ASSERT_EQ(pa.size(), 2u);
    EXPECT_EQ(pa[0].indices, pb[0].indices);
    EXPECT_EQ(pa[1].indices, (std::vector<std::uint32_t>{0, 1, 2, 0, 2, 3}));
}

TEST(SceneBuilder, MissingNormalsAreComputedAndMissingIndicesTakeTheVerticesInOrder) {
    SceneBuilder b;
    PrimitiveDesc p;
    p.positions = k_tri;
    (void)b.add_mesh("tri", {p});
    const auto scene = b.build();
    const detail::Primitive& prim = assets_of(*scene).meshes[0].primitives[0];
    EXPECT_EQ(prim.indices, (std::vector<std::uint32_t>{0, 1, 2}));
    for (const detail::Vertex& v : prim.vertices) {
        EXPECT_EQ(v.normal, glm::vec3(0, 0, 1)); // counter-clockwise seen from +Z
        EXPECT_EQ(v.uv, glm::vec2(0, 0));
    }
    EXPECT_EQ(scene->mesh_count(), 1u);
    EXPECT_EQ(scene->material_count(), 1u);
    EXPECT_EQ(scene->find_mesh("tri"), MeshId{0});
    EXPECT_EQ(scene->mesh_bounds(MeshId{0}).max, (std::array<float, 3>{1, 1, 0}));
    EXPECT_EQ(refusal([&] { (void)scene->mesh_bounds(MeshId{3}); }),
              "The scene has no mesh 3 (it has 1). Use a MeshId returned by the builder that "
              "built this scene");
    EXPECT_EQ(b.mesh_count(), 0u); // build() empties the builder
}

TEST(SceneBuilder, BadInputIsRefusedWithASentenceAndAddsNothing) {
    SceneBuilder b;
    const std::vector<std::uint8_t> texels(4 * 4 * 4, 255);
    EXPECT_EQ(refusal([&] { (void)b.add_image(4, 4, std::span(texels).first(63)); }),
              "Image 0 is 4x4 but has 63 bytes (64 expected). Give width * height * 4 bytes: R, "
              "G, B, A per texel, rows tightly packed");
    EXPECT_NE(refusal([&] { (void)b.add_image(0, 4, texels); }).find("Image 0 is 0x4"),
              std::string::npos);
    EXPECT_NE(refusal([&] {
                  (void)b.add_image(9000, 1, texels);
              }).find("Give an image 1 to 8192 texels per side"),
              std::string::npos);
    EXPECT_EQ(refusal([&] {
                  (void)b.add_material({{1, 1, 1, 1}, ImageId{0}, "paint"});
              }),
              "Material 1 'paint' names image 0, which this builder does not have (it has 0). "
              "Add the image first and use the ImageId add_image returned");
    EXPECT_NE(refusal([&] {
                  (void)b.add_material({{1, 2, 1, 1}, std::nullopt, ""});
              }).find("has base colour component 1 of 2.0"),
              std::string::npos);

    auto mesh_refusal = [&](PrimitiveDesc p) {
        return refusal([&] { (void)b.add_mesh("m", {p}); });
    };
    PrimitiveDesc p;
    p.positions = k_tri;
    const std::vector<std::uint16_t> out_of_range = {0, 1, 3};
    p.indices16 = out_of_range;
    EXPECT_EQ(mesh_refusal(p),
              "Mesh 0 'm' primitive 0 has index 3 at position 2, but only 3 vertices (0 to 2). "
              "Give indices below the primitive's vertex count");
    p = {};
    const std::vector<float> eight = {0, 0, 0, 1, 0, 0, 0, 1};
    p.positions = eight;
    EXPECT_NE(mesh_refusal(p).find("has 8 position floats, not a whole number of vertices"),
              std::string::npos);
    p.positions = k_tri;
    const std::vector<float> two_normals = {0, 0, 1, 0, 0, 1};
    p.normals = two_normals;
    EXPECT_NE(mesh_refusal(p).find("has 6 normal floats for 3 vertices (9 expected)"),
              std::string::npos);
    p.normals = {};
    const std::vector<float> uvs = {0, 0, 1, 0, 0, 1, 1};
    p.uvs = uvs;
    EXPECT_NE(mesh_refusal(p).find("has 7 UV floats for 3 vertices (6 expected)"),
              std::string::npos);
    p.uvs = {};
    std::vector<float> nan = k_tri;
    nan[4] = std::numeric_limits<float>::quiet_NaN();
    p.positions = nan;
    EXPECT_NE(mesh_refusal(p).find("has a position that is not finite: y of vertex 1 is nan"),
              std::string::npos)
        << mesh_refusal(p);
    p.positions = k_tri;
    const std::vector<float> zero_normals(9, 0.0f);
    p.normals = zero_normals;
    EXPECT_NE(mesh_refusal(p).find("has a normal of length 0 at vertex 0"), std::string::npos);
    p.normals = {};
    p.material = MaterialId{5};
    EXPECT_NE(mesh_refusal(p).find("names material 5, which this builder does not have"),
              std::string::npos);
    p.material = {};
    const std::vector<std::uint32_t> four = {0, 1, 2, 0};
    p.indices32 = four;
    EXPECT_NE(mesh_refusal(p).find("has 4 indices, not a whole number of triangles"),
              std::string::npos);
    p.indices16 = out_of_range;
    EXPECT_NE(mesh_refusal(p).find("has both 16-bit and 32-bit indices"), std::string::npos);
    EXPECT_EQ(refusal([&] { (void)b.add_mesh("empty", std::span<const PrimitiveDesc>{}); }),
              "Mesh 0 'empty' has no primitives. Give a mesh at least one primitive");
    EXPECT_EQ(refusal([&] { (void)b.build(); }),
              "The scene builder holds no mesh, so there is nothing to draw. Add at least one "
              "mesh (add_mesh) before build()");
    EXPECT_EQ(b.image_count(), 0u);
    EXPECT_EQ(b.material_count(), 1u);
    EXPECT_EQ(b.mesh_count(), 0u);
}

TEST(SceneBuilder, AGltfFileAddsAfterWhatTheBuilderHoldsOrNothingAtAll) {
    const auto folder = temp_folder("scene-builder-append");
    SceneBuilder b;
    PrimitiveDesc p;
    p.positions = k_tri;
    (void)b.add_mesh("engine mesh", {p});
    (void)b.add_material({});
    const GltfContents file =
        load_gltf(write_test_gltf(folder, GltfForm::ExternalBuffer).string(), b);
    EXPECT_EQ(b.mesh_count(), 3u);
    EXPECT_EQ(b.material_count(), 5u);
    ASSERT_EQ(file.instances.size(), 2u);
    EXPECT_EQ(file.instances[0].mesh, MeshId{1});
    EXPECT_EQ(file.instances[1].mesh, MeshId{2});
    const auto scene = b.build();
    const detail::SceneAssets& a = assets_of(*scene);
    EXPECT_EQ(a.meshes[1].primitives[0].material, 2u); // the file's "red" after ours
    EXPECT_EQ(a.meshes[1].primitives[1].material, 3u);
    EXPECT_EQ(a.materials[3].base_color_texture, std::optional<std::uint32_t>(0));

    // A file the loader reads but the builder refuses (a normal of length 0 in the second
    // panel, after its image and materials were added) is cut back: the builder is as it was.
    (void)b.add_mesh("engine mesh", {p});
    TestGltf g = make_test_gltf();
    const std::size_t view = g.doc["accessors"][5]["bufferView"];
    const std::size_t offset = g.doc["bufferViews"][view]["byteOffset"];
    std::fill(g.bin.begin() + static_cast<std::ptrdiff_t>(offset),
              g.bin.begin() + static_cast<std::ptrdiff_t>(offset + 48), std::uint8_t{0});
    const auto broken = write_test_gltf(folder / "broken", GltfForm::Binary, g);
    EXPECT_EQ(refusal([&] { (void)load_gltf(broken.string(), b); }),
              "Mesh 1 'panels' primitive 1 has a normal of length 0 at vertex 0. Give every "
              "vertex a normal of some length (Tandem normalises them), or no normals to have "
              "them computed");
    EXPECT_EQ(b.mesh_count(), 1u);
    EXPECT_EQ(b.material_count(), 1u);
    EXPECT_EQ(b.image_count(), 0u);
    // A file the loader refuses names itself.
    std::filesystem::remove(folder / "scene.bin");
    const std::string why = refusal([&] { (void)load_gltf((folder / "scene.gltf").string(), b); });
    EXPECT_NE(why.find("scene.bin"), std::string::npos) << why;
    EXPECT_EQ(b.mesh_count(), 1u);
}

TEST(CaptureSnapshot, BadSnapshotsAreNamedByCheckCapture) {
    const ArrayScene s = make_array_scene();
    CaptureSnapshot shot;
    shot.camera.view = look_at({0, 0, 4}, {0, 0, 0}, {0, 1, 0});
    shot.instances = s.instances;
    EXPECT_EQ(check_capture(shot, *s.scene), "");
    shot.instances.push_back({MeshId{7}, k_identity, {}});
    EXPECT_EQ(check_capture(shot, *s.scene),
              "The capture snapshot cannot be drawn: instance 2 names mesh 7, but the task's "
              "scene has 2 mesh(es); use a MeshId from the builder that built the scene given to "
              "tandem::capture_workload");
    shot.instances.pop_back();
    shot.instances[1].transform[5] = std::numeric_limits<float>::infinity();
    EXPECT_NE(check_capture(shot, *s.scene).find("instance 1 has a transform that is not finite"),
              std::string::npos);
    shot.instances = s.instances;
    shot.camera.fov_y = 3.2f;
    EXPECT_NE(check_capture(shot, *s.scene).find("give fov_y between 0 and 3.1"),
              std::string::npos);
    shot.camera.fov_y = 0.8f;
    shot.camera.z_far = shot.camera.z_near;
    EXPECT_NE(check_capture(shot, *s.scene).find("give a finite z_far beyond z_near"),
              std::string::npos);
    shot.camera.z_far = 100.0f;
    shot.camera.projection = Projection::Orthographic;
    shot.camera.half_height = 0.0f;
    EXPECT_NE(check_capture(shot, *s.scene).find("give half_height above 0"), std::string::npos);
    shot.camera.half_height = 2.0f;
    shot.camera.view = look_at({0, 0, 4}, {0, 0, 4}, {0, 1, 0}); // eye on the target
    EXPECT_NE(check_capture(shot, *s.scene).find("view matrix is not finite or cannot be inverted"),
              std::string::npos);
    shot.camera.view = k_identity;
    shot.light.direction = {0, 0, 0};
    EXPECT_NE(check_capture(shot, *s.scene).find("a direction of length 0"), std::string::npos);
    shot.light = {};
    shot.instances.assign(k_max_capture_instances + 1, s.instances[0]);
    EXPECT_NE(check_capture(shot, *s.scene).find("4097 instances are drawn; draw at most 4096"),
              std::string::npos);
    shot.tag_filter = {"nothing has this tag"};
    EXPECT_EQ(check_capture(shot, *s.scene), "");
}

TEST(CaptureSnapshot, EncodingKeepsWhatTheTagFilterKeepsAndRefusesBrokenBytes) {
    CaptureSnapshot shot;
    shot.camera.projection = Projection::Orthographic;
    shot.camera.half_height = 3.0f;
    shot.instances = {{MeshId{0}, translation(1, 2, 3), {"a"}},
                      {MeshId{1}, k_identity, {"b"}},
                      {MeshId{1}, translation(0, 1, 0), {"c", "a"}}};
    shot.tag_filter = {"a"};
    const std::vector<std::byte> bytes = encode_capture(shot);
    const auto frame = detail::decode_capture_frame(bytes);
    ASSERT_TRUE(frame);
    ASSERT_EQ(frame->instances.size(), 2u);
    EXPECT_EQ(frame->instances[0].index, 0u);
    EXPECT_EQ(frame->instances[1].index, 2u);
    EXPECT_EQ(frame->instances[0].transform[3], glm::vec4(1, 2, 3, 1));
    EXPECT_EQ(frame->camera.projection, detail::Projection::Orthographic);
    EXPECT_EQ(frame->camera.ymag, 3.0f);
    const detail::FrameSnapshot s = detail::frame_snapshot(*frame, 2.0f);
    EXPECT_FLOAT_EQ(s.camera.projection[0][0], 1.0f / 6.0f); // half width: 3 * aspect 2

    detail::SnapshotRefusal why;
    EXPECT_FALSE(detail::decode_capture_frame(std::span(bytes).first(bytes.size() - 1), &why));
    EXPECT_STREQ(why.reason, "the instance count does not match the bytes that follow");
    std::vector<std::byte> other = bytes;
    other[0] = std::byte{0};
    EXPECT_FALSE(detail::decode_capture_frame(other, &why));
    EXPECT_EQ(why.byte, 0u);
}

TEST(CaptureSnapshot, TheFuzzSeedsDecodeAndEncodeAgainToTheSameBytes) {
    const std::filesystem::path corpus = std::filesystem::path(TANDEM_FUZZ_CORPUS) / "capture";
    std::size_t seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
        std::ifstream in(entry.path(), std::ios::binary);
        const std::vector<char> raw{std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>()};
        std::vector<std::byte> bytes(raw.size());
        std::memcpy(bytes.data(), raw.data(), raw.size());
        const auto frame = detail::decode_capture_frame(bytes);
        ASSERT_TRUE(frame) << entry.path();
        EXPECT_EQ(detail::check_capture_frame(*frame, 2, frame->instances.size()), "")
            << entry.path();
        EXPECT_EQ(detail::encode_capture_frame(*frame), bytes) << entry.path();
        ++seeds;
    }
    EXPECT_GE(seeds, 2u);
}

TEST(CaptureSnapshot, LookAtAndMatrixHelpers) {
    const Matrix4 view = look_at({0, 0, 5}, {0, 0, 0}, {0, 1, 0});
    EXPECT_EQ(view, translation(0, 0, -5));
    EXPECT_EQ(multiply(translation(1, 0, 0), translation(0, 2, 0)), translation(1, 2, 0));
    const Matrix4 side = look_at({3, 0, 0}, {0, 0, 0}, {0, 1, 0});
    EXPECT_FLOAT_EQ(side[2], 1.0f); // world +X is the camera's +Z (it looks down -X)
    EXPECT_FLOAT_EQ(side[14], -3.0f);
}

} // namespace
} // namespace tandem::test
