// glTF loading: every supported form loads the same scene; bad files are refused with a message
// that names the problem; URIs cannot leave the scene's folder.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/log.hpp"
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

std::string memory_load_error(const std::vector<std::uint8_t>& bytes) {
    try {
        (void)detail::load_gltf_from_memory(bytes, "", "input.glb");
    } catch (const Error& e) {
        return e.what();
    }
    return "(loaded without error)";
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::filesystem::path k_corpus = TANDEM_FUZZ_CORPUS;

// What the loader logs on this thread while it lives, at info and above, one line per message:
// "warn scene: text".
class CapturedLog {
public:
    CapturedLog()
        : m_logger(detail::Logger::create(
              LogLevel::Info,
              [this](LogLevel level, std::string_view category, std::string_view message) {
                  m_text << to_string(level) << ' ' << category << ": " << message << '\n';
              })),
          m_scope(*m_logger) {}
    CapturedLog(const CapturedLog&) = delete;
    CapturedLog& operator=(const CapturedLog&) = delete;
    std::string text() const { return m_text.str(); }

private:
    std::ostringstream m_text; // the loader logs on this thread only
    std::shared_ptr<detail::Logger> m_logger;
    detail::LogScope m_scope;
};

std::vector<std::uint32_t> indices_of(const detail::Primitive& p) {
    return p.indices;
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

TEST(GltfLoader, DrawsTriangleStripsAndFansAsLists) {
    const auto dir = temp_folder("gltf-strip-fan");
    TestGltf g = make_test_gltf();
    // Left panel as a strip over its 4 corners (0 1 2 3 = lower left, lower right, upper right,
    // upper left), right panel as a fan; the non-indexed triangle as a fan of its 3 vertices.
    auto& panels = g.doc["meshes"][0]["primitives"];
    panels[0]["mode"] = 5;
    panels[0]["indices"] = add_indices(g, {0, 1, 3, 2});
    panels[1]["mode"] = 6;
    panels[1]["indices"] = add_indices(g, {0, 1, 2, 3});
    g.doc["meshes"][1]["primitives"][0]["mode"] = 6;
    const detail::Scene scene =
        load_gltf(write_test_gltf(dir, GltfForm::EmbeddedBuffer, g).string());
    const auto& meshes = scene.assets().meshes;
    // glTF 2.0 3.7.2.1: strip triangle i = (v[i], v[i + 1 + i % 2], v[i + 2 - i % 2]), fan
    // triangle i = (v[i + 1], v[i + 2], v[0]): every one counter-clockwise, like the file's own.
    EXPECT_EQ(indices_of(meshes[0].primitives[0]), (std::vector<std::uint32_t>{0, 1, 3, 1, 2, 3}));
    EXPECT_EQ(indices_of(meshes[0].primitives[1]), (std::vector<std::uint32_t>{1, 2, 0, 2, 3, 0}));
    EXPECT_EQ(indices_of(meshes[1].primitives[0]), (std::vector<std::uint32_t>{1, 2, 0}));
    // Flat normals follow the winding: the fan's triangle still faces +Z.
    EXPECT_NEAR(meshes[1].primitives[0].vertices[0].normal.z, 1.0f, 1e-5f);
}

TEST(GltfLoader, SkipsPointsAndLinesAndRefusesUnknownModes) {
    const auto dir = temp_folder("gltf-modes");
    TestGltf g = make_test_gltf();
    g.doc["meshes"][0]["primitives"][1]["mode"] = 1; // lines
    CapturedLog log;
    const detail::Scene scene =
        load_gltf(write_test_gltf(dir / "lines", GltfForm::EmbeddedBuffer, g).string());
    EXPECT_EQ(scene.assets().meshes[0].primitives.size(), 1u);
    EXPECT_NE(log.text().find("warn scene: "), std::string::npos) << log.text();
    EXPECT_NE(log.text().find("primitive 1 is made of lines, not triangles; it is not drawn"),
              std::string::npos)
        << log.text();

    g.doc["meshes"][0]["primitives"][1]["mode"] = 9;
    const std::string message =
        load_error(write_test_gltf(dir / "nine", GltfForm::EmbeddedBuffer, g));
    EXPECT_NE(message.find("mesh 0 'panels' primitive 1 has mode 9, which glTF does not define"),
              std::string::npos)
        << message;
}

TEST(GltfLoader, RefusesGltf1) {
    const auto dir = temp_folder("gltf-v1");
    // The shape of a glTF 1.0 file: objects keyed by id, not arrays.
    std::ofstream(dir / "v1.gltf") << R"({"asset": {"version": "1.0"}, "scene": "defaultScene",
        "scenes": {"defaultScene": {"nodes": ["node_1"]}},
        "nodes": {"node_1": {"meshes": ["mesh_1"]}}, "meshes": {"mesh_1": {"primitives": []}}})";
    std::string message = load_error(dir / "v1.gltf");
    EXPECT_NE(message.find("v1.gltf is a glTF 1.0 file (asset.version \"1.0\"); Tandem reads "
                           "glTF 2.0 only"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("Convert the file to glTF 2.0"), std::string::npos) << message;

    std::ofstream(dir / "none.gltf") << R"({"scenes": {"s": {"nodes": []}}})";
    message = load_error(dir / "none.gltf");
    EXPECT_NE(message.find("none.gltf has no asset.version, so it is not glTF 2.0"),
              std::string::npos)
        << message;

    TestGltf g = make_test_gltf();
    g.doc["asset"]["version"] = "3.0";
    message = load_error(write_test_gltf(dir / "three", GltfForm::EmbeddedBuffer, g));
    EXPECT_NE(message.find("is glTF version 3.0 (asset.version \"3.0\")"), std::string::npos)
        << message;

    // Binary glTF 1.0 (KHR_binary_glTF): GLB header version 1.
    auto glb = read_bytes(write_test_gltf(dir / "glb", GltfForm::Binary));
    glb[4] = 1;
    message = memory_load_error(glb);
    EXPECT_NE(message.find("input.glb is binary glTF 1.0 (GLB version 1); Tandem reads glTF 2.0 "
                           "only"),
              std::string::npos)
        << message;
}

TEST(GltfLoader, WithoutASceneShowsSceneZeroOrTheRootNodesAndSaysSo) {
    const auto dir = temp_folder("gltf-no-scene");
    TestGltf g = make_test_gltf();
    g.doc.erase("scene");
    {
        CapturedLog log;
        const detail::Scene scene =
            load_gltf(write_test_gltf(dir / "one", GltfForm::EmbeddedBuffer, g).string());
        EXPECT_TRUE(scene.find_node("panels").has_value());
        EXPECT_EQ(scene.cameras().size(), 1u);
        // One scene to choose from: information, not a warning.
        EXPECT_NE(log.text().find("info scene: "), std::string::npos) << log.text();
        EXPECT_NE(log.text().find("no \"scene\" property; showing scene 0 (of 1 scene(s))"),
                  std::string::npos)
            << log.text();
    }
    {
        // Two scenes: the first is shown (it holds the panels, not the camera node).
        g.doc["scenes"] = {{{"nodes", {0}}}, {{"name", "camera only"}, {"nodes", {2}}}};
        CapturedLog log;
        const detail::Scene scene =
            load_gltf(write_test_gltf(dir / "two", GltfForm::EmbeddedBuffer, g).string());
        EXPECT_TRUE(scene.find_node("panels").has_value());
        EXPECT_TRUE(scene.cameras().empty());
        EXPECT_NE(log.text().find("warn scene: "), std::string::npos) << log.text();
        EXPECT_NE(log.text().find("showing scene 0 (of 2 scene(s))"), std::string::npos)
            << log.text();
    }
    {
        g.doc.erase("scenes");
        CapturedLog log;
        const detail::Scene scene =
            load_gltf(write_test_gltf(dir / "none", GltfForm::EmbeddedBuffer, g).string());
        EXPECT_TRUE(scene.find_node("triangle").has_value());
        EXPECT_EQ(scene.cameras().size(), 1u);
        EXPECT_NE(log.text().find("no scenes; showing its 2 root node(s)"), std::string::npos)
            << log.text();
    }
    {
        // A file that names its scene says nothing.
        CapturedLog log;
        (void)load_gltf(write_test_gltf(dir / "named", GltfForm::EmbeddedBuffer).string());
        EXPECT_EQ(log.text().find("showing"), std::string::npos) << log.text();
    }
}

TEST(GltfLoader, RefusesASceneWithNothingToDraw) {
    const auto dir = temp_folder("gltf-nothing");
    TestGltf g = make_test_gltf();
    g.doc["scenes"][0]["nodes"] = {2}; // the camera alone
    std::string message = load_error(write_test_gltf(dir / "camera", GltfForm::EmbeddedBuffer, g));
    EXPECT_NE(message.find("scene.gltf has nothing to draw: no node of scene 0 has a mesh with "
                           "triangles"),
              std::string::npos)
        << message;

    g = make_test_gltf();
    for (auto& mesh : g.doc["meshes"]) {
        for (auto& p : mesh["primitives"]) {
            p["mode"] = 0; // points
        }
    }
    message = load_error(write_test_gltf(dir / "points", GltfForm::EmbeddedBuffer, g));
    EXPECT_NE(message.find("has nothing to draw"), std::string::npos) << message;
    EXPECT_NE(message.find("(3 primitive(s) of points, lines or fewer than 3 vertices are not "
                           "drawn)"),
              std::string::npos)
        << message;
}

TEST(GltfLoader, ReadsImagesFromBufferViewsAndDataUris) {
    const auto dir = temp_folder("gltf-embedded-image");
    for (const bool in_view : {true, false}) {
        TestGltf g = make_test_gltf();
        embed_texture(g, in_view);
        const auto path = write_test_gltf(dir / (in_view ? "view" : "uri"),
                                          in_view ? GltfForm::Binary : GltfForm::EmbeddedBuffer, g);
        std::filesystem::remove(path.parent_path() / "green.png");
        const auto bytes = read_bytes(path);
        const detail::Scene scene = detail::load_gltf_from_memory(bytes, "", "embedded");
        ASSERT_EQ(scene.assets().textures.size(), 1u);
        EXPECT_EQ(scene.assets().textures[0].rgba[1], 230);
    }
}

TEST(GltfLoader, RefusesAnImageViewOutsideItsBuffer) {
    const auto dir = temp_folder("gltf-image-view");
    TestGltf g = make_test_gltf();
    embed_texture(g, true);
    const auto index = g.doc["images"][0]["bufferView"].get<std::size_t>();
    auto& view = g.doc["bufferViews"][index];
    view["byteLength"] = view["byteLength"].get<std::size_t>() + 2000;
    const auto bytes = read_bytes(write_test_gltf(dir, GltfForm::Binary, g));
    const std::string message = memory_load_error(bytes);
    EXPECT_NE(message.find("input.glb: image 0 reads outside its buffer (buffer view " +
                           std::to_string(index) + " covers bytes"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("is the file truncated?"), std::string::npos) << message;
}

// The fuzzer's find (a textured .glb with one digit changed): its image's buffer view ends 1,316
// bytes past the end of its buffer, and stb_image read past tinygltf's heap block.
TEST(GltfLoader, RefusesTheImageOverflowReproducer) {
    const auto bytes = read_bytes(k_corpus / "gltf" / "gltf-image-overflow.glb");
    ASSERT_FALSE(bytes.empty());
    const std::string message = memory_load_error(bytes);
    EXPECT_NE(
        message.find("input.glb: image 0 reads outside its buffer (buffer view 3 covers bytes "
                     "840 to 3273 of buffer 0, which has 1957 bytes"),
        std::string::npos)
        << message;
}

// The fuzzer's find: a PNG whose first IDAT chunk is empty, then a chunk stb_image does not know.
// stb_image copied the empty chunk to a null pointer (UBSan under fuzz_gltf). Empty chunks are
// now dropped before decoding (ReadsAPngWithEmptyIdatChunks), and the unknown chunk, which claims
// far more bytes than follow, refuses the image before stb_image reads it.
TEST(GltfLoader, RefusesThePngNullCopyReproducer) {
    const auto bytes = read_bytes(k_corpus / "gltf" / "gltf-png-null-copy.glb");
    ASSERT_FALSE(bytes.empty());
    const std::string message = memory_load_error(bytes);
    EXPECT_NE(message.find("input.glb: image 0 cannot be read: its PNG chunk at byte 45 claims "
                           "2040984991 bytes of data but only 25 follow"),
              std::string::npos)
        << message;
}

// The fuzzer's find: a PNG whose IDAT chunk claims 2 GiB of data in an image of a few kilobytes.
// stb_image grew its buffer to the claimed length before reading the chunk, and the allocation
// alone stopped fuzz_gltf; such a chunk is now refused before stb_image sees the image.
TEST(GltfLoader, RefusesThePngChunkClaiming2GibReproducer) {
    const auto bytes = read_bytes(k_corpus / "gltf" / "gltf-png-chunk-claims-2gib.glb");
    ASSERT_FALSE(bytes.empty());
    const std::string message = memory_load_error(bytes);
    EXPECT_NE(message.find("input.glb: image 0 cannot be read: its PNG chunk at byte "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("(a truncated or corrupt PNG)"), std::string::npos) << message;
}

// A PNG cut off inside its IDAT chunk is refused with the chunk's position and sizes, whether it
// comes from a buffer view or a data URI; the same PNG whole still loads.
TEST(GltfLoader, RefusesAPngWhoseChunkIsLongerThanTheImage) {
    const std::vector<std::uint8_t> whole = green_png_bytes();
    constexpr std::size_t k_idat = 8 + 8 + 13 + 4; // signature, IHDR's header, data, CRC
    ASSERT_GT(whole.size(), k_idat + 12);
    ASSERT_EQ(std::memcmp(whole.data() + k_idat + 4, "IDAT", 4), 0);
    const std::uint32_t idat_length = (std::uint32_t{whole[k_idat]} << 24) |
                                      (std::uint32_t{whole[k_idat + 1]} << 16) |
                                      (std::uint32_t{whole[k_idat + 2]} << 8) | whole[k_idat + 3];
    ASSERT_GT(idat_length, 1u);
    // Cut one byte before the chunk's data ends.
    const std::vector<std::uint8_t> cut(whole.begin(),
                                        whole.begin() + k_idat + 8 + idat_length - 1);

    const auto dir = temp_folder("gltf-png-cut");
    for (const bool in_view : {true, false}) {
        for (const bool is_cut : {false, true}) {
            const std::vector<std::uint8_t>& png = is_cut ? cut : whole;
            TestGltf g = make_test_gltf();
            if (in_view) {
                g.doc["images"][0] = {{"bufferView", add_buffer_view(g, png)},
                                      {"mimeType", "image/png"}};
            } else {
                g.doc["images"][0] = {{"uri", "data:image/png;base64," + base64(png)}};
            }
            const std::string name = std::string(in_view ? "view" : "uri") + (is_cut ? "-cut" : "");
            const auto path = write_test_gltf(
                dir / name, in_view ? GltfForm::Binary : GltfForm::EmbeddedBuffer, g);
            std::filesystem::remove(path.parent_path() / "green.png");
            if (!is_cut) {
                EXPECT_EQ(detail::load_gltf_from_memory(read_bytes(path), "", name)
                              .assets()
                              .textures.size(),
                          1u)
                    << name;
                continue;
            }
            const std::string message = memory_load_error(read_bytes(path));
            const std::string expected = "image 0 cannot be read: its PNG chunk at byte " +
                                         std::to_string(k_idat) + " claims " +
                                         std::to_string(idat_length) + " bytes of data but only " +
                                         std::to_string(idat_length - 1) + " follow";
            EXPECT_NE(message.find(expected), std::string::npos) << name << ": " << message;
        }
    }
}

// Empty IDAT chunks are valid PNG and carry no data: an image with them, before the data and
// before IEND, loads with the same pixels from a buffer view and from a data URI. (The .glb this
// writes is fuzz/corpus/gltf/empty_idat.glb, so that fuzz_gltf decodes it under the sanitizers.)
TEST(GltfLoader, ReadsAPngWithEmptyIdatChunks) {
    const std::vector<std::uint8_t> empty_idat = {0,   0,    0,    0,    'I', 'D', 'A',
                                                  'T', 0x35, 0xaf, 0x06, 0x1e}; // CRC of "IDAT"
    std::vector<std::uint8_t> png = green_png_bytes();
    constexpr std::size_t k_after_ihdr = 8 + 8 + 13 + 4; // signature, IHDR's header, data, CRC
    constexpr std::size_t k_iend = 12;
    ASSERT_GT(png.size(), k_after_ihdr + k_iend);
    ASSERT_EQ(std::memcmp(png.data() + k_after_ihdr + 4, "IDAT", 4), 0);
    ASSERT_EQ(std::memcmp(png.data() + png.size() - k_iend + 4, "IEND", 4), 0);
    png.insert(png.end() - k_iend, empty_idat.begin(), empty_idat.end());
    png.insert(png.begin() + k_after_ihdr, empty_idat.begin(), empty_idat.end());
    png.insert(png.begin() + k_after_ihdr, empty_idat.begin(), empty_idat.end());

    const auto dir = temp_folder("gltf-empty-idat");
    for (const bool in_view : {true, false}) {
        TestGltf g = make_test_gltf();
        if (in_view) {
            g.doc["images"][0] = {{"bufferView", add_buffer_view(g, png)},
                                  {"mimeType", "image/png"}};
        } else {
            g.doc["images"][0] = {{"uri", "data:image/png;base64," + base64(png)}};
        }
        const auto path = write_test_gltf(dir / (in_view ? "view" : "uri"),
                                          in_view ? GltfForm::Binary : GltfForm::EmbeddedBuffer, g);
        std::filesystem::remove(path.parent_path() / "green.png");
        const detail::Scene scene = detail::load_gltf_from_memory(read_bytes(path), "", "empty");
        ASSERT_EQ(scene.assets().textures.size(), 1u);
        const detail::Texture& texture = scene.assets().textures[0];
        EXPECT_EQ(texture.width, 4u);
        EXPECT_EQ(texture.height, 4u);
        ASSERT_EQ(texture.rgba.size(), 4u * 4u * 4u);
        for (std::size_t i = 0; i < 16; ++i) {
            EXPECT_EQ(texture.rgba[i * 4 + 1], 230) << "pixel " << i;
        }
    }
}

// The fuzz corpus's seeds are scenes that load (the textured ones with their texture); the
// inputs that once broke the loader are refused with a message naming the file. A new corpus
// file must be listed here as one or the other.
TEST(GltfLoader, CorpusSeedsLoadAndReproducersAreRefused) {
    const std::set<std::string> reproducers = {"gltf-image-overflow.glb", "gltf-png-null-copy.glb",
                                               "gltf-png-chunk-claims-2gib.glb"};
    const std::set<std::string> textured = {"textured.glb", "textured.gltf", "strip_fan_lines.glb",
                                            "empty_idat.glb"};
    const std::set<std::string> untextured = {"triangle.glb", "triangle.gltf"};
    std::set<std::string> seen;
    for (const auto& entry : std::filesystem::directory_iterator(k_corpus / "gltf")) {
        const std::string name = entry.path().filename().string();
        seen.insert(name);
        ASSERT_TRUE(reproducers.count(name) + textured.count(name) + untextured.count(name) == 1)
            << name << " is in fuzz/corpus/gltf but not listed here";
        const auto bytes = read_bytes(entry.path());
        try {
            const detail::Scene scene = detail::load_gltf_from_memory(bytes, "", name);
            EXPECT_EQ(reproducers.count(name), 0u) << name << " loaded; it must be refused";
            EXPECT_EQ(scene.assets().textures.size(), textured.count(name)) << name;
        } catch (const Error& e) {
            EXPECT_EQ(reproducers.count(name), 1u) << name << " was refused: " << e.what();
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(seen.size(), reproducers.size() + textured.size() + untextured.size());
}

TEST(GltfLoader, RefusesMissingFile) {
    const std::string message = load_error("/nonexistent/tandem/scene.gltf");
    EXPECT_NE(message.find("Cannot open scene file"), std::string::npos) << message;
}

} // namespace
} // namespace tandem::test
