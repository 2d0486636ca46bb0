// glTF loading: every supported form loads the same scene; bad files are refused with a message
// that names the problem; URIs cannot leave the scene's folder.
#include <fstream>

#include <gtest/gtest.h>

#include "gltf_writer.hpp"
#include "scene/gltf_loader.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

using detail::load_gltf;

std::string load_error(const std::filesystem::path& path) {
    try {
        (void)load_gltf(path.string());
    } catch (const Error& e) {
        return e.what();
    }
    return "(loaded without error)";
}

class GltfForms : public ::testing::TestWithParam<GltfForm> {};

TEST_P(GltfForms, LoadsMeshesPrimitivesMaterialsTextureCameraAndTags) {
    const auto dir = temp_folder("gltf-form" + std::to_string(static_cast<int>(GetParam())));
    const auto path = write_test_gltf(dir, GetParam());
    const detail::Scene scene = load_gltf(path.string());
    const detail::SceneAssets& a = scene.assets();
    ASSERT_EQ(a.meshes.size(), 2u);
    EXPECT_EQ(a.meshes[0].primitives.size(), 2u);
    EXPECT_EQ(a.meshes[0].primitives[0].indices.size(), 6u);
    EXPECT_EQ(a.meshes[1].primitives[0].indices.size(), 3u); // generated for a non-indexed mesh
    ASSERT_EQ(a.materials.size(), 4u);                       // default + 3
    EXPECT_FLOAT_EQ(a.materials[1].base_color.r, 1.0f);
    ASSERT_TRUE(a.materials[2].base_color_texture.has_value());
    ASSERT_EQ(a.textures.size(), 1u);
    EXPECT_EQ(a.textures[0].width, 4u);
    EXPECT_EQ(a.textures[0].rgba[1], 230);
    // Flat normals for the triangle that came without any: it faces +Z.
    EXPECT_NEAR(a.meshes[1].primitives[0].vertices[0].normal.z, 1.0f, 1e-5f);
    ASSERT_EQ(scene.cameras().size(), 1u);
    EXPECT_EQ(scene.cameras()[0].name, "cam");
    EXPECT_TRUE(scene.find_camera("camera node").has_value());
    const auto tri = scene.find_node("triangle");
    ASSERT_TRUE(tri.has_value());
    // Tags are inherited from the parent.
    ASSERT_EQ(scene.nodes()[*tri].tags.size(), 1u);
    EXPECT_EQ(scene.nodes()[*tri].tags[0], "worker");
    EXPECT_NEAR(scene.nodes()[scene.cameras()[0].node].world[3].z, 4.0f, 1e-6f);
}

INSTANTIATE_TEST_SUITE_P(Forms, GltfForms,
                         ::testing::Values(GltfForm::ExternalBuffer, GltfForm::EmbeddedBuffer,
                                           GltfForm::Binary));

TEST(GltfLoader, RefusesBrokenJson) {
    const auto dir = temp_folder("gltf-broken");
    std::ofstream(dir / "broken.gltf") << "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [";
    EXPECT_NE(load_error(dir / "broken.gltf").find("cannot be loaded"), std::string::npos);
}

TEST(GltfLoader, RefusesTruncatedGlb) {
    const auto dir = temp_folder("gltf-truncated");
    const auto path = write_test_gltf(dir, GltfForm::Binary);
    const auto size = std::filesystem::file_size(path);
    std::filesystem::resize_file(path, size - 40);
    const std::string message = load_error(path);
    EXPECT_NE(message.find("scene.glb"), std::string::npos) << message;
    EXPECT_NE(message.find("cannot be loaded"), std::string::npos) << message;
}

TEST(GltfLoader, RefusesTruncatedBuffer) {
    const auto dir = temp_folder("gltf-short-bin");
    const auto path = write_test_gltf(dir, GltfForm::ExternalBuffer);
    std::filesystem::resize_file(dir / "scene.bin", 20);
    const std::string message = load_error(path);
    EXPECT_NE(message.find("cannot be loaded"), std::string::npos) << message;
}

TEST(GltfLoader, RefusesMissingBuffer) {
    const auto dir = temp_folder("gltf-missing-bin");
    const auto path = write_test_gltf(dir, GltfForm::ExternalBuffer);
    std::filesystem::remove(dir / "scene.bin");
    const std::string message = load_error(path);
    EXPECT_NE(message.find("scene.bin"), std::string::npos) << message;
    EXPECT_NE(message.find("no such file"), std::string::npos) << message;
}

TEST(GltfLoader, RefusesMissingImage) {
    const auto dir = temp_folder("gltf-missing-png");
    const auto path = write_test_gltf(dir, GltfForm::ExternalBuffer);
    std::filesystem::remove(dir / "green.png");
    const std::string message = load_error(path);
    EXPECT_NE(message.find("green.png"), std::string::npos) << message;
    EXPECT_NE(message.find("could not be loaded"), std::string::npos) << message;
}

TEST(GltfLoader, RefusesUrisOutsideTheFolder) {
    const auto dir = temp_folder("gltf-escape");
    std::filesystem::create_directories(dir / "scene");
    for (const std::string uri : {"../scene.bin", "/etc/hostname", "sub/../../scene.bin"}) {
        TestGltf g = make_test_gltf();
        const auto path = write_test_gltf(dir / "scene", GltfForm::ExternalBuffer, g);
        // A real file one level up, so that only the folder rule can refuse it.
        std::filesystem::copy_file(dir / "scene" / "scene.bin", dir / "scene.bin",
                                   std::filesystem::copy_options::overwrite_existing);
        nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
        doc["buffers"][0]["uri"] = uri;
        std::ofstream(path) << doc.dump();
        const std::string message = load_error(path);
        EXPECT_NE(message.find("cannot be loaded"), std::string::npos) << uri << ": " << message;
        EXPECT_EQ(message.find("loaded without error"), std::string::npos) << uri;
    }
    // A symbolic link leading out of the folder is refused too.
    const auto path = write_test_gltf(dir / "scene", GltfForm::ExternalBuffer);
    std::filesystem::remove(dir / "scene" / "scene.bin");
    std::filesystem::create_symlink(dir / "scene.bin", dir / "scene" / "scene.bin");
    const std::string message = load_error(path);
    EXPECT_NE(message.find("leads out of the scene's folder"), std::string::npos) << message;
}

TEST(GltfLoader, NoShellExpansion) {
    const auto dir = temp_folder("gltf-expand");
    const auto path = write_test_gltf(dir, GltfForm::ExternalBuffer);
    nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
    doc["buffers"][0]["uri"] = "$HOME/scene.bin";
    std::ofstream(path) << doc.dump();
    const std::string message = load_error(path);
    EXPECT_NE(message.find("$HOME/scene.bin"), std::string::npos) << message;
}

TEST(GltfLoader, RefusesIndicesOutOfRange) {
    const auto dir = temp_folder("gltf-indices");
    TestGltf g = make_test_gltf();
    for (int a = 0; a < 3; ++a) {
        g.doc["accessors"][a]["count"] = 2; // 2 vertices in the first quad; its indices reach 3
    }
    const auto path = write_test_gltf(dir, GltfForm::EmbeddedBuffer, g);
    const std::string message = load_error(path);
    EXPECT_NE(message.find("index 2 but only 2 vertices"), std::string::npos) << message;
}

TEST(GltfLoader, RefusesMissingFile) {
    const std::string message = load_error("/nonexistent/tandem/scene.gltf");
    EXPECT_NE(message.find("Cannot open scene file"), std::string::npos) << message;
}

} // namespace
} // namespace tandem::test
