// Writes small glTF 2.0 test scenes from code: several meshes and primitives, materials with
// base colour factors and a PNG texture (a file beside the scene, or embedded), a camera and
// tagged nodes; as .gltf with an external or embedded buffer, or as .glb. Used by the scene and
// render tests, and to write the glTF fuzz corpus's textured seeds.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <stb_image_write.h>

#include "temp_folder.hpp"

namespace tandem::test {

enum class GltfForm { ExternalBuffer, EmbeddedBuffer, Binary };

inline std::string base64(const std::vector<std::uint8_t>& data) {
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < data.size(); i += 3) {
        const std::uint32_t v = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
        out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], k[v & 63]};
    }
    if (i + 1 == data.size()) {
        const std::uint32_t v = data[i] << 16;
        out += {k[v >> 18], k[(v >> 12) & 63], '=', '='};
    } else if (i + 2 == data.size()) {
        const std::uint32_t v = (data[i] << 16) | (data[i + 1] << 8);
        out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
    }
    return out;
}

struct TestGltf {
    nlohmann::json doc;
    std::vector<std::uint8_t> bin;
};

// Scene: mesh "panels" with two primitives side by side facing +Z (left: red factor, right:
// green texture), mesh "triangle" (blue, no indices, no normals) on a tagged child node, and a
// perspective camera "cam" at z = 4 looking at them.
inline TestGltf make_test_gltf() {
    TestGltf g;
    auto add_floats = [&](const std::vector<float>& v) {
        const std::size_t offset = g.bin.size();
        g.bin.resize(offset + v.size() * 4);
        std::memcpy(g.bin.data() + offset, v.data(), v.size() * 4);
        return offset;
    };
    auto add_u16 = [&](const std::vector<std::uint16_t>& v) {
        const std::size_t offset = g.bin.size();
        g.bin.resize(offset + v.size() * 2);
        std::memcpy(g.bin.data() + offset, v.data(), v.size() * 2);
        while (g.bin.size() % 4 != 0) {
            g.bin.push_back(0);
        }
        return offset;
    };
    nlohmann::json views = nlohmann::json::array();
    nlohmann::json accessors = nlohmann::json::array();
    auto accessor = [&](std::size_t offset, std::size_t bytes, int component, std::size_t count,
                        const char* type, nlohmann::json extra = nlohmann::json::object()) {
        views.push_back({{"buffer", 0}, {"byteOffset", offset}, {"byteLength", bytes}});
        nlohmann::json a = {{"bufferView", views.size() - 1},
                            {"componentType", component},
                            {"count", count},
                            {"type", type}};
        a.update(extra);
        accessors.push_back(a);
        return accessors.size() - 1;
    };
    auto quad = [&](float x0, float x1) {
        std::vector<float> pos = {x0, -1, 0, x1, -1, 0, x1, 1, 0, x0, 1, 0};
        std::vector<float> nrm = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
        std::vector<float> uv = {0, 1, 1, 1, 1, 0, 0, 0};
        std::vector<std::uint16_t> idx = {0, 1, 2, 0, 2, 3};
        const auto p = accessor(add_floats(pos), 48, 5126, 4, "VEC3",
                                {{"min", {x0, -1, 0}}, {"max", {x1, 1, 0}}});
        const auto n = accessor(add_floats(nrm), 48, 5126, 4, "VEC3");
        const auto t = accessor(add_floats(uv), 32, 5126, 4, "VEC2");
        const auto i = accessor(add_u16(idx), 12, 5123, 6, "SCALAR");
        return nlohmann::json{{"attributes", {{"POSITION", p}, {"NORMAL", n}, {"TEXCOORD_0", t}}},
                              {"indices", i}};
    };
    auto left = quad(-2.0f, -0.1f);
    left["material"] = 0;
    auto right = quad(0.1f, 2.0f);
    right["material"] = 1;
    std::vector<float> tri = {-0.5f, 1.2f, 0.5f, 0.5f, 1.2f, 0.5f, 0.0f, 1.9f, 0.5f};
    const auto tp = accessor(add_floats(tri), 36, 5126, 3, "VEC3",
                             {{"min", {-0.5, 1.2, 0.5}}, {"max", {0.5, 1.9, 0.5}}});
    g.doc = {
        {"asset", {{"version", "2.0"}, {"generator", "tandem tests"}}},
        {"scene", 0},
        {"scenes", {{{"nodes", {0, 2}}}}},
        {"nodes",
         {{{"name", "panels"},
           {"mesh", 0},
           {"children", {1}},
           {"extras", {{"tandem", {{"tags", {"worker"}}}}}}},
          {{"name", "triangle"}, {"mesh", 1}, {"translation", {0.0, 0.0, 0.0}}},
          {{"name", "camera node"}, {"camera", 0}, {"translation", {0.0, 0.3, 4.0}}}}},
        {"cameras",
         {{{"name", "cam"},
           {"type", "perspective"},
           {"perspective", {{"yfov", 1.0}, {"znear", 0.1}, {"zfar", 50.0}}}}}},
        {"meshes",
         {{{"name", "panels"}, {"primitives", {left, right}}},
          {{"name", "triangle"},
           {"primitives", {{{"attributes", {{"POSITION", tp}}}, {"material", 2}}}}}}},
        {"materials",
         {{{"name", "red"}, {"pbrMetallicRoughness", {{"baseColorFactor", {1.0, 0.1, 0.1, 1.0}}}}},
          {{"name", "textured"}, {"pbrMetallicRoughness", {{"baseColorTexture", {{"index", 0}}}}}},
          {{"name", "blue"},
           {"pbrMetallicRoughness", {{"baseColorFactor", {0.1, 0.1, 1.0, 1.0}}}}}}},
        {"textures", {{{"source", 0}}}},
        {"images", {{{"uri", "green.png"}}}},
        {"bufferViews", views},
        {"accessors", accessors},
    };
    return g;
}

inline void write_green_png(const std::filesystem::path& path) {
    std::vector<std::uint8_t> px(4 * 4 * 4);
    for (std::size_t i = 0; i < 16; ++i) {
        px[i * 4 + 0] = 20;
        px[i * 4 + 1] = 230;
        px[i * 4 + 2] = 40;
        px[i * 4 + 3] = 255;
    }
    stbi_write_png(path.c_str(), 4, 4, 4, px.data(), 16);
}

inline std::vector<std::uint8_t> green_png_bytes() {
    std::vector<std::uint8_t> px(4 * 4 * 4);
    for (std::size_t i = 0; i < 16; ++i) {
        px[i * 4 + 0] = 20;
        px[i * 4 + 1] = 230;
        px[i * 4 + 2] = 40;
        px[i * 4 + 3] = 255;
    }
    std::vector<std::uint8_t> out;
    stbi_write_png_to_func(
        [](void* context, void* data, int size) {
            auto* bytes = static_cast<std::vector<std::uint8_t>*>(context);
            const auto* p = static_cast<const std::uint8_t*>(data);
            bytes->insert(bytes->end(), p, p + size);
        },
        &out, 4, 4, 4, px.data(), 16);
    return out;
}

// Appends `data` to the buffer (4-byte aligned) under a new buffer view; returns the view's index.
inline std::size_t add_buffer_view(TestGltf& g, const std::vector<std::uint8_t>& data) {
    const std::size_t offset = g.bin.size();
    g.bin.insert(g.bin.end(), data.begin(), data.end());
    while (g.bin.size() % 4 != 0) {
        g.bin.push_back(0);
    }
    g.doc["bufferViews"].push_back(
        {{"buffer", 0}, {"byteOffset", offset}, {"byteLength", data.size()}});
    return g.doc["bufferViews"].size() - 1;
}

// Appends unsigned short indices; returns the accessor's index.
inline std::size_t add_indices(TestGltf& g, const std::vector<std::uint16_t>& indices) {
    std::vector<std::uint8_t> bytes(indices.size() * 2);
    std::memcpy(bytes.data(), indices.data(), bytes.size());
    const std::size_t view = add_buffer_view(g, bytes);
    g.doc["accessors"].push_back({{"bufferView", view},
                                  {"componentType", 5123},
                                  {"count", indices.size()},
                                  {"type", "SCALAR"}});
    return g.doc["accessors"].size() - 1;
}

// Moves the green texture into the file itself: into a buffer view (what a .glb holds) or a
// data URI, so that the scene needs no file beside it.
inline void embed_texture(TestGltf& g, bool in_buffer_view) {
    const std::vector<std::uint8_t> png = green_png_bytes();
    if (in_buffer_view) {
        g.doc["images"][0] = {{"bufferView", add_buffer_view(g, png)}, {"mimeType", "image/png"}};
    } else {
        g.doc["images"][0] = {{"uri", "data:image/png;base64," + base64(png)}};
    }
}

// Writes the scene into `folder` as scene.gltf (+ scene.bin, green.png) or scene.glb; returns
// the scene file's path.
inline std::filesystem::path write_test_gltf(const std::filesystem::path& folder, GltfForm form,
                                             TestGltf g = make_test_gltf()) {
    std::filesystem::create_directories(folder);
    write_green_png(folder / "green.png");
    if (form == GltfForm::Binary) {
        g.doc["buffers"] = {{{"byteLength", g.bin.size()}}};
        std::string json = g.doc.dump();
        while (json.size() % 4 != 0) {
            json += ' ';
        }
        std::vector<std::uint8_t> bin = g.bin;
        while (bin.size() % 4 != 0) {
            bin.push_back(0);
        }
        const std::uint32_t total =
            static_cast<std::uint32_t>(12 + 8 + json.size() + 8 + bin.size());
        std::ofstream out(folder / "scene.glb", std::ios::binary);
        auto u32 = [&](std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
        out.write("glTF", 4);
        u32(2);
        u32(total);
        u32(static_cast<std::uint32_t>(json.size()));
        out.write("JSON", 4);
        out.write(json.data(), static_cast<std::streamsize>(json.size()));
        u32(static_cast<std::uint32_t>(bin.size()));
        out.write("BIN\0", 4);
        out.write(reinterpret_cast<const char*>(bin.data()),
                  static_cast<std::streamsize>(bin.size()));
        return folder / "scene.glb";
    }
    if (form == GltfForm::EmbeddedBuffer) {
        g.doc["buffers"] = {{{"byteLength", g.bin.size()},
                             {"uri", "data:application/octet-stream;base64," + base64(g.bin)}}};
    } else {
        g.doc["buffers"] = {{{"byteLength", g.bin.size()}, {"uri", "scene.bin"}}};
        std::ofstream bin(folder / "scene.bin", std::ios::binary);
        bin.write(reinterpret_cast<const char*>(g.bin.data()),
                  static_cast<std::streamsize>(g.bin.size()));
    }
    std::ofstream(folder / "scene.gltf") << g.doc.dump(2);
    return folder / "scene.gltf";
}

} // namespace tandem::test
