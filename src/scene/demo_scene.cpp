#include "scene/demo_scene.hpp"

#include <algorithm>
#include <cmath>

#include <glm/gtc/matrix_transform.hpp>

#include "scene/primitives.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

glm::mat4 at(float x, float y, float z) {
    return glm::translate(glm::mat4(1.0f), glm::vec3(x, y, z));
}

Texture checker(std::uint32_t size, std::uint32_t cell) {
    Texture t;
    t.name = "floor checker";
    t.width = size;
    t.height = size;
    t.rgba.resize(static_cast<std::size_t>(size) * size * 4);
    for (std::uint32_t y = 0; y < size; ++y) {
        for (std::uint32_t x = 0; x < size; ++x) {
            const bool dark = ((x / cell) + (y / cell)) % 2 == 0;
            const std::uint8_t v = dark ? 90 : 200;
            std::uint8_t* p = &t.rgba[(static_cast<std::size_t>(y) * size + x) * 4];
            p[0] = v;
            p[1] = v;
            p[2] = static_cast<std::uint8_t>(v + 20);
            p[3] = 255;
        }
    }
    return t;
}

struct Fit {
    glm::vec3 center;
    float radius;
};

Fit fit(const Scene& scene) {
    Bounds b = scene.world_bounds();
    if (b.empty) {
        b.add(glm::vec3(-1.0f));
        b.add(glm::vec3(1.0f));
    }
    return {b.center(), std::max(glm::length(b.extent()) * 0.5f, 0.5f)};
}

} // namespace

Scene make_demo_scene(const DemoOptions& options) {
    if (options.crowd > k_max_demo_crowd) {
        throw Error(ErrorCategory::InvalidArgument,
                    "A demo crowd of " + std::to_string(options.crowd) + " spheres is too large",
                    "Use 0 to " + std::to_string(k_max_demo_crowd) + " spheres");
    }
    auto assets = std::make_shared<SceneAssets>();
    auto material = [&](const char* name, glm::vec4 color,
                        std::optional<std::uint32_t> texture = std::nullopt) {
        assets->materials.push_back({name, color, texture});
        return static_cast<std::uint32_t>(assets->materials.size() - 1);
    };
    auto mesh = [&](Mesh m, const char* name) {
        m.name = name;
        assets->meshes.push_back(std::move(m));
        return static_cast<std::uint32_t>(assets->meshes.size() - 1);
    };
    assets->textures.push_back(checker(64, 8));
    material("default", glm::vec4(1.0f));
    const auto floor_mat = material("floor", glm::vec4(1.0f), 0u);
    const auto wall_mat = material("wall", {0.55f, 0.55f, 0.6f, 1.0f});
    const auto red = material("red", {0.85f, 0.2f, 0.15f, 1.0f});
    const auto green = material("green", {0.2f, 0.75f, 0.3f, 1.0f});
    const auto blue = material("blue", {0.2f, 0.35f, 0.9f, 1.0f});
    const auto yellow = material("yellow", {0.95f, 0.8f, 0.2f, 1.0f});
    const auto dark = material("dark", {0.1f, 0.1f, 0.12f, 1.0f});
    const auto screen = material("screen", {0.02f, 0.02f, 0.03f, 1.0f});

    const auto floor_mesh = mesh(make_plane(14.0f, 14.0f, floor_mat), "floor");
    // Tile the checker: scale the floor's UVs.
    for (Vertex& v : assets->meshes[floor_mesh].primitives[0].vertices) {
        v.uv *= 4.0f;
    }
    const auto wall_mesh = mesh(make_box({14.0f, 5.0f, 0.2f}, wall_mat), "wall");
    const auto side_wall_mesh = mesh(make_box({0.2f, 5.0f, 14.0f}, wall_mat), "side wall");
    const auto sphere_red = mesh(make_sphere(0.6f, 24, 16, red), "red sphere");
    const auto sphere_yellow = mesh(make_sphere(0.4f, 24, 16, yellow), "yellow sphere");
    const auto cube_blue = mesh(make_box(glm::vec3(0.9f), blue), "blue cube");
    const auto cylinder_green = mesh(make_cylinder(0.35f, 1.4f, 24, green), "green cylinder");
    const auto camera_body = mesh(make_box({0.3f, 0.25f, 0.5f}, dark), "camera body");
    const auto monitor = mesh(make_quad(3.2f, 2.4f, screen), "monitor");
    const auto mirror = mesh(make_quad(2.4f, 3.0f, screen, true), "mirror");
    const auto minimap = mesh(make_quad(2.0f, 2.0f, screen), "minimap screen");

    Scene scene(assets);
    scene.set_name("demo");
    auto node = [&](const char* name, std::optional<std::uint32_t> m, glm::mat4 local,
                    std::vector<std::string> tags = {},
                    std::optional<std::uint32_t> parent = std::nullopt) {
        Node n;
        n.name = name;
        n.mesh = m;
        n.local = local;
        n.tags = std::move(tags);
        n.parent = parent;
        return scene.add_node(std::move(n));
    };
    node("floor", floor_mesh, glm::mat4(1.0f), {"map"});
    node("back wall", wall_mesh, at(0.0f, 2.5f, -7.0f), {"room"});
    node("left wall", side_wall_mesh, at(-7.0f, 2.5f, 0.0f), {"room"});
    node("monitor", monitor, at(-2.2f, 2.4f, -6.85f), {"room", "surface"});
    node("minimap_screen", minimap, at(2.6f, 2.6f, -6.85f), {"room", "surface"});
    node("mirror", mirror,
         at(-6.85f, 2.0f, 1.0f) * glm::rotate(glm::mat4(1.0f), glm::radians(90.0f), {0, 1, 0}),
         {"room", "surface"});

    // The props: a spinning carousel of children (a hierarchy that moves), and free movers.
    const auto props = node("props", std::nullopt, glm::mat4(1.0f), {"props", "map"});
    const auto carousel = node("carousel", std::nullopt, at(0.0f, 0.0f, -1.0f), {}, props);
    const std::uint32_t meshes_around[] = {cube_blue, cylinder_green, cube_blue, cylinder_green};
    for (int i = 0; i < 4; ++i) {
        const float a = static_cast<float>(i) * 1.5707963f;
        const float y = assets->meshes[meshes_around[i]].bounds.extent().y * 0.5f;
        node(i % 2 == 0 ? "cube" : "cylinder", meshes_around[i],
             at(2.4f * std::cos(a), y, 2.4f * std::sin(a)), {}, carousel);
    }
    const auto ball = node("red ball", sphere_red, at(0.0f, 1.2f, -1.0f), {}, props);
    const auto small = node("yellow ball", sphere_yellow, at(3.5f, 0.9f, 2.5f), {}, props);
    const auto spinner = node("spinning cube", cube_blue, at(-3.0f, 0.45f, 2.0f), {}, props);
    node("pillar", cylinder_green, at(4.0f, 0.7f, -4.0f), {}, props);
    node("block", cube_blue, at(-4.5f, 0.45f, -4.0f) * glm::scale(glm::mat4(1.0f), {1, 2, 1}), {},
         props);
    scene.add_motion({.kind = Motion::Kind::Spin, .node = carousel, .speed = 0.6f});
    scene.add_motion({.kind = Motion::Kind::Bob, .node = ball, .speed = 0.5f, .amplitude = 0.6f});
    scene.add_motion({.kind = Motion::Kind::Bob,
                      .node = small,
                      .speed = 0.8f,
                      .amplitude = 0.5f,
                      .phase = 1.0f});
    scene.add_motion(
        {.kind = Motion::Kind::Spin, .node = spinner, .axis = {0.3f, 1.0f, 0.2f}, .speed = 1.2f});

    if (options.crowd > 0) {
        // Rows of spheres in front of the back wall, clear of the props in the middle.
        const auto crowd_mat = material("crowd", {0.75f, 0.45f, 0.85f, 1.0f});
        const auto crowd_mesh = mesh(make_sphere(0.18f, 128, 64, crowd_mat), "crowd sphere");
        const auto crowd = node("crowd", std::nullopt, glm::mat4(1.0f), {"crowd"});
        const auto per_row =
            static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(options.crowd))));
        const float step = 12.0f / static_cast<float>(per_row);
        for (std::uint32_t i = 0; i < options.crowd; ++i) {
            const float x = -6.0f + step * (static_cast<float>(i % per_row) + 0.5f);
            const float z = -6.0f + step * (static_cast<float>(i / per_row) + 0.5f);
            const std::string name = "crowd " + std::to_string(i);
            node(name.c_str(), crowd_mesh, at(x, 0.18f, z), {}, crowd);
        }
    }

    // Cameras.
    const auto security = node("security", std::nullopt,
                               camera_transform({5.5f, 4.0f, 5.5f}, {0.0f, 0.5f, -1.0f}), {"room"});
    // The camera's housing sits just behind its lens, outside the view.
    node("security housing", camera_body, at(0.0f, 0.0f, 0.36f), {}, security);
    scene.add_camera("security", security, {Projection::Perspective, 0.9f, 1, 1, 0.1f, 40.0f});
    const auto mirror_cam = node("mirror camera", std::nullopt,
                                 camera_transform({-6.7f, 2.0f, 1.0f}, {0.0f, 1.5f, 1.0f}));
    scene.add_camera("mirror", mirror_cam, {Projection::Perspective, 1.0f, 1, 1, 0.1f, 40.0f});
    const auto map_cam =
        node("minimap camera", std::nullopt, camera_transform({0.0f, 20.0f, 0.0f}, {0, 0, 0}));
    scene.add_camera("minimap", map_cam, {Projection::Orthographic, 0, 7.5f, 7.5f, 0.5f, 40.0f});
    const auto main_cam = node("main camera", std::nullopt,
                               camera_transform({1.5f, 4.5f, 10.5f}, {-0.5f, 1.8f, -3.0f}));
    scene.add_camera("main", main_cam, {Projection::Perspective, 0.9f, 1, 1, 0.1f, 60.0f});
    scene.update_world();
    return scene;
}

TasksFile demo_tasks() {
    TasksFile t;
    t.main_camera = "main";
    // On a worker, as a tasks file without placements says.
    const Placement worker = Placement::on_a_worker();
    t.tasks.push_back({"security", "security", 320, 240, 30.0, worker, "monitor", {}});
    t.tasks.push_back({"mirror", "mirror", 240, 300, 30.0, worker, "mirror", {}});
    t.tasks.push_back({"minimap", "minimap", 256, 256, 10.0, worker, "minimap_screen", {"map"}});
    return t;
}

void add_fitted_main_camera(Scene& scene) {
    if (!scene.cameras().empty()) {
        return;
    }
    scene.update_world();
    const Fit f = fit(scene);
    const float yfov = 0.8f;
    const float distance = f.radius / std::sin(yfov * 0.5f) * 1.05f;
    const glm::vec3 eye = f.center + glm::normalize(glm::vec3(0.3f, 0.5f, 1.0f)) * distance;
    Node n;
    n.name = k_fitted_main_camera;
    n.local = camera_transform(eye, f.center);
    const auto index = scene.add_node(std::move(n));
    scene.add_camera(
        k_fitted_main_camera, index,
        {Projection::Perspective, yfov, 1, 1, distance * 0.01f, distance + f.radius * 2.0f});
    scene.update_world();
}

TasksFile add_default_tasks(Scene& scene) {
    scene.update_world();
    const Fit f = fit(scene);
    const float yfov = 0.8f;
    const float distance = f.radius / std::sin(yfov * 0.5f) * 1.05f;
    Node orbit;
    orbit.name = "tandem.orbit";
    const auto orbit_node = scene.add_node(std::move(orbit));
    scene.add_camera(
        "tandem.orbit", orbit_node,
        {Projection::Perspective, yfov, 1, 1, distance * 0.01f, distance + f.radius * 2.0f});
    scene.add_motion({.kind = Motion::Kind::Orbit,
                      .node = orbit_node,
                      .speed = 0.5f,
                      .center = f.center,
                      .radius = distance * 0.9f,
                      .height = distance * 0.45f});
    Node top;
    top.name = "tandem.minimap";
    top.local =
        camera_transform(f.center + glm::vec3(0.0f, f.radius * 2.0f + 1.0f, 0.0f), f.center);
    const auto top_node = scene.add_node(std::move(top));
    scene.add_camera("tandem.minimap", top_node,
                     {Projection::Orthographic, 0, f.radius * 1.1f, f.radius * 1.1f, 0.01f,
                      f.radius * 4.0f + 2.0f});
    scene.animate(0.0);
    TasksFile t;
    t.tasks.push_back(
        {"orbit", "tandem.orbit", 320, 240, 30.0, Placement::on_a_worker(), std::nullopt, {}});
    t.tasks.push_back(
        {"minimap", "tandem.minimap", 256, 256, 10.0, Placement::on_a_worker(), std::nullopt, {}});
    return t;
}

std::uint32_t main_camera(const Scene& scene, const TasksFile& tasks) {
    if (tasks.main_camera) {
        if (auto c = scene.find_camera(*tasks.main_camera)) {
            return *c;
        }
        throw Error(ErrorCategory::InvalidArgument,
                    "The scene has no camera '" + *tasks.main_camera + "'",
                    "Name one of the scene's cameras in /main/camera");
    }
    if (auto c = scene.find_camera("main")) {
        return *c;
    }
    if (scene.cameras().empty()) {
        throw Error(ErrorCategory::InvalidArgument, "The scene has no camera",
                    "Call add_fitted_main_camera first");
    }
    return 0;
}

} // namespace tandem::detail
