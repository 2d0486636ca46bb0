// SceneCaptureWorkload: SceneCapture (render/scene_capture.hpp) behind the internal Workload
// interface, timed by its own timestamps: what `tandem calibrate` measures a capture with,
// outside any runtime (a runtime's capture tasks run the public tandem::capture_workload and are
// timed by the runtime). The bytes it records from are an encoded FrameSnapshot
// (scene/snapshot_codec.hpp); each generation renders that snapshot into the slot's image. Per
// device the scene's assets are uploaded once (shared_mesh_cache) and shared by every capture
// there.
//
// GPU time: where the device's main queue has timestamps, each generation's commands are timed
// by a JobTimer (core/job_timer.hpp), as the runtime times a job's: completed() takes a finished
// generation's time, and record() takes a slot's previous one before reusing it if completed()
// has not; nobody waits for the device. SceneCaptureTimes, given to the workloads it should sum,
// sums the times of completed generations per device, so a caller can say how busy each device
// was.
//
// Threads: as Workload (construction at set-up may throw; record() and completed() never
// throw); SceneCaptureTimes may be read from any thread: it touches host memory only and never
// waits for a recording in progress.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/job_timer.hpp"
#include "render/scene_capture.hpp"
#include "scene/scene.hpp"
#include "workloads/workload.hpp"

namespace tandem::detail {

class SceneCaptureWorkload;

// GPU time of the scene-capture workloads given this object, per device
// (DeviceInfo::index).
class SceneCaptureTimes {
public:
    struct DeviceTime {
        double busy_ms = 0;            // sum over completed, timed generations
        std::uint64_t generations = 0; // generations timed
        bool timed = true;             // false: a workload there has no timestamps
    };
    // The sums of what completed so far (generations still in flight, or whose completion the
    // worker has not observed yet, are not counted). Host memory only.
    [[nodiscard]] std::map<std::uint32_t, DeviceTime> busy() const;

private:
    friend class SceneCaptureWorkload;
    void add(SceneCaptureWorkload* workload);
    void remove(SceneCaptureWorkload* workload);
    // Moves what `workload` completed since the last call into the sums; caller holds m_mutex.
    void collect_locked(SceneCaptureWorkload* workload) const;
    mutable std::mutex m_mutex;
    std::vector<SceneCaptureWorkload*> m_live;
    mutable std::map<std::uint32_t, DeviceTime> m_done; // collected so far
};

class SceneCaptureWorkload final : public Workload {
public:
    SceneCaptureWorkload(const Device& device, const WorkloadParams& params,
                         const std::shared_ptr<const SceneAssets>& assets,
                         std::shared_ptr<SceneCaptureTimes> times = nullptr);
    ~SceneCaptureWorkload() override;

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
    // Counts the generation's GPU time (when it is still the slot's pending one).
    void completed(std::uint32_t slot, std::uint64_t generation) noexcept override;

    [[nodiscard]] const SceneCapture& capture() const noexcept { return m_capture; }

    // Adds the GPU time of completed generations not yet collected; false when untimed.
    bool collect(double& busy_ms, std::uint64_t& generations) noexcept;
    [[nodiscard]] std::uint32_t device_index() const noexcept { return m_device_index; }

private:
    // Adds a job's time, when there is one, to the sums not yet collected.
    void count(const std::optional<JobTime>& time) noexcept;

    std::uint32_t m_device_index;
    VkExtent2D m_extent;
    std::uint32_t m_slots;
    SceneCapture m_capture;
    std::shared_ptr<SceneCaptureTimes> m_times;
    std::unique_ptr<JobTimer> m_timer; // null when the queue has no timestamps
    // The sums not yet collected; record()/completed() against collect() (any thread). Held
    // only to add or take numbers, never while recording.
    std::mutex m_sum_mutex;
    double m_busy_ms = 0;
    std::uint64_t m_generations = 0;
};

} // namespace tandem::detail
