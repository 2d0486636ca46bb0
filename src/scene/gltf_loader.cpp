#include "scene/gltf_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/gtc/type_ptr.hpp>
#include <stb_image.h>
#include <tiny_gltf.h>

#include "core/log.hpp"
#include "scene/primitives.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t k_max_file_bytes = 1ull << 30;
constexpr std::uint64_t k_max_elements = 1ull << 26;
constexpr int k_max_image_side = 8192;
constexpr std::size_t k_max_nodes = 1u << 20;

const char* const k_gltf_hint =
    "Check the file with a glTF validator (https://github.khronos.org/glTF-Validator/)";

// Restricts tinygltf's file access to the scene's folder.
struct FolderJail {
    std::string base;     // as handed to tinygltf (joined as base + "/" + uri)
    fs::path canonical;   // canonical form of base, for the symbolic link check
    std::string rejected; // why the last refused URI was refused

    // Empty when `abs` is a readable regular file inside the folder; else the reason.
    std::string check(const std::string& abs) const {
        if (base.empty()) {
            return "external files are not available for a scene loaded from memory";
        }
        const std::string prefix = base + "/";
        if (abs.compare(0, prefix.size(), prefix) != 0) {
            return "it does not lie inside the scene's folder";
        }
        const std::string rel = abs.substr(prefix.size());
        if (rel.empty() || rel[0] == '/' || rel[0] == '\\') {
            return "absolute paths are not allowed";
        }
        for (const auto& part : fs::path(rel)) {
            if (part == "..") {
                return "'..' is not allowed: files must lie inside the scene's folder";
            }
        }
        std::error_code ec;
        const fs::path real = fs::weakly_canonical(fs::path(abs), ec);
        if (ec) {
            return "it cannot be resolved";
        }
        auto [end, _] = std::mismatch(canonical.begin(), canonical.end(), real.begin(), real.end());
        if (end != canonical.end()) {
            return "it leads out of the scene's folder";
        }
        if (!fs::is_regular_file(real, ec)) {
            return "no such file";
        }
        return {};
    }

    static bool file_exists(const std::string& abs, void* user) {
        auto* self = static_cast<FolderJail*>(user);
        const std::string why = self->check(abs);
        if (why.empty()) {
            return true;
        }
        // tinygltf also tries the working directory ("./uri"); only the scene's folder counts,
        // so the reason kept is the one for the path inside it.
        const std::string prefix = self->base + "/";
        if (!self->base.empty() && abs.compare(0, prefix.size(), prefix) == 0) {
            self->rejected = "'" + abs.substr(prefix.size()) + "': " + why;
        } else if (self->rejected.empty() && self->base.empty()) {
            self->rejected = "'" + abs + "': " + why;
        }
        return false;
    }
    static std::string expand(const std::string& path, void*) { return path; }
    static bool read(std::vector<unsigned char>* out, std::string* err, const std::string& abs,
                     void* user) {
        auto* self = static_cast<FolderJail*>(user);
        if (!file_exists(abs, user)) {
            if (err) {
                *err += self->rejected + "\n";
            }
            return false;
        }
        std::ifstream in(abs, std::ios::binary | std::ios::ate);
        const auto size = static_cast<std::streamoff>(in.tellg());
        if (!in || size < 0 || static_cast<std::uint64_t>(size) > k_max_file_bytes) {
            if (err) {
                *err += "cannot read '" + abs + "'\n";
            }
            return false;
        }
        out->resize(static_cast<std::size_t>(size));
        in.seekg(0);
        in.read(reinterpret_cast<char*>(out->data()), size);
        return static_cast<bool>(in) || size == 0;
    }
    static bool write(std::string*, const std::string&, const std::vector<unsigned char>&, void*) {
        return false;
    }
};

// What stb_image (Debian's 2.27) needs done to a PNG before it reads one safely.
struct PngRepair {
    std::vector<unsigned char> kept; // the PNG without its empty IDAT chunks; empty: use it as is
    std::string refused;             // why it cannot be read at all; empty when it can
};

// Walks the chunks of the PNG in `bytes` (nothing to do when it is no PNG). Two of stb_image's
// habits make a malformed PNG dangerous, and both are settled here, before it reads a byte:
// - It grows its buffer of image data to each IDAT chunk's declared length before it reads the
//   chunk, so a few bytes claiming a 2 GiB chunk allocate 2 GiB. A chunk that claims more bytes
//   than the image has is refused (its CRC alone may be cut off: stb_image does not read it).
// - It copies each IDAT into a buffer it allocates at the first non-empty one, so an empty IDAT
//   before it is a memcpy to a null pointer: undefined behaviour. An empty IDAT adds nothing to
//   the image data (every IDAT's data concatenated), so it is dropped: no pixel changes.
PngRepair repair_png(const unsigned char* bytes, std::size_t size) {
    static constexpr unsigned char k_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static constexpr std::size_t k_chunk_header = 8; // length and type; 4 bytes of CRC follow
    static constexpr std::size_t k_crc = 4;
    PngRepair out;
    if (size < sizeof k_signature || std::memcmp(bytes, k_signature, sizeof k_signature) != 0) {
        return out;
    }
    auto be32 = [&](std::size_t at) {
        return (std::uint32_t{bytes[at]} << 24) | (std::uint32_t{bytes[at + 1]} << 16) |
               (std::uint32_t{bytes[at + 2]} << 8) | std::uint32_t{bytes[at + 3]};
    };
    std::size_t copied_up_to = 0; // bytes before this are in `kept` (or dropped)
    std::size_t at = sizeof k_signature;
    while (size - at >= k_chunk_header) {
        const std::uint32_t length = be32(at);
        const std::size_t data_left = size - at - k_chunk_header;
        if (length > data_left) {
            out.refused = "its PNG chunk at byte " + std::to_string(at) + " claims " +
                          std::to_string(length) + " bytes of data but only " +
                          std::to_string(data_left) + " follow (a truncated or corrupt PNG)";
            out.kept.clear();
            return out;
        }
        const bool idat = std::memcmp(bytes + at + 4, "IDAT", 4) == 0;
        const std::size_t chunk = std::min(k_chunk_header + length + k_crc, size - at);
        if (idat && length == 0) {
            out.kept.insert(out.kept.end(), bytes + copied_up_to, bytes + at);
            copied_up_to = at + chunk;
        } else if (std::memcmp(bytes + at + 4, "IEND", 4) == 0) {
            break;
        }
        at += chunk;
    }
    if (copied_up_to != 0) {
        out.kept.insert(out.kept.end(), bytes + copied_up_to, bytes + size);
    }
    return out;
}

// Decodes one image's encoded bytes (PNG or JPEG) to RGBA8 in `image`; false with the reason in
// `err` when they are neither, are malformed or describe too large an image.
bool decode_into(tinygltf::Image& image, std::size_t index, const unsigned char* bytes,
                 std::size_t size, std::string& err) {
    const std::string name = "image " + std::to_string(index);
    if (size == 0 || size > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        err += name + " has " + std::to_string(size) + " bytes of image data\n";
        return false;
    }
    const PngRepair png = repair_png(bytes, size);
    if (!png.refused.empty()) {
        err += name + " cannot be read: " + png.refused + "\n";
        return false;
    }
    if (!png.kept.empty()) {
        bytes = png.kept.data();
        size = png.kept.size();
    }
    const int length = static_cast<int>(size);
    int w = 0;
    int h = 0;
    int comp = 0;
    if (stbi_info_from_memory(bytes, length, &w, &h, &comp) == 0) {
        err += name + " is neither a PNG nor a JPEG (the image formats glTF 2.0 allows): " +
               stbi_failure_reason() + "\n";
        return false;
    }
    if (w < 1 || h < 1 || w > k_max_image_side || h > k_max_image_side) {
        err += name + " is " + std::to_string(w) + "x" + std::to_string(h) + " (at most " +
               std::to_string(k_max_image_side) + " per side)\n";
        return false;
    }
    stbi_uc* pixels = stbi_load_from_memory(bytes, length, &w, &h, &comp, 4);
    if (pixels == nullptr) {
        err += name + " cannot be decoded: " + stbi_failure_reason() + "\n";
        return false;
    }
    image.width = w;
    image.height = h;
    image.component = 4;
    image.bits = 8;
    image.pixel_type = TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE;
    image.image.assign(pixels, pixels + static_cast<std::size_t>(w) * h * 4);
    stbi_image_free(pixels);
    return true;
}

// tinygltf's image callback. Bytes of a URI or data-URI image are a vector tinygltf read itself,
// of exactly `size` bytes. For an image in a buffer view, tinygltf passes the view's range
// without checking it against its buffer: those bytes are never read here, but checked and
// decoded after loading (decode_view_images).
bool decode_image(tinygltf::Image* image, const int index, std::string* err, std::string*, int, int,
                  const unsigned char* bytes, int size, void*) {
    if (image->bufferView != -1) {
        return true;
    }
    std::string why;
    if (size < 0 || !decode_into(*image, static_cast<std::size_t>(index), bytes,
                                 static_cast<std::size_t>(size), why)) {
        if (err) {
            *err += why;
        }
        return false;
    }
    return true;
}

// Decodes every image stored in a buffer view, once its view lies inside its buffer; the reason
// otherwise (empty when all are decoded).
std::string decode_view_images(tinygltf::Model& model) {
    for (std::size_t i = 0; i < model.images.size(); ++i) {
        tinygltf::Image& image = model.images[i];
        if (image.bufferView < 0) {
            continue;
        }
        const std::string name = "image " + std::to_string(i);
        const auto view_index = static_cast<std::size_t>(image.bufferView);
        if (view_index >= model.bufferViews.size()) {
            return name + " names buffer view " + std::to_string(view_index) +
                   ", which does not exist";
        }
        const tinygltf::BufferView& view = model.bufferViews[view_index];
        if (view.buffer < 0 || static_cast<std::size_t>(view.buffer) >= model.buffers.size()) {
            return "buffer view " + std::to_string(view_index) + " (" + name +
                   ") names a buffer that does not exist";
        }
        const tinygltf::Buffer& buffer = model.buffers[static_cast<std::size_t>(view.buffer)];
        const std::uint64_t end = static_cast<std::uint64_t>(view.byteOffset) + view.byteLength;
        if (view.byteOffset > buffer.data.size() || end > buffer.data.size()) {
            return name + " reads outside its buffer (buffer view " + std::to_string(view_index) +
                   " covers bytes " + std::to_string(view.byteOffset) + " to " +
                   std::to_string(end) + " of buffer " + std::to_string(view.buffer) +
                   ", which has " + std::to_string(buffer.data.size()) +
                   " bytes; is the file truncated?)";
        }
        std::string why;
        if (!decode_into(image, i, buffer.data.data() + view.byteOffset, view.byteLength, why)) {
            return why;
        }
    }
    return {};
}

class Converter {
public:
    Converter(const tinygltf::Model& model, std::string origin)
        : m_model(model), m_origin(std::move(origin)) {}

    Scene convert() {
        auto assets = std::make_shared<SceneAssets>();
        assets->materials.push_back({"default", glm::vec4(1.0f), std::nullopt});
        for (std::size_t i = 0; i < m_model.materials.size(); ++i) {
            assets->materials.push_back(material(*assets, i));
        }
        for (std::size_t i = 0; i < m_model.meshes.size(); ++i) {
            assets->meshes.push_back(mesh(i));
        }
        Scene scene(assets);
        add_nodes(scene);
        scene.update_world();
        require_something_drawn(scene);
        return scene;
    }

private:
    // A scene with no triangle to draw is not what was meant (a file of points or lines, a scene
    // that names only cameras or empty nodes): refused, saying why, rather than run blank.
    void require_something_drawn(const Scene& scene) const {
        const auto& meshes = scene.assets().meshes;
        const bool drawn = std::any_of(scene.nodes().begin(), scene.nodes().end(), [&](auto& n) {
            return n.mesh && *n.mesh < meshes.size() && !meshes[*n.mesh].primitives.empty();
        });
        if (drawn) {
            return;
        }
        std::string why =
            "has nothing to draw: no node of " + m_shown + " has a mesh with triangles";
        if (m_skipped_primitives > 0) {
            why += " (" + std::to_string(m_skipped_primitives) +
                   " primitive(s) of points, lines or fewer than 3 vertices are not drawn)";
        }
        throw Error(ErrorCategory::InvalidArgument, "Scene " + m_origin + " " + why,
                    "Tandem draws triangle meshes: give a scene whose nodes hold some");
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(ErrorCategory::InvalidArgument, "Scene " + m_origin + ": " + what, k_gltf_hint);
    }

    static std::string index_name(const char* kind, std::size_t i, const std::string& name) {
        return std::string(kind) + " " + std::to_string(i) +
               (name.empty() ? "" : " '" + name + "'");
    }

    std::uint32_t texture(SceneAssets& assets, int index, const std::string& where) {
        if (index < 0 || static_cast<std::size_t>(index) >= m_model.textures.size()) {
            fail(where + " names texture " + std::to_string(index) + ", which does not exist");
        }
        const int source = m_model.textures[static_cast<std::size_t>(index)].source;
        if (source < 0 || static_cast<std::size_t>(source) >= m_model.images.size()) {
            fail("texture " + std::to_string(index) + " names image " + std::to_string(source) +
                 ", which does not exist");
        }
        const auto src = static_cast<std::size_t>(source);
        if (auto it = m_textures.find(src); it != m_textures.end()) {
            return it->second;
        }
        const tinygltf::Image& image = m_model.images[src];
        if (image.image.empty() || image.component != 4 || image.bits != 8 ||
            image.image.size() != static_cast<std::size_t>(image.width) * image.height * 4) {
            fail(index_name("image", src, image.name) +
                 (image.uri.empty() ? std::string() : " ('" + image.uri + "')") +
                 " could not be loaded");
        }
        Texture t;
        t.name = image.name.empty() ? image.uri : image.name;
        t.width = static_cast<std::uint32_t>(image.width);
        t.height = static_cast<std::uint32_t>(image.height);
        t.rgba = image.image;
        const auto id = static_cast<std::uint32_t>(assets.textures.size());
        assets.textures.push_back(std::move(t));
        m_textures.emplace(src, id);
        return id;
    }

    Material material(SceneAssets& assets, std::size_t i) {
        const tinygltf::Material& m = m_model.materials[i];
        Material out;
        out.name = m.name;
        const auto& f = m.pbrMetallicRoughness.baseColorFactor;
        if (f.size() == 4) {
            for (int c = 0; c < 4; ++c) {
                const double v = f[static_cast<std::size_t>(c)];
                if (!std::isfinite(v)) {
                    fail(index_name("material", i, m.name) +
                         " has a base colour that is not finite");
                }
                out.base_color[c] = static_cast<float>(std::clamp(v, 0.0, 1.0));
            }
        }
        if (m.pbrMetallicRoughness.baseColorTexture.index >= 0) {
            out.base_color_texture = texture(assets, m.pbrMetallicRoughness.baseColorTexture.index,
                                             index_name("material", i, m.name));
        }
        return out;
    }

    // Returns a pointer to element 0 and the stride; checks every byte of the range.
    std::pair<const std::uint8_t*, std::size_t>
    access(int accessor_index, std::size_t expected_components, const std::string& what) const {
        if (accessor_index < 0 ||
            static_cast<std::size_t>(accessor_index) >= m_model.accessors.size()) {
            fail(what + " names accessor " + std::to_string(accessor_index) +
                 ", which does not exist");
        }
        const tinygltf::Accessor& a = m_model.accessors[static_cast<std::size_t>(accessor_index)];
        const std::string name =
            index_name("accessor", static_cast<std::size_t>(accessor_index), a.name);
        if (a.sparse.isSparse) {
            fail(name + " is sparse, which Tandem does not read");
        }
        const int components = tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(a.type));
        const int component_size =
            tinygltf::GetComponentSizeInBytes(static_cast<std::uint32_t>(a.componentType));
        if (components <= 0 || component_size <= 0 ||
            static_cast<std::size_t>(components) != expected_components) {
            fail(name + " (" + what + ") has the wrong type");
        }
        if (a.count == 0 || a.count > k_max_elements) {
            fail(name + " has " + std::to_string(a.count) + " elements");
        }
        if (a.bufferView < 0 ||
            static_cast<std::size_t>(a.bufferView) >= m_model.bufferViews.size()) {
            fail(name + " has no valid buffer view");
        }
        const tinygltf::BufferView& v = m_model.bufferViews[static_cast<std::size_t>(a.bufferView)];
        if (v.buffer < 0 || static_cast<std::size_t>(v.buffer) >= m_model.buffers.size()) {
            fail("buffer view " + std::to_string(a.bufferView) +
                 " names a buffer that does not exist");
        }
        const tinygltf::Buffer& b = m_model.buffers[static_cast<std::size_t>(v.buffer)];
        const std::uint64_t element = static_cast<std::uint64_t>(components) * component_size;
        const std::uint64_t stride = v.byteStride != 0 ? v.byteStride : element;
        const std::uint64_t view_end = static_cast<std::uint64_t>(v.byteOffset) + v.byteLength;
        const std::uint64_t last =
            static_cast<std::uint64_t>(a.byteOffset) + stride * (a.count - 1) + element;
        if (stride < element || view_end > b.data.size() || last > v.byteLength) {
            fail(name + " reads outside its buffer (buffer " + std::to_string(v.buffer) + " has " +
                 std::to_string(b.data.size()) + " bytes; is the file truncated?)");
        }
        return {b.data.data() + v.byteOffset + a.byteOffset, static_cast<std::size_t>(stride)};
    }

    const tinygltf::Accessor& accessor(int index) const {
        return m_model.accessors[static_cast<std::size_t>(index)];
    }

    template <int N>
    std::vector<glm::vec<N, float>> read_floats(int index, const std::string& what) const {
        auto [data, stride] = access(index, N, what);
        const tinygltf::Accessor& a = accessor(index);
        std::vector<glm::vec<N, float>> out(a.count);
        for (std::size_t i = 0; i < a.count; ++i) {
            const std::uint8_t* p = data + i * stride;
            for (int c = 0; c < N; ++c) {
                float v = 0.0f;
                switch (a.componentType) {
                case TINYGLTF_COMPONENT_TYPE_FLOAT:
                    std::memcpy(&v, p + 4 * c, 4);
                    break;
                case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
                    v = a.normalized ? p[c] / 255.0f : p[c];
                    break;
                case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
                    std::uint16_t s = 0;
                    std::memcpy(&s, p + 2 * c, 2);
                    v = a.normalized ? s / 65535.0f : s;
                    break;
                }
                default:
                    fail(what + " uses a component type Tandem does not read");
                }
                if (!std::isfinite(v)) {
                    fail(what + " holds a value that is not finite");
                }
                out[i][c] = v;
            }
        }
        return out;
    }

    std::vector<std::uint32_t> read_indices(int index, std::size_t vertex_count,
                                            const std::string& what) const {
        auto [data, stride] = access(index, 1, what);
        const tinygltf::Accessor& a = accessor(index);
        std::vector<std::uint32_t> out(a.count);
        for (std::size_t i = 0; i < a.count; ++i) {
            const std::uint8_t* p = data + i * stride;
            std::uint32_t v = 0;
            switch (a.componentType) {
            case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
                v = p[0];
                break;
            case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
                std::uint16_t s = 0;
                std::memcpy(&s, p, 2);
                v = s;
                break;
            }
            case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
                std::memcpy(&v, p, 4);
                break;
            default:
                fail(what + " indices must be unsigned integers");
            }
            if (v >= vertex_count) {
                fail(what + " has index " + std::to_string(v) + " but only " +
                     std::to_string(vertex_count) + " vertices");
            }
            out[i] = v;
        }
        return out;
    }

    Mesh mesh(std::size_t i) {
        const tinygltf::Mesh& m = m_model.meshes[i];
        Mesh out;
        out.name = m.name.empty() ? "mesh" + std::to_string(i) : m.name;
        for (std::size_t p = 0; p < m.primitives.size(); ++p) {
            const tinygltf::Primitive& prim = m.primitives[p];
            const std::string what =
                index_name("mesh", i, m.name) + " primitive " + std::to_string(p);
            const int mode = prim.mode == -1 ? TINYGLTF_MODE_TRIANGLES : prim.mode;
            if (mode < TINYGLTF_MODE_POINTS || mode > TINYGLTF_MODE_TRIANGLE_FAN) {
                fail(what + " has mode " + std::to_string(prim.mode) +
                     ", which glTF does not define (0 to 6)");
            }
            if (mode != TINYGLTF_MODE_TRIANGLES && mode != TINYGLTF_MODE_TRIANGLE_STRIP &&
                mode != TINYGLTF_MODE_TRIANGLE_FAN) {
                log_warn("scene", "{}: {} is made of {}, not triangles; it is not drawn", m_origin,
                         what, mode == TINYGLTF_MODE_POINTS ? "points" : "lines");
                ++m_skipped_primitives;
                continue;
            }
            auto pos = prim.attributes.find("POSITION");
            if (pos == prim.attributes.end()) {
                fail(what + " has no POSITION");
            }
            const auto positions = read_floats<3>(pos->second, what + " POSITION");
            Primitive outp;
            outp.vertices.resize(positions.size());
            for (std::size_t v = 0; v < positions.size(); ++v) {
                outp.vertices[v].position = positions[v];
            }
            if (auto n = prim.attributes.find("NORMAL"); n != prim.attributes.end()) {
                const auto normals = read_floats<3>(n->second, what + " NORMAL");
                if (normals.size() != positions.size()) {
                    fail(what + " has " + std::to_string(normals.size()) + " normals for " +
                         std::to_string(positions.size()) + " positions");
                }
                for (std::size_t v = 0; v < normals.size(); ++v) {
                    outp.vertices[v].normal = normals[v];
                }
            }
            if (auto t = prim.attributes.find("TEXCOORD_0"); t != prim.attributes.end()) {
                const auto uvs = read_floats<2>(t->second, what + " TEXCOORD_0");
                if (uvs.size() != positions.size()) {
                    fail(what + " has " + std::to_string(uvs.size()) + " texture coordinates for " +
                         std::to_string(positions.size()) + " positions");
                }
                for (std::size_t v = 0; v < uvs.size(); ++v) {
                    outp.vertices[v].uv = uvs[v];
                }
            }
            if (prim.indices >= 0) {
                outp.indices = read_indices(prim.indices, positions.size(), what);
            } else {
                outp.indices.resize(positions.size());
                for (std::size_t v = 0; v < positions.size(); ++v) {
                    outp.indices[v] = static_cast<std::uint32_t>(v);
                }
            }
            if (mode == TINYGLTF_MODE_TRIANGLES && outp.indices.size() % 3 != 0) {
                fail(what + " has " + std::to_string(outp.indices.size()) +
                     " indices, not a whole number of triangles");
            }
            if (mode != TINYGLTF_MODE_TRIANGLES) {
                if (outp.indices.size() < 3) {
                    log_warn("scene",
                             "{}: {} is a triangle {} of {} vertices, no triangle; it is not "
                             "drawn",
                             m_origin, what, mode == TINYGLTF_MODE_TRIANGLE_STRIP ? "strip" : "fan",
                             outp.indices.size());
                    ++m_skipped_primitives;
                    continue;
                }
                outp.indices = triangle_list(mode, outp.indices);
            }
            if (prim.attributes.find("NORMAL") == prim.attributes.end()) {
                compute_vertex_normals(outp);
            }
            if (prim.material >= 0) {
                if (static_cast<std::size_t>(prim.material) >= m_model.materials.size()) {
                    fail(what + " names material " + std::to_string(prim.material) +
                         ", which does not exist");
                }
                outp.material = static_cast<std::uint32_t>(prim.material) + 1;
            }
            out.primitives.push_back(std::move(outp));
        }
        compute_bounds(out);
        return out;
    }

    // A strip's or fan's triangles as a list, in the order and winding the glTF specification
    // gives (3.7.2.1): strip triangle i is (v[i], v[i + 1 + i % 2], v[i + 2 - i % 2]), fan
    // triangle i is (v[i + 1], v[i + 2], v[0]). Degenerate triangles are kept (zero area).
    static std::vector<std::uint32_t> triangle_list(int mode, const std::vector<std::uint32_t>& v) {
        std::vector<std::uint32_t> out;
        out.reserve((v.size() - 2) * 3);
        for (std::size_t i = 0; i + 2 < v.size(); ++i) {
            if (mode == TINYGLTF_MODE_TRIANGLE_STRIP) {
                out.insert(out.end(), {v[i], v[i + 1 + i % 2], v[i + 2 - i % 2]});
            } else {
                out.insert(out.end(), {v[i + 1], v[i + 2], v[0]});
            }
        }
        return out;
    }

    glm::mat4 local_transform(const tinygltf::Node& n, const std::string& what) const {
        auto finite = [&](const std::vector<double>& v) {
            if (!std::all_of(v.begin(), v.end(), [](double d) { return std::isfinite(d); })) {
                fail(what + " has a transform that is not finite");
            }
        };
        if (!n.matrix.empty()) {
            if (n.matrix.size() != 16) {
                fail(what + " has a matrix without 16 numbers");
            }
            finite(n.matrix);
            glm::mat4 m;
            for (int c = 0; c < 16; ++c) {
                m[c / 4][c % 4] = static_cast<float>(n.matrix[static_cast<std::size_t>(c)]);
            }
            return m;
        }
        glm::mat4 m(1.0f);
        if (!n.translation.empty()) {
            if (n.translation.size() != 3) {
                fail(what + " has a translation without 3 numbers");
            }
            finite(n.translation);
            m[3] = glm::vec4(static_cast<float>(n.translation[0]),
                             static_cast<float>(n.translation[1]),
                             static_cast<float>(n.translation[2]), 1.0f);
        }
        if (!n.rotation.empty()) {
            if (n.rotation.size() != 4) {
                fail(what + " has a rotation without 4 numbers");
            }
            finite(n.rotation);
            glm::quat q(static_cast<float>(n.rotation[3]), static_cast<float>(n.rotation[0]),
                        static_cast<float>(n.rotation[1]), static_cast<float>(n.rotation[2]));
            const float len = glm::length(q);
            m = m * glm::mat4_cast(len > 0.0f ? q / len : glm::quat(1, 0, 0, 0));
        }
        if (!n.scale.empty()) {
            if (n.scale.size() != 3) {
                fail(what + " has a scale without 3 numbers");
            }
            finite(n.scale);
            m = glm::scale(m,
                           glm::vec3(static_cast<float>(n.scale[0]), static_cast<float>(n.scale[1]),
                                     static_cast<float>(n.scale[2])));
        }
        return m;
    }

    std::vector<std::string> tags(const tinygltf::Node& n, const std::string& what) const {
        std::vector<std::string> out;
        if (!n.extras.IsObject() || !n.extras.Has("tandem")) {
            return out;
        }
        const tinygltf::Value& t = n.extras.Get("tandem");
        if (!t.IsObject() || !t.Has("tags")) {
            return out;
        }
        const tinygltf::Value& list = t.Get("tags");
        if (!list.IsArray()) {
            fail(what + " extras.tandem.tags must be an array of strings");
        }
        for (std::size_t i = 0; i < list.ArrayLen(); ++i) {
            const tinygltf::Value& tag = list.Get(static_cast<int>(i));
            if (!tag.IsString()) {
                fail(what + " extras.tandem.tags must be an array of strings");
            }
            out.push_back(tag.Get<std::string>());
        }
        return out;
    }

    CameraModel camera(std::size_t index) const {
        const tinygltf::Camera& c = m_model.cameras[index];
        const std::string what = index_name("camera", index, c.name);
        CameraModel out;
        auto check = [&](double v, const char* field, bool positive) {
            if (!std::isfinite(v) || (positive ? v <= 0.0 : v < 0.0)) {
                fail(what + " has an unusable " + field);
            }
            return static_cast<float>(v);
        };
        if (c.type == "perspective") {
            out.projection = Projection::Perspective;
            out.yfov = check(c.perspective.yfov, "yfov", true);
            if (out.yfov >= 3.1f) {
                fail(what + " has a yfov of " + std::to_string(out.yfov) + " radians");
            }
            out.znear = check(c.perspective.znear, "znear", true);
            const float zfar = check(c.perspective.zfar, "zfar", false);
            out.zfar = zfar > out.znear ? zfar : out.znear * 10000.0f; // 0: infinite in glTF
        } else if (c.type == "orthographic") {
            out.projection = Projection::Orthographic;
            out.xmag = check(c.orthographic.xmag, "xmag", true);
            out.ymag = check(c.orthographic.ymag, "ymag", true);
            out.znear = check(c.orthographic.znear, "znear", false);
            out.zfar = check(c.orthographic.zfar, "zfar", true);
            if (out.zfar <= out.znear) {
                fail(what + " has zfar not beyond znear");
            }
        } else {
            fail(what + " has type '" + c.type + "' (perspective or orthographic)");
        }
        return out;
    }

    void add_nodes(Scene& scene) {
        const auto& nodes = m_model.nodes;
        if (nodes.size() > k_max_nodes) {
            fail("has " + std::to_string(nodes.size()) + " nodes");
        }
        std::vector<int> parent(nodes.size(), -1);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            for (int child : nodes[i].children) {
                if (child < 0 || static_cast<std::size_t>(child) >= nodes.size()) {
                    fail(index_name("node", i, nodes[i].name) + " names child " +
                         std::to_string(child) + ", which does not exist");
                }
                if (parent[static_cast<std::size_t>(child)] != -1 ||
                    static_cast<std::size_t>(child) == i) {
                    fail("node " + std::to_string(child) +
                         " has two parents (glTF nodes form a tree)");
                }
                parent[static_cast<std::size_t>(child)] = static_cast<int>(i);
            }
        }
        std::vector<int> roots;
        if (m_model.defaultScene >= 0) {
            const auto chosen = static_cast<std::size_t>(m_model.defaultScene);
            if (chosen >= m_model.scenes.size()) {
                fail("names default scene " + std::to_string(chosen) + ", which does not exist");
            }
            m_shown = index_name("scene", chosen, m_model.scenes[chosen].name);
            roots = m_model.scenes[chosen].nodes;
        } else if (!m_model.scenes.empty()) {
            // No "scene" property: glTF leaves the choice to the application.
            m_shown = index_name("scene", 0, m_model.scenes[0].name);
            roots = m_model.scenes[0].nodes;
            const LogLevel level = m_model.scenes.size() > 1 ? LogLevel::Warn : LogLevel::Info;
            log_at(level, "scene", "{}: no \"scene\" property; showing {} (of {} scene(s))",
                   m_origin, m_shown, m_model.scenes.size());
        } else {
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                if (parent[i] == -1) {
                    roots.push_back(static_cast<int>(i));
                }
            }
            m_shown = "its root nodes";
            log_info("scene", "{}: no scenes; showing its {} root node(s)", m_origin, roots.size());
        }
        std::vector<char> seen(nodes.size(), 0);
        std::vector<std::uint32_t> scene_index(nodes.size(), 0);
        // Depth-first without recursion, so deep files cannot exhaust the stack; parents are
        // added before their children, as Scene::add_node requires.
        std::vector<int> stack(roots.rbegin(), roots.rend());
        for (int r : roots) {
            if (r < 0 || static_cast<std::size_t>(r) >= nodes.size() ||
                parent[static_cast<std::size_t>(r)] != -1) {
                fail("scene root " + std::to_string(r) + " is not a root node");
            }
        }
        while (!stack.empty()) {
            const auto i = static_cast<std::size_t>(stack.back());
            stack.pop_back();
            if (seen[i]) {
                fail("node " + std::to_string(i) + " appears twice in the scene");
            }
            seen[i] = 1;
            const tinygltf::Node& n = nodes[i];
            const std::string what = index_name("node", i, n.name);
            Node out;
            out.name = n.name.empty() ? "node" + std::to_string(i) : n.name;
            if (parent[i] != -1) {
                out.parent = scene_index[static_cast<std::size_t>(parent[i])];
            }
            if (n.mesh >= 0) {
                if (static_cast<std::size_t>(n.mesh) >= m_model.meshes.size()) {
                    fail(what + " names mesh " + std::to_string(n.mesh) + ", which does not exist");
                }
                out.mesh = static_cast<std::uint32_t>(n.mesh);
            }
            out.local = local_transform(n, what);
            out.tags = tags(n, what);
            scene_index[i] = scene.add_node(std::move(out));
            if (n.camera >= 0) {
                if (static_cast<std::size_t>(n.camera) >= m_model.cameras.size()) {
                    fail(what + " names camera " + std::to_string(n.camera) +
                         ", which does not exist");
                }
                const tinygltf::Camera& c = m_model.cameras[static_cast<std::size_t>(n.camera)];
                const std::string name =
                    c.name.empty() ? scene.nodes()[scene_index[i]].name : c.name;
                scene.add_camera(name, scene_index[i], camera(static_cast<std::size_t>(n.camera)));
            }
            for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) {
                stack.push_back(*it);
            }
        }
    }

    const tinygltf::Model& m_model;
    std::string m_origin;
    std::map<std::size_t, std::uint32_t> m_textures;
    std::size_t m_skipped_primitives = 0; // points, lines, strips and fans without a triangle
    std::string m_shown;                  // which nodes are shown: "scene 0", "its root nodes"
};

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
        s.pop_back();
    }
    return s;
}

const char* const k_convert_hint =
    "Convert the file to glTF 2.0 (for example with gltf-pipeline, or by importing it into "
    "Blender and exporting glTF 2.0) and load that";

// Refuses a document that is not glTF 2.x: glTF 1.0 (and older) is a different format, which
// tinygltf would otherwise read as an empty 2.0 scene. `version` is asset.version.
void require_gltf2(const std::string& version, const std::string& origin) {
    if (version.rfind("2.", 0) == 0) {
        return;
    }
    if (version.empty()) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Scene " + origin +
                        " has no asset.version, so it is not glTF 2.0 (an older glTF file, such "
                        "as glTF 1.0, or not glTF at all); Tandem reads glTF 2.0 only",
                    k_convert_hint);
    }
    const std::string what =
        version.rfind("1.", 0) == 0 ? "a glTF 1.0 file" : "glTF version " + version;
    throw Error(ErrorCategory::InvalidArgument,
                "Scene " + origin + " is " + what + " (asset.version \"" + version +
                    "\"); Tandem reads glTF 2.0 only",
                k_convert_hint);
}

} // namespace

Scene load_gltf_from_memory(std::span<const std::uint8_t> bytes, const std::string& base_dir,
                            const std::string& origin) {
    if (bytes.size() > k_max_file_bytes) {
        throw Error(ErrorCategory::InvalidArgument, "Scene " + origin + " is larger than 1 GiB",
                    "Use a smaller scene");
    }
    FolderJail jail;
    if (!base_dir.empty()) {
        std::error_code ec;
        jail.canonical = fs::weakly_canonical(fs::absolute(fs::path(base_dir)), ec);
        jail.base = jail.canonical.string();
        while (jail.base.size() > 1 && jail.base.back() == '/') {
            jail.base.pop_back();
        }
    }
    const bool binary = bytes.size() >= 4 && std::memcmp(bytes.data(), "glTF", 4) == 0;
    if (binary && bytes.size() >= 8) {
        std::uint32_t version = 0;
        std::memcpy(&version, bytes.data() + 4, 4); // little-endian, as the hosts Tandem runs on
        if (version == 1) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Scene " + origin +
                            " is binary glTF 1.0 (GLB version 1); Tandem reads glTF 2.0 only",
                        k_convert_hint);
        }
    }
    tinygltf::TinyGLTF loader;
    loader.SetFsCallbacks({&FolderJail::file_exists, &FolderJail::expand, &FolderJail::read,
                           &FolderJail::write, &jail});
    loader.SetImageLoader(&decode_image, nullptr);
    tinygltf::Model model;
    model.asset.version.clear(); // tinygltf's default is "2.0"; empty: the file gives none
    std::string err;
    std::string warn;
    bool ok = false;
    // No sections required: a missing asset.version is refused below, with the reason.
    constexpr unsigned int k_no_required_sections = 0;
    try {
        if (binary) {
            ok = loader.LoadBinaryFromMemory(&model, &err, &warn, bytes.data(),
                                             static_cast<unsigned int>(bytes.size()), jail.base,
                                             k_no_required_sections);
        } else {
            ok = loader.LoadASCIIFromString(
                &model, &err, &warn, reinterpret_cast<const char*>(bytes.data()),
                static_cast<unsigned int>(bytes.size()), jail.base, k_no_required_sections);
        }
    } catch (const std::exception& e) {
        ok = false;
        err += e.what();
    }
    // tinygltf reads the asset first: a failed load of a file that says it is another version
    // fails for that reason.
    if (ok || !model.asset.version.empty()) {
        require_gltf2(model.asset.version, origin);
    }
    if (ok) {
        if (std::string why = decode_view_images(model); !why.empty()) {
            throw Error(ErrorCategory::InvalidArgument, "Scene " + origin + ": " + trim(why),
                        k_gltf_hint);
        }
    }
    if (!ok) {
        std::string why = trim(err);
        if (!jail.rejected.empty()) {
            why = jail.rejected + (why.empty() ? "" : " (" + why + ")");
        }
        throw Error(ErrorCategory::InvalidArgument,
                    "Scene " + origin + " cannot be loaded: " +
                        (why.empty() ? std::string("not a glTF 2.0 document") : why),
                    k_gltf_hint);
    }
    for (std::size_t i = 0; i < model.images.size(); ++i) {
        if (model.images[i].image.empty()) {
            std::string why = !jail.rejected.empty() ? jail.rejected : trim(warn);
            throw Error(
                "Scene " + origin + ": image " + std::to_string(i) +
                    (model.images[i].uri.empty() ? "" : " ('" + model.images[i].uri + "')") +
                    " could not be loaded" + (why.empty() ? "" : ": " + why),
                "Put the image next to the scene file, inside its folder");
        }
    }
    if (!warn.empty()) {
        log_debug("scene", "{}: {}", origin, trim(warn));
    }
    Scene scene = Converter(model, origin).convert();
    scene.set_name(fs::path(origin).filename().string());
    return scene;
}

Scene load_gltf(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        throw Error("Cannot open scene file " + path, "Check the path given to --scene");
    }
    const auto size = static_cast<std::streamoff>(in.tellg());
    if (size < 0 || static_cast<std::uint64_t>(size) > k_max_file_bytes) {
        throw Error("Scene file " + path + " cannot be read or is larger than 1 GiB");
    }
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(bytes.data()), size);
    if (!in && size != 0) {
        throw Error("Cannot read scene file " + path);
    }
    const fs::path folder = fs::absolute(fs::path(path)).parent_path();
    return load_gltf_from_memory(bytes, folder.string(), path);
}

} // namespace tandem::detail
