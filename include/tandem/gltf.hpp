// glTF 2.0 into a SceneBuilder (tandem/scene.hpp): the convenience for a scene made in a content
// tool, filling the same builder an engine fills from its own arrays.
//
// clang-format off
//     tandem::SceneBuilder builder;
//     const tandem::GltfContents file = tandem::load_gltf("room.glb", builder);
//     const auto scene = builder.build();
//     tandem::CaptureSnapshot shot;
//     shot.camera = file.cameras.at(0).camera;
//     shot.instances = file.instances;
// clang-format on
//
// What is read is what `tandem run --scene` reads (.gltf with external or embedded buffers and
// .glb; triangles, strips and fans; POSITION, NORMAL, TEXCOORD_0; base colour factors and
// textures; perspective and orthographic cameras; tags from node extras {"tandem": {"tags":
// [...]}}, inherited by children). External files must lie in the scene's folder. A broken file
// is refused with a tandem::Error naming the file and the part at fault; then nothing is added.
#pragma once

#include <string>
#include <vector>

#include "tandem/capture.hpp"
#include "tandem/export.hpp"
#include "tandem/scene.hpp"

namespace tandem {

struct GltfCamera {
    std::string name; // the camera's name, else its node's
    // Its projection and clip planes, and the view from its node's world transform. An
    // orthographic camera keeps its ymag as half_height (the width follows the task's aspect).
    CaptureCamera camera;
};

struct GltfContents {
    // Every node of the shown scene that has a mesh with triangles, in the file's node order:
    // the mesh's id in the builder, the node's world transform, its tags and its ancestors'.
    std::vector<CaptureInstance> instances;
    std::vector<GltfCamera> cameras;
};

// Adds the images, materials and meshes of the file at `path` to `builder` (ids continue after
// what it holds) and returns where its nodes put them. Throws tandem::Error.
[[nodiscard]] TANDEM_API GltfContents load_gltf(const std::string& path, SceneBuilder& builder);

} // namespace tandem
