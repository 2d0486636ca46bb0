// SceneCaptureWorkload: the "scene-capture" workload, SceneCapture (render/scene_capture.hpp)
// behind the Workload interface. The bytes submitted to the task are an encoded FrameSnapshot
// (scene/snapshot_codec.hpp); each generation renders that snapshot into the slot's image.
// Per device the scene's assets are uploaded once (shared_mesh_cache) and shared by every
// scene-capture task placed there.
//
// The workload needs the scene's assets, which a factory (Device, WorkloadParams) is not given:
// register_scene_capture_workload(assets) registers the factory with the assets captured, before
// the tasks that use it are registered with the runtime. Registering again replaces the assets
// for tasks registered afterwards; existing workloads keep theirs.
//
// Threads: as Workload (construction at set-up may throw; record() never throws).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "render/scene_capture.hpp"
#include "scene/scene.hpp"
#include "workloads/workload.hpp"

namespace tandem::detail {

inline constexpr const char* k_scene_capture_workload = "scene-capture";

class SceneCaptureWorkload final : public Workload {
public:
    SceneCaptureWorkload(const Device& device, const WorkloadParams& params,
                         const std::shared_ptr<const SceneAssets>& assets);

    [[nodiscard]] VkImageUsageFlags target_usage() const noexcept override {
        return SceneCapture::k_target_usage;
    }
    [[nodiscard]] WorkloadOutput output() const noexcept override {
        return {SceneCapture::k_output_layout, SceneCapture::k_output_stage,
                SceneCapture::k_output_access};
    }
    // VK_ERROR_FORMAT_NOT_SUPPORTED when the target is not the registered size or the bytes
    // are not a snapshot; otherwise what SceneCapture::record returns.
    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot,
                                  const WorkloadTarget& target, std::uint64_t generation,
                                  std::span<const std::byte> snapshot) noexcept override;

    [[nodiscard]] const SceneCapture& capture() const noexcept { return m_capture; }

private:
    VkExtent2D m_extent;
    std::uint32_t m_slots;
    SceneCapture m_capture;
};

// Registers "scene-capture" for the scene whose assets are `assets`. Thread-safe.
void register_scene_capture_workload(std::shared_ptr<const SceneAssets> assets);

} // namespace tandem::detail
