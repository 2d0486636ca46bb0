// glTF 2.0 loading (.gltf with external or embedded buffers, and .glb) through tinygltf, with
// images decoded by stb_image to RGBA8. Every index, range and number in the file is checked;
// anything broken is refused with a tandem::Error naming the file and the part at fault.
// External URIs resolve only inside the scene's folder: no absolute paths, no "..", no
// shell-style expansion, no symbolic link leading out of it.
//
// Supported: triangle primitives, lists, strips and fans (strips and fans become lists; POSITION,
// NORMAL, TEXCOORD_0, indices), materials' base colour factor and texture, perspective and
// orthographic cameras, node TRS or matrix transforms, and tags from node extras
// {"tandem": {"tags": ["worker", ...]}} (inherited by children). Refused: glTF 1.0 (and any
// asset.version other than 2.x), and a scene with no triangle to draw. The scene shown is the
// file's "scene", else scene 0, else its root nodes; the fallback is logged (core/log.hpp,
// category "scene": info, or warn when there are several scenes to choose from). Points and
// lines are skipped with a warning. Pure CPU work; any thread; no Vulkan.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "scene/scene.hpp"

namespace tandem::detail {

// Loads `path` (binary when it starts with the "glTF" magic, else JSON).
[[nodiscard]] Scene load_gltf(const std::string& path);

// Loads a document held in memory; external URIs resolve inside `base_dir` (which may be empty:
// then only embedded data URIs and the GLB chunk are usable). `origin` names it in messages.
[[nodiscard]] Scene load_gltf_from_memory(std::span<const std::uint8_t> bytes,
                                          const std::string& base_dir, const std::string& origin);

} // namespace tandem::detail
