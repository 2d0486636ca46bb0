// The built-in demo scene, made in code, and the defaults that let any scene run without a
// tasks file or cameras. Pure CPU work; call from the application thread.
//
// Demo: a floor, spheres, cubes and cylinders (some moving: Scene::animate(t) is a pure function
// of time), a security camera looking at them, a monitor on the back wall showing it, a mirror
// on the left wall, and a top-down orthographic minimap shown on a second wall panel.
#pragma once

#include <string>

#include "scene/scene.hpp"
#include "scene/tasks.hpp"

namespace tandem::detail {

struct DemoOptions {
    // Adds this many detailed spheres (k_crowd_sphere_triangles each) standing in rows on the
    // floor, under a node tagged "crowd": a load for measuring offload, since every view that
    // sees them (the main view, the security camera, the mirror) pays for their triangles.
    std::uint32_t crowd = 0;
};
inline constexpr std::uint32_t k_max_demo_crowd = 4000;
inline constexpr std::uint32_t k_crowd_sphere_triangles = 2 * 128 * 64;

// Throws Error when options.crowd exceeds k_max_demo_crowd.
[[nodiscard]] Scene make_demo_scene(const DemoOptions& options = {});
// security -> monitor, mirror -> mirror, minimap -> minimap_screen (tags: map); main: "main".
[[nodiscard]] TasksFile demo_tasks();

// Name of the fitted main camera added to scenes without cameras.
inline constexpr const char* k_fitted_main_camera = "tandem.main";

// Adds a perspective camera framing the whole scene when it has no camera.
void add_fitted_main_camera(Scene& scene);
// Adds an orbiting camera ("tandem.orbit") and a top-down orthographic one ("tandem.minimap"),
// both fitted to the scene's bounds, and returns capture tasks for them (no display surface).
[[nodiscard]] TasksFile add_default_tasks(Scene& scene);
// The camera the main view uses: the tasks file's /main/camera, else "main" when the scene has
// one, else its first camera. Call after add_fitted_main_camera.
[[nodiscard]] std::uint32_t main_camera(const Scene& scene, const TasksFile& tasks);

} // namespace tandem::detail
