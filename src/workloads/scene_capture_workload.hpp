// SceneCaptureWorkload: SceneCapture (render/scene_capture.hpp) behind the internal Workload
// interface, timed by its own timestamps: what `tandem calibrate` measures a capture with,
// outside any runtime (a runtime's capture tasks run the public tandem::capture_workload and are
// timed by the runtime). The bytes it records from are an encoded FrameSnapshot
// (scene/snapshot_codec.hpp); each generation renders that snapshot into the slot's image. Per
// device the scene's assets are uploaded once (shared_mesh_cache) and shared by every capture
// there.
//
// GPU time: where the device's main queue has timestamps, each generation's commands are timed
// (two timestamps per slot, copied into a host-visible buffer by the commands themselves);
// completed() reads a finished generation's pair from that buffer, and record() reads a slot's
// previous pair before reusing it if completed() has not. No thread ever calls
// vkGetQueryPoolResults (some drivers wait for the device there), so reading the sums costs the
// reader nothing on the device. SceneCaptureTimes, given to the workloads it should sum, sums
// the times of completed generations per device, so a caller can say how busy each device was.
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
#include <string>
#include <utility>
#include <vector>

#include "core/handle.hpp"
#include "core/resources.hpp"
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
        // The first timed generation of each workload (one per registration on the device) is
        // also summed apart: it pays for pipeline creation and shader compilation on first use
        // (lavapipe compiles its shaders then), which later updates do not.
        double first_ms = 0;
        std::uint64_t firsts = 0;
        // GPU time of one update leaving the first ones out; nullopt until there is such an
        // update (or when untimed).
        [[nodiscard]] std::optional<double> steady_ms() const noexcept {
            if (!timed || generations <= firsts) {
                return std::nullopt;
            }
            return (busy_ms - first_ms) / static_cast<double>(generations - firsts);
        }
        // What was added since `earlier`, a snapshot of the same sums.
        [[nodiscard]] DeviceTime since(const DeviceTime& earlier) const noexcept {
            return {busy_ms - earlier.busy_ms, generations - earlier.generations, timed,
                    first_ms - earlier.first_ms, firsts - earlier.firsts};
        }
    };
    // The sums of what completed so far (generations still in flight, or whose completion the
    // worker has not observed yet, are not counted). Host memory only.
    [[nodiscard]] std::map<std::uint32_t, DeviceTime> busy() const;
    // The same sums per (task name, device): what the scheduler's cost model observes.
    [[nodiscard]] std::map<std::pair<std::string, std::uint32_t>, DeviceTime> busy_by_task() const;

private:
    friend class SceneCaptureWorkload;
    void add(SceneCaptureWorkload* workload);
    void remove(SceneCaptureWorkload* workload);
    // Moves what `workload` completed since the last call into both sums; caller holds m_mutex.
    void collect_locked(SceneCaptureWorkload* workload) const;
    mutable std::mutex m_mutex;
    std::vector<SceneCaptureWorkload*> m_live;
    mutable std::map<std::uint32_t, DeviceTime> m_done; // collected so far
    mutable std::map<std::pair<std::string, std::uint32_t>, DeviceTime> m_done_by_task;
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

    // Adds the GPU time of completed generations not yet collected (and, once, the first
    // generation's time to `first_ms` and 1 to `firsts`); false when untimed.
    bool collect(double& busy_ms, std::uint64_t& generations, double& first_ms,
                 std::uint64_t& firsts) noexcept;
    [[nodiscard]] std::uint32_t device_index() const noexcept { return m_device_index; }
    [[nodiscard]] const std::string& task_name() const noexcept { return m_task_name; }

private:
    const Device& m_device;
    std::uint32_t m_device_index;
    std::string m_task_name;
    VkExtent2D m_extent;
    std::uint32_t m_slots;
    SceneCapture m_capture;
    std::shared_ptr<SceneCaptureTimes> m_times;
    static constexpr VkDeviceSize k_result_bytes = 4 * sizeof(std::uint64_t);
    Handle<VkQueryPool> m_queries; // two per slot; null when the queue has no timestamps
    // Per slot: (start, start available, end, end available), written by the slot's commands.
    Buffer m_results;
    double m_period_ns = 0;
    std::uint64_t m_mask = 0;
    // record() (job thread) against completed() (watcher thread): which generation's
    // timestamps each slot holds and has not counted (0: none).
    std::mutex m_slot_mutex;
    std::vector<std::uint64_t> m_pending;
    // The sums not yet collected; completed()/record() against collect() (any thread). Held
    // only to add or take numbers, never while recording.
    std::mutex m_sum_mutex;
    double m_busy_ms = 0;
    std::uint64_t m_generations = 0;
    bool m_first_counted = false;   // the first generation was timed
    bool m_first_collected = false; // and handed to collect()
    double m_first_ms = 0;
    // Reads the slot's pair from m_results and adds it to the sums; caller holds m_slot_mutex.
    void count_slot(std::uint32_t slot) noexcept;
};

} // namespace tandem::detail
