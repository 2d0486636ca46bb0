// Writes the textured seeds of the glTF fuzz corpus (textured.glb, textured.gltf and
// strip_fan_lines.glb) from the glTF the scene tests build, into the folder given:
//     build/tests/scene/write_gltf_seeds fuzz/corpus/gltf
// A tool, not a test: GltfLoader.CorpusSeedsLoadOrAreRefused checks the seeds committed.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "gltf_writer.hpp"

int main(int argc, char** argv) {
    using namespace tandem::test;
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FOLDER (fuzz/corpus/gltf)\n", argv[0]);
        return 2;
    }
    try {
        const std::filesystem::path folder(argv[1]);
        std::filesystem::create_directories(folder);
        const auto dir = temp_folder("gltf-seeds");
        auto copy = [&](const std::filesystem::path& from, const char* name) {
            std::filesystem::copy_file(from, folder / name,
                                       std::filesystem::copy_options::overwrite_existing);
            std::printf("%s\n", (folder / name).string().c_str());
        };
        TestGltf g = make_test_gltf();
        embed_texture(g, true);
        copy(write_test_gltf(dir / "glb", GltfForm::Binary, g), "textured.glb");
        g = make_test_gltf();
        embed_texture(g, false);
        copy(write_test_gltf(dir / "gltf", GltfForm::EmbeddedBuffer, g), "textured.gltf");
        // Strips, fans, lines and no "scene" property.
        g = make_test_gltf();
        embed_texture(g, true);
        g.doc.erase("scene");
        auto& panels = g.doc["meshes"][0]["primitives"];
        panels[0]["mode"] = 5;
        panels[0]["indices"] = add_indices(g, {0, 1, 3, 2});
        panels[1]["mode"] = 6;
        g.doc["meshes"][1]["primitives"][0]["mode"] = 3;
        copy(write_test_gltf(dir / "modes", GltfForm::Binary, g), "strip_fan_lines.glb");
        std::filesystem::remove_all(dir);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "write_gltf_seeds: %s\n", e.what());
        return 1;
    }
    return 0;
}
