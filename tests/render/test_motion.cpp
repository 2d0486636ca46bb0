// The renderer's depth and motion outputs on lavapipe: a quad moved by a known number of pixels
// has minus that motion inside and none outside, with the depth its plane has and 1 outside; a
// camera translation alone moves a still object by what its projection says; what did not move
// has motion exactly 0; and the colour is the same, byte for byte, as without these outputs.
// with_previous() matches instances by index and mesh.
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/packing.hpp>
#include <gtest/gtest.h>

#include "core/resources.hpp"
#include "render/headless.hpp"
#include "render/mesh_cache.hpp"
#include "render/renderer.hpp"
#include "scene/primitives.hpp"
#include "scene/snapshot.hpp"
#include "tandem/error.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

using Pixels = std::vector<std::uint8_t>;

constexpr VkExtent2D k_extent{64, 48};
constexpr std::uint32_t k_quad = 0; // mesh ids of motion_assets()
constexpr std::uint32_t k_box = 1;

std::shared_ptr<const detail::SceneAssets> motion_assets() {
    auto assets = std::make_shared<detail::SceneAssets>();
    assets->materials.push_back({"default", glm::vec4(1.0f), std::nullopt});
    assets->materials.push_back({"orange", {1.0f, 0.55f, 0.1f, 1.0f}, std::nullopt});
    assets->meshes.push_back(detail::make_quad(16.0f, 12.0f, 1));
    assets->meshes.push_back(detail::make_box({6.0f, 6.0f, 6.0f}, 1));
    return assets;
}

// An orthographic camera at (x, y, 5) looking down -Z whose world units are pixels of k_extent
// (64 x 48 units across the image).
detail::CameraSnapshot pixel_camera(float x, float y) {
    detail::CameraModel model;
    model.projection = detail::Projection::Orthographic;
    model.ymag = 24.0f;
    model.znear = 0.1f;
    model.zfar = 10.0f;
    detail::CameraSnapshot c;
    c.position = {x, y, 5.0f};
    c.view = glm::inverse(glm::translate(glm::mat4(1.0f), c.position));
    c.projection = detail::projection_matrix(model, static_cast<float>(k_extent.width) /
                                                        static_cast<float>(k_extent.height));
    return c;
}

detail::CameraSnapshot perspective_camera(const glm::vec3& eye, const glm::vec3& target) {
    detail::CameraModel model;
    model.yfov = 0.9f;
    model.znear = 0.5f;
    model.zfar = 50.0f;
    detail::CameraSnapshot c;
    c.position = eye;
    c.view = glm::inverse(detail::camera_transform(eye, target));
    c.projection = detail::projection_matrix(model, static_cast<float>(k_extent.width) /
                                                        static_cast<float>(k_extent.height));
    return c;
}

// Where `world` lands under `camera`: pixel x, y (y down the image) and depth.
glm::vec3 project(const detail::CameraSnapshot& camera, const glm::vec3& world) {
    const glm::vec4 clip = camera.projection * camera.view * glm::vec4(world, 1.0f);
    const glm::vec3 ndc = glm::vec3(clip) / clip.w;
    return {(ndc.x * 0.5f + 0.5f) * static_cast<float>(k_extent.width),
            (ndc.y * 0.5f + 0.5f) * static_cast<float>(k_extent.height), ndc.z};
}

detail::FrameSnapshot frame(const detail::CameraSnapshot& camera) {
    detail::FrameSnapshot s;
    s.camera = camera;
    s.light.direction = glm::normalize(glm::vec3(-0.3f, -0.5f, -1.0f));
    s.clear_color = {0.1f, 0.2f, 0.3f, 1.0f};
    return s;
}

struct MotionFrame {
    Pixels color;
    std::vector<float> depth;
    std::vector<glm::vec2> motion;

    [[nodiscard]] std::size_t at(std::uint32_t x, std::uint32_t y) const {
        return std::size_t{y} * k_extent.width + x;
    }
};

// Renders with motion outputs into images of its own and reads all three back (blocking), into
// a buffer poisoned first so that an output the render did not write cannot pass.
class MotionView {
public:
    explicit MotionView(const detail::Renderer& renderer)
        : m_renderer(renderer), m_color(image(VK_FORMAT_R8G8B8A8_UNORM, "colour")),
          m_depth(image(detail::k_depth_output_format, "depth")),
          m_motion(image(detail::k_motion_format, "motion")),
          m_target(renderer, k_extent, 16, 1, "motion view"),
          m_readback(detail::create_buffer(
              renderer.device(), {3 * k_texels * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                  VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "motion view readback"})) {}

    MotionFrame render(const detail::FrameSnapshot& snapshot) {
        const detail::Device& device = m_renderer.device();
        std::memset(m_readback.mapped, 0xCD, m_readback.size);
        detail::flush_buffer(device, m_readback);
        detail::RenderStatus status = detail::RenderStatus::Ok;
        detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
            detail::ColorTarget color;
            color.image = m_color.get();
            color.view = m_color.view.get();
            color.extent = k_extent;
            detail::MotionTargets motion;
            motion.depth_image = m_depth.get();
            motion.depth_view = m_depth.view.get();
            motion.motion_image = m_motion.get();
            motion.motion_view = m_motion.view.get();
            status = m_renderer.record(cmd, m_target, color, motion, snapshot);
            if (status != detail::RenderStatus::Ok) {
                return;
            }
            const VkImage images[3] = {m_color.get(), m_depth.get(), m_motion.get()};
            for (std::uint32_t i = 0; i < 3; ++i) {
                VkBufferImageCopy copy{};
                copy.bufferOffset = VkDeviceSize{i} * k_texels * 4;
                copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
                copy.imageExtent = {k_extent.width, k_extent.height, 1};
                vkCmdCopyImageToBuffer(cmd, images[i], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                       m_readback.get(), 1, &copy);
            }
            detail::buffer_barrier(cmd, m_readback.get(), 0, VK_WHOLE_SIZE,
                                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
        });
        if (status != detail::RenderStatus::Ok) {
            throw Error(std::string("Render refused: ") + detail::to_string(status));
        }
        detail::invalidate_buffer(device, m_readback);
        const auto* bytes = static_cast<const std::uint8_t*>(m_readback.mapped);
        MotionFrame out;
        out.color.assign(bytes, bytes + k_texels * 4);
        out.depth.resize(k_texels);
        std::memcpy(out.depth.data(), bytes + k_texels * 4, k_texels * 4);
        const auto* halves = reinterpret_cast<const std::uint16_t*>(bytes + 2 * k_texels * 4);
        out.motion.resize(k_texels);
        for (std::size_t i = 0; i < k_texels; ++i) {
            out.motion[i] = {glm::unpackHalf1x16(halves[2 * i]),
                             glm::unpackHalf1x16(halves[2 * i + 1])};
        }
        return out;
    }

private:
    static constexpr std::size_t k_texels = std::size_t{k_extent.width} * k_extent.height;

    detail::Image image(VkFormat format, const char* name) const {
        return detail::create_image(m_renderer.device(), {k_extent.width,
                                                          k_extent.height,
                                                          format,
                                                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                                              VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                                                          std::string("motion view ") + name,
                                                          {}});
    }

    const detail::Renderer& m_renderer;
    detail::Image m_color;
    detail::Image m_depth;
    detail::Image m_motion;
    detail::RenderTarget m_target;
    detail::Buffer m_readback;
};

class MotionTest : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }

    void SetUp() override {
        VulkanTest::SetUp();
        detail::Device& device = open(0);
        m_cache = std::make_unique<detail::MeshCache>(device);
        m_cache->upload(motion_assets());
        m_renderer = std::make_unique<detail::Renderer>(*m_cache, VK_FORMAT_R8G8B8A8_UNORM,
                                                        VK_FORMAT_D32_SFLOAT,
                                                        detail::RenderOutputs::ColorDepthMotion);
    }

    void TearDown() override {
        m_renderer.reset();
        m_cache.reset();
        VulkanTest::TearDown();
    }

    [[nodiscard]] detail::MeshCache& cache() { return *m_cache; }
    [[nodiscard]] const detail::Renderer& renderer() { return *m_renderer; }

private:
    std::unique_ptr<detail::MeshCache> m_cache;
    std::unique_ptr<detail::Renderer> m_renderer;
};

// Texel centres more than `margin` pixels inside (or, negative, outside) the rectangle.
bool inside(std::uint32_t x, std::uint32_t y, glm::vec2 lo, glm::vec2 hi, float margin) {
    const glm::vec2 c(static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f);
    return c.x > lo.x + margin && c.x < hi.x - margin && c.y > lo.y + margin && c.y < hi.y - margin;
}

TEST_F(MotionTest, MovedQuadHasMinusItsTranslationInsideAndNothingOutside) {
    // Moved right 3.25 px and down 1.5 px (world y is up, the image's y down) in one frame.
    const glm::vec3 offset(-4.0f, 2.0f, 0.0f);
    const glm::vec3 moved(3.25f, -1.5f, 0.0f);
    detail::FrameSnapshot snap = frame(pixel_camera(0.0f, 0.0f));
    snap.previous_camera = snap.camera;
    detail::InstanceSnapshot quad;
    quad.mesh = k_quad;
    quad.previous_transform = glm::translate(glm::mat4(1.0f), offset);
    quad.transform = glm::translate(glm::mat4(1.0f), offset + moved);
    snap.instances.push_back(quad);

    MotionView view(renderer());
    const MotionFrame f = view.render(snap);
    const glm::vec3 lo = project(snap.camera, offset + moved + glm::vec3(-8.0f, 6.0f, 0.0f));
    const glm::vec3 hi = project(snap.camera, offset + moved + glm::vec3(8.0f, -6.0f, 0.0f));
    ASSERT_NEAR(hi.x - lo.x, 16.0f, 1e-4f) << "one world unit is one pixel";
    const float depth = lo.z;
    ASSERT_GT(depth, 0.0f);
    ASSERT_LT(depth, 1.0f);
    std::uint32_t in = 0;
    std::uint32_t out = 0;
    for (std::uint32_t y = 0; y < k_extent.height; ++y) {
        for (std::uint32_t x = 0; x < k_extent.width; ++x) {
            const std::size_t i = f.at(x, y);
            if (inside(x, y, lo, hi, 1.0f)) {
                ++in;
                EXPECT_NEAR(f.motion[i].x, -3.25f, 0.05f) << x << "," << y;
                EXPECT_NEAR(f.motion[i].y, -1.5f, 0.05f) << x << "," << y;
                EXPECT_NEAR(f.depth[i], depth, 1e-5f) << x << "," << y;
            } else if (!inside(x, y, lo, hi, -1.0f)) {
                ++out;
                EXPECT_EQ(f.motion[i].x, 0.0f) << x << "," << y;
                EXPECT_EQ(f.motion[i].y, 0.0f) << x << "," << y;
                EXPECT_EQ(f.depth[i], 1.0f) << x << "," << y;
            }
        }
    }
    EXPECT_GT(in, 100u);
    EXPECT_GT(out, 1000u);

    // The colour is what the colour-only path draws, from this renderer and from one without
    // motion outputs (whose pipeline the shelf shares).
    detail::HeadlessView same(renderer(), k_extent, "colour only");
    EXPECT_TRUE(same.render(snap) == f.color) << "the motion pipeline changed the colour";
    const detail::Renderer plain(cache(), VK_FORMAT_R8G8B8A8_UNORM);
    detail::HeadlessView other(plain, k_extent, "plain renderer");
    EXPECT_TRUE(other.render(snap) == f.color);
}

TEST_F(MotionTest, CameraTranslationAloneMovesAStillObject) {
    // Perspective, the camera moving parallel to the quad: every point of the quad moves by the
    // same number of pixels, which the projection gives.
    const glm::vec3 before_eye(0.0f, 0.0f, 20.0f);
    const glm::vec3 step(0.8f, -0.5f, 0.0f);
    detail::FrameSnapshot before = frame(perspective_camera(before_eye, {0.0f, 0.0f, 0.0f}));
    detail::FrameSnapshot now =
        frame(perspective_camera(before_eye + step, glm::vec3(0.0f) + step));
    detail::InstanceSnapshot quad;
    quad.mesh = k_quad;
    before.instances.push_back(quad);
    now.instances.push_back(quad);
    const detail::FrameSnapshot snap = detail::with_previous(now, before);
    ASSERT_TRUE(snap.previous_camera.has_value());

    const glm::vec3 centre_now = project(now.camera, glm::vec3(0.0f));
    const glm::vec3 centre_before = project(before.camera, glm::vec3(0.0f));
    const glm::vec2 expected = glm::vec2(centre_before) - glm::vec2(centre_now);
    ASSERT_GT(std::abs(expected.x), 1.0f);
    ASSERT_GT(expected.x, 0.0f) << "the camera moved right: the quad was further right before";
    ASSERT_GT(expected.y, 0.0f) << "the camera moved down: the quad was lower down before";

    MotionView view(renderer());
    const MotionFrame f = view.render(snap);
    const glm::vec3 lo = project(now.camera, glm::vec3(-8.0f, 6.0f, 0.0f));
    const glm::vec3 hi = project(now.camera, glm::vec3(8.0f, -6.0f, 0.0f));
    std::uint32_t in = 0;
    for (std::uint32_t y = 0; y < k_extent.height; ++y) {
        for (std::uint32_t x = 0; x < k_extent.width; ++x) {
            const std::size_t i = f.at(x, y);
            if (inside(x, y, lo, hi, 1.0f)) {
                ++in;
                EXPECT_NEAR(f.motion[i].x, expected.x, 0.05f) << x << "," << y;
                EXPECT_NEAR(f.motion[i].y, expected.y, 0.05f) << x << "," << y;
                EXPECT_NEAR(f.depth[i], centre_now.z, 1e-5f) << x << "," << y;
            } else if (!inside(x, y, lo, hi, -1.0f)) {
                EXPECT_EQ(f.motion[i], glm::vec2(0.0f)) << x << "," << y;
                EXPECT_EQ(f.depth[i], 1.0f) << x << "," << y;
            }
        }
    }
    EXPECT_GT(in, 100u);
}

TEST_F(MotionTest, WhatDidNotMoveHasMotionExactlyZero) {
    // A still perspective camera, a tilted box that keeps its transform (given explicitly) and
    // a quad that moves, on the other side of the image.
    detail::FrameSnapshot snap = frame(perspective_camera({0.0f, 3.0f, 25.0f}, {0.0f, 0.0f, 0.0f}));
    snap.previous_camera = snap.camera;
    detail::InstanceSnapshot box;
    box.mesh = k_box;
    box.transform = glm::rotate(glm::translate(glm::mat4(1.0f), {-7.0f, 0.0f, 0.0f}), 0.6f,
                                glm::normalize(glm::vec3(1.0f, 1.0f, 0.2f)));
    box.previous_transform = box.transform;
    detail::InstanceSnapshot quad;
    quad.mesh = k_quad;
    quad.transform =
        glm::scale(glm::translate(glm::mat4(1.0f), {8.0f, 0.0f, 0.0f}), glm::vec3(0.25f));
    quad.previous_transform = glm::translate(quad.transform, {0.0f, 4.0f, 0.0f});
    snap.instances = {box, quad};

    MotionView view(renderer());
    const MotionFrame f = view.render(snap);
    std::uint32_t still = 0;
    std::uint32_t moving = 0;
    for (std::uint32_t y = 0; y < k_extent.height; ++y) {
        for (std::uint32_t x = 0; x < k_extent.width; ++x) {
            const std::size_t i = f.at(x, y);
            if (f.depth[i] == 1.0f) {
                EXPECT_EQ(f.motion[i], glm::vec2(0.0f)) << x << "," << y;
            } else if (x < k_extent.width / 2) {
                ++still;
                EXPECT_EQ(f.motion[i], glm::vec2(0.0f)) << x << "," << y;
            } else if (f.motion[i] != glm::vec2(0.0f)) {
                ++moving;
            }
        }
    }
    EXPECT_GT(still, 50u) << "the box is drawn";
    EXPECT_GT(moving, 4u) << "the quad is drawn, with motion";

    // Without any previous frame at all the same holds for everything.
    detail::FrameSnapshot unset = snap;
    unset.previous_camera.reset();
    for (auto& inst : unset.instances) {
        inst.previous_transform.reset();
    }
    const MotionFrame g = view.render(unset);
    for (std::size_t i = 0; i < g.motion.size(); ++i) {
        ASSERT_EQ(g.motion[i], glm::vec2(0.0f)) << i;
    }
    EXPECT_EQ(g.color, f.color);
    EXPECT_EQ(g.depth, f.depth);
}

TEST_F(MotionTest, MotionTargetsNeedARendererAndTargetMadeForThem) {
    const detail::Renderer plain(cache(), VK_FORMAT_R8G8B8A8_UNORM);
    detail::RenderTarget target(plain, k_extent, 4, 1, "plain target");
    detail::FrameSnapshot snap = frame(pixel_camera(0.0f, 0.0f));
    detail::RenderStatus with_plain = detail::RenderStatus::Ok;
    detail::RenderStatus with_plain_target = detail::RenderStatus::Ok;
    detail::submit_and_wait(plain.device(), detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        // Refused before anything is recorded, so the handles are never used.
        with_plain = plain.record(cmd, target, {}, detail::MotionTargets{}, snap);
        with_plain_target = renderer().record(cmd, target, {}, detail::MotionTargets{}, snap);
    });
    EXPECT_EQ(with_plain, detail::RenderStatus::NoMotionOutputs);
    EXPECT_EQ(with_plain_target, detail::RenderStatus::NoMotionOutputs);
}

TEST(WithPrevious, MatchesInstancesByIndexWhenTheMeshAgrees) {
    detail::FrameSnapshot before;
    before.camera.view = glm::translate(glm::mat4(1.0f), {1.0f, 2.0f, 3.0f});
    detail::FrameSnapshot now;
    const glm::mat4 a = glm::translate(glm::mat4(1.0f), {1.0f, 0.0f, 0.0f});
    const glm::mat4 b = glm::translate(glm::mat4(1.0f), {0.0f, 1.0f, 0.0f});
    before.instances = {{0, a, std::nullopt, std::nullopt}, {1, a, std::nullopt, std::nullopt}};
    now.instances = {{0, b, std::nullopt, std::nullopt},
                     {2, b, std::nullopt, std::nullopt},
                     {1, b, std::nullopt, b}};
    const detail::FrameSnapshot s = detail::with_previous(now, before);
    ASSERT_TRUE(s.previous_camera.has_value());
    EXPECT_EQ(s.camera_before().view, before.camera.view);
    EXPECT_EQ(s.camera.view, now.camera.view);
    ASSERT_EQ(s.instances.size(), 3u);
    EXPECT_EQ(s.instances[0].transform_before(), a);      // same index, same mesh
    EXPECT_FALSE(s.instances[1].previous_transform);      // another mesh at that index
    EXPECT_FALSE(s.instances[2].previous_transform);      // nothing at that index before
    EXPECT_EQ(s.instances[2].transform_before(), b);      // none: the current one
    EXPECT_EQ(now.camera_before().view, now.camera.view); // nothing set: the current camera
}

} // namespace
} // namespace tandem::test
