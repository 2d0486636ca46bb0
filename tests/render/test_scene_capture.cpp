// SceneCapture, the worker-side form of the renderer: an encoded snapshot recorded into a slot
// image on one device equals the primary's render of the same snapshot pixel for pixel, the
// device's mesh cache is shared by every capture there, and bytes that are not a snapshot are
// refused without recording.
#include <gtest/gtest.h>

#include "core/resources.hpp"
#include "render/headless.hpp"
#include "render/scene_capture.hpp"
#include "scene/run_inputs.hpp"
#include "scene/snapshot_codec.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

class SceneCaptureTest : public VulkanTest {};

TEST_F(SceneCaptureTest, WorkerSlotEqualsPrimaryRender) {
    ASSERT_GE(adapters().size(), 2u);
    detail::RunInputs in = detail::prepare_run({});
    in.scene.animate(3.5);
    detail::Device& primary = open(0, {true, "primary"});
    detail::Device& worker = open(1, {true, "worker"});
    const auto assets = in.scene.shared_assets();

    const std::size_t task = 0; // security
    const VkExtent2D extent{80, 60};
    in.prepared[task].spec.width = extent.width;
    in.prepared[task].spec.height = extent.height;
    const detail::FrameSnapshot snap = detail::task_snapshot(in, task);

    auto cache = detail::shared_mesh_cache(worker, assets);
    const auto uploads = cache->upload_count();
    detail::SceneCapture capture(cache, VK_FORMAT_R8G8B8A8_UNORM, extent, 3);
    detail::SceneCapture second(detail::shared_mesh_cache(worker, assets), VK_FORMAT_R8G8B8A8_UNORM,
                                extent, 3);
    EXPECT_EQ(&capture.cache(), &second.cache()) << "one cache per device and scene";
    EXPECT_EQ(cache->upload_count(), uploads);

    detail::Image slot_image = detail::create_image(
        worker, {extent.width,
                 extent.height,
                 VK_FORMAT_R8G8B8A8_UNORM,
                 detail::SceneCapture::k_target_usage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                 "slot image",
                 {}});
    const auto bytes = detail::encode_snapshot(snap);
    VkResult result = VK_ERROR_UNKNOWN;
    detail::submit_and_wait(worker, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        result = capture.record(cmd, 2, slot_image.get(), slot_image.view.get(), bytes);
    });
    ASSERT_EQ(result, VK_SUCCESS) << detail::to_string(capture.last_status());
    const auto from_worker = detail::read_back_rgba8(worker, slot_image.get(), extent,
                                                     detail::SceneCapture::k_output_layout);

    detail::MeshCache primary_cache(primary);
    primary_cache.upload(assets);
    detail::Renderer renderer(primary_cache, VK_FORMAT_R8G8B8A8_UNORM);
    detail::HeadlessView view(renderer, extent);
    EXPECT_TRUE(view.render(snap) == from_worker) << "worker capture differs from the primary";

    // Bytes that are not a snapshot: refused, nothing recorded.
    const std::vector<std::byte> junk(17, std::byte{0x42});
    detail::submit_and_wait(worker, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        result = capture.record(cmd, 0, slot_image.get(), slot_image.view.get(), junk);
    });
    EXPECT_EQ(result, VK_ERROR_FORMAT_NOT_SUPPORTED);
}

} // namespace
} // namespace tandem::test
