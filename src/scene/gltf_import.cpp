// tandem::load_gltf (tandem/gltf.hpp): the file read by the same loader as `tandem run --scene`
// (gltf_loader.hpp, every check included), then handed to the application's SceneBuilder as the
// arrays an engine would give it, so that both paths meet in the builder's checks and model.
#include "tandem/gltf.hpp"

#include <map>
#include <utility>

#include <glm/glm.hpp>

#include "scene/capture_codec.hpp"
#include "scene/gltf_loader.hpp"
#include "scene/scene.hpp"
#include "scene/scene_access.hpp"

namespace tandem {
namespace {

// One primitive's vertices as the separate arrays a PrimitiveDesc points at.
struct PrimitiveArrays {
    std::vector<float> positions;
    std::vector<float> normals;
    std::vector<float> uvs;
};

PrimitiveArrays arrays_of(const detail::Primitive& p) {
    PrimitiveArrays a;
    a.positions.reserve(p.vertices.size() * 3);
    a.normals.reserve(p.vertices.size() * 3);
    a.uvs.reserve(p.vertices.size() * 2);
    for (const detail::Vertex& v : p.vertices) {
        a.positions.insert(a.positions.end(), {v.position.x, v.position.y, v.position.z});
        a.normals.insert(a.normals.end(), {v.normal.x, v.normal.y, v.normal.z});
        a.uvs.insert(a.uvs.end(), {v.uv.x, v.uv.y});
    }
    return a;
}

} // namespace

GltfContents load_gltf(const std::string& path, SceneBuilder& builder) {
    const detail::Scene scene = detail::load_gltf(path);
    const detail::SceneAssets& assets = scene.assets();

    // A file the builder refuses (say, a normal of length 0) adds nothing: it is cut back.
    detail::SceneAssets& held = detail::SceneAccess::builder_assets(builder);
    const std::size_t images_before = held.textures.size();
    const std::size_t materials_before = held.materials.size();
    const std::size_t meshes_before = held.meshes.size();
    const auto image_base = static_cast<std::uint32_t>(images_before);
    const auto material_base = static_cast<std::uint32_t>(materials_before - 1); // the default
    // Meshes left without triangles (points and lines only) are not added; nodes showing them
    // are not instances.
    std::map<std::uint32_t, MeshId> mesh_ids; // the file's mesh -> the builder's
    try {
        for (const detail::Texture& t : assets.textures) {
            (void)builder.add_image(t.width, t.height, t.rgba, t.name);
        }
        for (std::size_t i = 1; i < assets.materials.size(); ++i) {
            const detail::Material& m = assets.materials[i];
            MaterialDesc desc;
            desc.name = m.name;
            desc.base_color = {m.base_color.r, m.base_color.g, m.base_color.b, m.base_color.a};
            if (m.base_color_texture) {
                desc.base_color_image = ImageId{image_base + *m.base_color_texture};
            }
            (void)builder.add_material(desc);
        }
        for (std::size_t i = 0; i < assets.meshes.size(); ++i) {
            const detail::Mesh& mesh = assets.meshes[i];
            if (mesh.primitives.empty()) {
                continue;
            }
            std::vector<PrimitiveArrays> arrays;
            std::vector<PrimitiveDesc> primitives;
            arrays.reserve(mesh.primitives.size());
            for (const detail::Primitive& p : mesh.primitives) {
                arrays.push_back(arrays_of(p));
                PrimitiveDesc desc;
                desc.positions = arrays.back().positions;
                desc.normals = arrays.back().normals;
                desc.uvs = arrays.back().uvs;
                desc.indices32 = p.indices;
                desc.material = MaterialId{p.material == 0 ? 0 : material_base + p.material};
                primitives.push_back(desc);
            }
            mesh_ids[static_cast<std::uint32_t>(i)] = builder.add_mesh(mesh.name, primitives);
        }
    } catch (...) {
        held.textures.resize(images_before);
        held.materials.resize(materials_before);
        held.meshes.resize(meshes_before);
        throw;
    }

    GltfContents out;
    for (const detail::Node& node : scene.nodes()) {
        if (!node.mesh) {
            continue;
        }
        const auto it = mesh_ids.find(*node.mesh);
        if (it == mesh_ids.end()) {
            continue;
        }
        out.instances.push_back({it->second, detail::to_matrix4(node.world), node.tags});
    }
    for (const detail::SceneCamera& c : scene.cameras()) {
        GltfCamera camera;
        camera.name = c.name;
        camera.camera =
            detail::capture_camera(c.model, glm::inverse(scene.nodes().at(c.node).world));
        out.cameras.push_back(std::move(camera));
    }
    return out;
}

} // namespace tandem
