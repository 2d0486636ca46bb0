// Scene: the scene model shared by loaders, the demo, snapshots and the renderer's cache.
//
// SceneAssets holds what is uploaded once per device (meshes with their primitives, materials,
// RGBA8 textures). It is immutable once built and shared through shared_ptr<const SceneAssets>,
// so any thread may read it. Scene adds what changes from tick to tick (node transforms, the
// cameras on nodes, the light) and is owned and mutated by the application thread only; workers
// never see it, they get plain-data snapshots (snapshot.hpp).
//
// Coordinates follow glTF: right-handed, +Y up, a camera looks down its node's -Z axis.
// No Vulkan here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <glm/glm.hpp>

namespace tandem::detail {

struct Vertex {
    glm::vec3 position{0.0f};
    glm::vec3 normal{0.0f, 1.0f, 0.0f};
    glm::vec2 uv{0.0f};
};
static_assert(sizeof(Vertex) == 32);

struct Bounds {
    glm::vec3 min{0.0f};
    glm::vec3 max{0.0f};
    bool empty = true;

    void add(const glm::vec3& p);
    void add(const Bounds& other);
    [[nodiscard]] glm::vec3 center() const { return (min + max) * 0.5f; }
    [[nodiscard]] glm::vec3 extent() const { return max - min; }
    // The axis-aligned box around this one transformed by `m`.
    [[nodiscard]] Bounds transformed(const glm::mat4& m) const;
};

// One draw: triangles with one material.
struct Primitive {
    std::vector<Vertex> vertices;
    std::vector<std::uint32_t> indices;
    std::uint32_t material = 0; // index into SceneAssets::materials
};

struct Mesh {
    std::string name;
    std::vector<Primitive> primitives;
    Bounds bounds; // of every primitive, in mesh space
};

struct Material {
    std::string name;
    glm::vec4 base_color{1.0f};
    std::optional<std::uint32_t> base_color_texture; // index into SceneAssets::textures
};

// RGBA8, rows top to bottom, tightly packed.
struct Texture {
    std::string name;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::vector<std::uint8_t> rgba;
};

struct SceneAssets {
    std::vector<Mesh> meshes;
    std::vector<Material> materials; // never empty once built: [0] is the default material
    std::vector<Texture> textures;
};

enum class Projection { Perspective, Orthographic };

struct CameraModel {
    Projection projection = Projection::Perspective;
    float yfov = 0.8f;   // radians, perspective
    float xmag = 1.0f;   // half-width, orthographic
    float ymag = 1.0f;   // half-height, orthographic
    float znear = 0.05f; // > 0
    float zfar = 100.0f; // > znear
};

struct Node {
    std::string name;
    std::optional<std::uint32_t> parent;
    std::optional<std::uint32_t> mesh;   // index into SceneAssets::meshes
    std::optional<std::uint32_t> camera; // index into Scene::cameras
    glm::mat4 local{1.0f};
    glm::mat4 world{1.0f};         // updated by Scene::update_world()
    std::vector<std::string> tags; // own tags and every ancestor's
};

struct SceneCamera {
    std::string name; // the camera's name, else its node's name
    std::uint32_t node = 0;
    CameraModel model;
};

struct Light {
    glm::vec3 direction{-0.4f, -1.0f, -0.3f}; // towards which the light travels
    glm::vec3 color{0.85f, 0.85f, 0.8f};
    glm::vec3 ambient{0.25f, 0.25f, 0.28f};
    glm::vec4 clear_color{0.08f, 0.09f, 0.11f, 1.0f};
};

// How a node moves: a pure function of time applied to its rest transform.
struct Motion {
    enum class Kind { Spin, Bob, Orbit };
    Kind kind = Kind::Spin;
    std::uint32_t node = 0;
    glm::vec3 axis{0.0f, 1.0f, 0.0f}; // Spin
    float speed = 1.0f;               // radians per second (Spin, Orbit) or cycles (Bob)
    float amplitude = 0.5f;           // Bob height
    glm::vec3 center{0.0f};           // Orbit: centre looked at
    float radius = 5.0f;              // Orbit
    float height = 2.0f;              // Orbit: above centre
    float phase = 0.0f;
};

class Scene {
public:
    Scene() = default;
    explicit Scene(std::shared_ptr<const SceneAssets> assets);

    [[nodiscard]] const SceneAssets& assets() const { return *m_assets; }
    [[nodiscard]] const std::shared_ptr<const SceneAssets>& shared_assets() const {
        return m_assets;
    }
    [[nodiscard]] const std::string& name() const { return m_name; }
    void set_name(std::string name) { m_name = std::move(name); }

    [[nodiscard]] const std::vector<Node>& nodes() const { return m_nodes; }
    [[nodiscard]] const std::vector<SceneCamera>& cameras() const { return m_cameras; }
    [[nodiscard]] const Light& light() const { return m_light; }
    void set_light(const Light& light) { m_light = light; }

    // Adds a node (parents must be added before their children); returns its index.
    std::uint32_t add_node(Node node);
    // Adds a camera on `node` (the node's -Z is the view direction); returns its index.
    std::uint32_t add_camera(std::string name, std::uint32_t node, const CameraModel& model);
    void add_motion(const Motion& motion);
    void set_rest_transform(std::uint32_t node, const glm::mat4& local);
    [[nodiscard]] const glm::mat4& rest_transform(std::uint32_t node) const {
        return m_rest.at(node);
    }

    // Moves every node with a Motion to where it is at `seconds` (a pure function of time),
    // then updates world transforms.
    void animate(double seconds);
    // Recomputes world transforms and inherited tags from local transforms.
    void update_world();

    [[nodiscard]] std::optional<std::uint32_t> find_node(std::string_view name) const;
    // By camera name, then by the name of the node that carries it.
    [[nodiscard]] std::optional<std::uint32_t> find_camera(std::string_view name) const;
    // World-space bounds of every node with a mesh.
    [[nodiscard]] Bounds world_bounds() const;

private:
    std::shared_ptr<const SceneAssets> m_assets = std::make_shared<SceneAssets>();
    std::string m_name;
    std::vector<Node> m_nodes;
    std::vector<glm::mat4> m_rest;
    std::vector<std::vector<std::string>> m_own_tags;
    std::vector<SceneCamera> m_cameras;
    std::vector<Motion> m_motions;
    Light m_light;
};

// Vulkan-convention matrices: clip y points down, depth 0 (near) to 1 (far).
[[nodiscard]] glm::mat4 projection_matrix(const CameraModel& model, float aspect);
// The node transform (camera-to-world) that places a camera at `eye` looking at `target`.
[[nodiscard]] glm::mat4 camera_transform(const glm::vec3& eye, const glm::vec3& target);

} // namespace tandem::detail
