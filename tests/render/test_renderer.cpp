// The renderer on lavapipe: the same snapshot gives the same pixels on two devices (a capture on
// a worker equals the primary's), nothing is re-uploaded when transforms or cameras change,
// culling drops what is out of view without changing the image, a display surface shows exactly
// the image it is given, and a glTF scene written by the test loads and renders.
#include <algorithm>
#include <cstdlib>
#include <set>

#include <glm/gtc/matrix_transform.hpp>
#include <gtest/gtest.h>

#include "gltf_writer.hpp"
#include "render/headless.hpp"
#include "render/mesh_cache.hpp"
#include "render/renderer.hpp"
#include "scene/demo_scene.hpp"
#include "scene/gltf_loader.hpp"
#include "scene/run_inputs.hpp"
#include "scene/snapshot.hpp"
#include "tandem/error.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using Pixels = std::vector<std::uint8_t>;

struct DeviceRenderer {
    explicit DeviceRenderer(detail::Device& device, const detail::Scene& scene)
        : cache(device),
          renderer((cache.upload(scene.shared_assets()), cache), VK_FORMAT_R8G8B8A8_UNORM) {}
    detail::MeshCache cache;
    detail::Renderer renderer;
};

std::array<std::uint8_t, 4> pixel(const Pixels& p, VkExtent2D e, std::uint32_t x, std::uint32_t y) {
    const std::size_t i = (std::size_t{y} * e.width + x) * 4;
    return {p[i], p[i + 1], p[i + 2], p[i + 3]};
}

std::size_t distinct_colours(const Pixels& p) {
    std::set<std::uint32_t> colours;
    for (std::size_t i = 0; i + 3 < p.size(); i += 4) {
        colours.insert(p[i] | (p[i + 1] << 8) | (p[i + 2] << 16) | (std::uint32_t{p[i + 3]} << 24));
    }
    return colours.size();
}

class RendererTest : public VulkanTest {};

TEST_F(RendererTest, WorkerCaptureEqualsPrimaryPixelForPixel) {
    ASSERT_GE(adapters().size(), 2u);
    detail::Scene scene = detail::make_demo_scene();
    scene.animate(1.25);
    detail::Device& primary = open(0, {true, "primary"});
    detail::Device& worker = open(1, {true, "worker"});
    DeviceRenderer on_primary(primary, scene);
    DeviceRenderer on_worker(worker, scene);
    const VkExtent2D extent{96, 72};
    for (const char* camera : {"security", "minimap", "mirror"}) {
        const detail::FrameSnapshot snap =
            detail::snapshot(scene, {*scene.find_camera(camera), 96.0f / 72.0f, {}, {}, {}});
        detail::HeadlessView a(on_primary.renderer, extent, "primary view");
        detail::HeadlessView b(on_worker.renderer, extent, "worker view");
        const Pixels pa = a.render(snap);
        const Pixels pb = b.render(snap);
        ASSERT_EQ(pa.size(), std::size_t{96} * 72 * 4);
        EXPECT_TRUE(pa == pb) << camera << ": worker and primary images differ";
        if (const char* dir = std::getenv("TANDEM_TEST_PNG_DIR")) {
            detail::write_png(std::string(dir) + "/" + camera + ".png", 96, 72, pa);
        }
        EXPECT_GT(distinct_colours(pa), 20u) << camera << " drew a scene, not a flat clear";
        EXPECT_NE(pixel(pa, extent, 0, 0)[0], 0xCD) << "the readback poison was overwritten";
    }
}

TEST_F(RendererTest, TransformAndCameraChangesUploadNothing) {
    detail::Scene scene = detail::make_demo_scene();
    detail::Device& device = open(0);
    DeviceRenderer r(device, scene);
    const auto uploads = r.cache.upload_count();
    const auto bytes = r.cache.uploaded_bytes();
    EXPECT_EQ(uploads, scene.assets().meshes.size() + scene.assets().textures.size() + 1);
    r.cache.upload(scene.shared_assets()); // the same assets again: nothing to do
    detail::HeadlessView view(r.renderer, {64, 48});
    Pixels previous;
    for (int frame = 0; frame < 4; ++frame) {
        scene.animate(frame * 0.7);
        const char* camera = frame % 2 == 0 ? "main" : "minimap";
        const Pixels now =
            view.render(detail::snapshot(scene, {*scene.find_camera(camera), 4.0f / 3.0f}));
        EXPECT_NE(now, previous);
        previous = now;
    }
    EXPECT_EQ(r.cache.upload_count(), uploads);
    EXPECT_EQ(r.cache.uploaded_bytes(), bytes);
}

// Assets that could not be drawn (a material naming a texture that does not exist) are refused
// before anything is made: the cache stays empty, uploads nothing, and takes valid assets after.
TEST_F(RendererTest, RefusedAssetsLeaveTheCacheEmpty) {
    const detail::Scene scene = detail::make_demo_scene();
    detail::Device& device = open(0);
    detail::MeshCache cache(device);
    auto broken = std::make_shared<detail::SceneAssets>(scene.assets());
    const auto texture_count = static_cast<std::uint32_t>(broken->textures.size());
    broken->materials.push_back({"dangling", glm::vec4(1.0f), texture_count});
    try {
        cache.upload(broken);
        ADD_FAILURE() << "assets with a dangling texture index were uploaded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Material 'dangling' names a texture that does not "
                                             "exist"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(cache.upload_count(), 0u);
    EXPECT_EQ(cache.uploaded_bytes(), 0u);
    EXPECT_EQ(cache.mesh_count(), 0u);

    cache.upload(scene.shared_assets());
    EXPECT_EQ(cache.upload_count(),
              scene.assets().meshes.size() + scene.assets().textures.size() + 1);
    EXPECT_EQ(cache.mesh_count(), scene.assets().meshes.size());
}

TEST_F(RendererTest, CullingDropsWhatIsOutOfViewAndKeepsTheImage) {
    detail::Scene scene = detail::make_demo_scene();
    detail::Device& device = open(0);
    DeviceRenderer r(device, scene);
    detail::HeadlessView view(r.renderer, {64, 48});
    detail::FrameSnapshot snap =
        detail::snapshot(scene, {*scene.find_camera("security"), 4.0f / 3.0f});
    detail::RenderStats stats;
    const Pixels base = view.render(snap, {}, &stats);
    const std::uint32_t culled_before = stats.culled;
    // Far behind the camera: culled, and the image does not change.
    detail::InstanceSnapshot behind = snap.instances.front();
    behind.transform = glm::translate(glm::mat4(1.0f), snap.camera.position * 3.0f);
    snap.instances.push_back(behind);
    const Pixels with_extra = view.render(snap, {}, &stats);
    EXPECT_EQ(stats.culled, culled_before + 1);
    EXPECT_EQ(base, with_extra);
    EXPECT_GT(stats.draws, 0u);
    EXPECT_LT(stats.draws, stats.instances) << "repeated meshes share instanced draws";
}

TEST_F(RendererTest, DisplaySurfaceShowsTheGivenImage) {
    detail::Scene scene = detail::make_demo_scene();
    detail::Device& device = open(0);
    DeviceRenderer r(device, scene);
    // A "task output": a flat colour, so every texel the surface samples is the same.
    detail::HeadlessView output(r.renderer, {32, 32}, "task output");
    detail::FrameSnapshot flat;
    flat.clear_color = {0.2f, 0.8f, 0.4f, 1.0f};
    const Pixels out = output.render(flat);
    const auto expected = pixel(out, {32, 32}, 5, 5);
    // The main view looks straight at the monitor, which shows external texture 0.
    const auto monitor = *scene.find_node("monitor");
    const glm::vec3 centre = glm::vec3(scene.nodes()[monitor].world[3]);
    detail::FrameSnapshot main = detail::snapshot(scene, {0, 1.0f, {}, {{monitor, 0}}, {}});
    main.camera.view = glm::inverse(detail::camera_transform(centre + glm::vec3(0, 0, 3), centre));
    detail::HeadlessView view(r.renderer, {48, 48}, "main view");
    const detail::ExternalTexture ext = output.external();
    const Pixels shown = view.render(main, {&ext, 1});
    EXPECT_EQ(pixel(shown, {48, 48}, 24, 24), expected);
    // Without the binding, the monitor shows its own (dark) material instead.
    const Pixels unbound = view.render(detail::snapshot(scene, {0, 1.0f}));
    (void)unbound;
    detail::FrameSnapshot no_surface = main;
    for (auto& i : no_surface.instances) {
        i.surface.reset();
    }
    EXPECT_NE(pixel(view.render(no_surface), {48, 48}, 24, 24), expected);
    // Naming an external texture that was not given is refused, not drawn: the caller's
    // snapshot is at fault (InvalidArgument), not the device.
    try {
        (void)view.render(main);
        ADD_FAILURE() << "a snapshot naming an external texture that was not given was drawn";
    } catch (const tandem::Error& e) {
        EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument) << e.what();
    }
}

TEST_F(RendererTest, GltfWrittenByTheTestLoadsAndRenders) {
    const auto dir = temp_folder("render-gltf");
    const detail::Scene scene =
        detail::load_gltf(write_test_gltf(dir, GltfForm::ExternalBuffer).string());
    detail::Device& device = open(0);
    DeviceRenderer r(device, scene);
    const VkExtent2D extent{64, 48};
    detail::HeadlessView view(r.renderer, extent);
    const Pixels p =
        view.render(detail::snapshot(scene, {*scene.find_camera("cam"), 64.0f / 48.0f}));
    // Left panel: red factor. Right panel: green texture. Triangle above the middle: blue.
    const auto left = pixel(p, extent, 14, 30);
    const auto right = pixel(p, extent, 50, 30);
    EXPECT_GT(left[0], 2 * std::max(left[1], left[2])) << "red panel";
    EXPECT_GT(right[1], 2 * std::max(right[0], right[2])) << "green textured panel";
    bool blue = false;
    for (std::uint32_t y = 0; y < 20; ++y) {
        const auto c = pixel(p, extent, 32, y);
        blue = blue || c[2] > 2 * std::max(c[0], c[1]);
    }
    EXPECT_TRUE(blue) << "blue triangle";
}

} // namespace
} // namespace tandem::test

namespace tandem::test {
namespace {

// The demo's whole composition on one device: each task rendered, then the main view showing
// each output on its surface. TANDEM_TEST_PNG_DIR=dir writes a 960x540 picture of it (the
// README's picture is made this way).
TEST_F(RendererTest, DemoMainViewShowsEveryTaskOnItsSurface) {
    const char* png_dir = std::getenv("TANDEM_TEST_PNG_DIR");
    detail::RunRequest request;
    request.size = png_dir ? "960x540" : "160x90";
    detail::RunInputs in = detail::prepare_run(request);
    in.scene.animate(2.0);
    detail::Device& device = open(0);
    DeviceRenderer r(device, in.scene);
    std::vector<std::unique_ptr<detail::HeadlessView>> outputs;
    std::vector<detail::ExternalTexture> external;
    std::vector<std::optional<std::uint32_t>> shown;
    for (std::size_t i = 0; i < in.prepared.size(); ++i) {
        const auto& spec = in.prepared[i].spec;
        outputs.push_back(std::make_unique<detail::HeadlessView>(
            r.renderer, VkExtent2D{spec.width, spec.height}, spec.name));
        const Pixels p = outputs.back()->render(detail::task_snapshot(in, i));
        EXPECT_GT(distinct_colours(p), 20u) << spec.name;
        external.push_back(outputs.back()->external());
        shown.push_back(static_cast<std::uint32_t>(i));
        if (png_dir) {
            detail::write_png(std::string(png_dir) + "/" + spec.name + ".png", spec.width,
                              spec.height, p);
        }
    }
    detail::HeadlessView main(r.renderer, {in.width, in.height}, "main view");
    detail::RenderStats stats;
    const Pixels with = main.render(detail::main_snapshot(in, shown), external, &stats);
    const Pixels without = main.render(detail::main_snapshot(in, {}));
    EXPECT_NE(with, without) << "the surfaces show the task outputs";
    if (png_dir) {
        detail::write_png(std::string(png_dir) + "/main.png", in.width, in.height, with);
    }
}

} // namespace
} // namespace tandem::test
