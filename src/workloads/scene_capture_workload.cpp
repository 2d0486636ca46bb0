#include "workloads/scene_capture_workload.hpp"

#include <algorithm>
#include <utility>

namespace tandem::detail {

void SceneCaptureTimes::collect_locked(SceneCaptureWorkload* w) const {
    double busy_ms = 0;
    std::uint64_t generations = 0;
    const bool timed = w->collect(busy_ms, generations);
    DeviceTime& d = m_done[w->device_index()];
    d.busy_ms += busy_ms;
    d.generations += generations;
    d.timed = timed && d.timed;
}

std::map<std::uint32_t, SceneCaptureTimes::DeviceTime> SceneCaptureTimes::busy() const {
    std::lock_guard lock(m_mutex);
    for (SceneCaptureWorkload* w : m_live) {
        collect_locked(w);
    }
    return m_done;
}

void SceneCaptureTimes::add(SceneCaptureWorkload* workload) {
    std::lock_guard lock(m_mutex);
    m_live.push_back(workload);
}

void SceneCaptureTimes::remove(SceneCaptureWorkload* workload) {
    std::lock_guard lock(m_mutex);
    collect_locked(workload);
    m_live.erase(std::remove(m_live.begin(), m_live.end(), workload), m_live.end());
}

SceneCaptureWorkload::SceneCaptureWorkload(const Device& device, const WorkloadParams& params,
                                           const std::shared_ptr<const SceneAssets>& assets,
                                           std::shared_ptr<SceneCaptureTimes> times)
    : m_device_index(device.info().index), m_extent{params.width, params.height},
      m_slots(params.slots),
      m_capture(shared_mesh_cache(device, assets), params.format, m_extent, params.slots),
      m_times(std::move(times)),
      m_timer(JobTimer::create(device, params.slots, "scene capture " + params.task_name)) {
    if (m_times) {
        m_times->add(this);
    }
}

SceneCaptureWorkload::~SceneCaptureWorkload() {
    // The runtime destroys a workload only after its commands completed: count what is left.
    if (m_timer) {
        for (std::uint32_t slot = 0; slot < m_slots; ++slot) {
            count(m_timer->reuse(slot));
        }
    }
    if (m_times) {
        m_times->remove(this);
    }
}

void SceneCaptureWorkload::count(const std::optional<JobTime>& time) noexcept {
    if (time) {
        std::lock_guard lock(m_sum_mutex);
        m_busy_ms += time->us / 1000.0;
        ++m_generations;
    }
}

void SceneCaptureWorkload::completed(std::uint32_t slot, std::uint64_t generation) noexcept {
    if (m_timer) {
        count(m_timer->completed(slot, generation));
    }
}

bool SceneCaptureWorkload::collect(double& busy_ms, std::uint64_t& generations) noexcept {
    if (!m_timer) {
        return false;
    }
    std::lock_guard lock(m_sum_mutex);
    busy_ms += m_busy_ms;
    generations += m_generations;
    m_busy_ms = 0;
    m_generations = 0;
    return true;
}

VkResult SceneCaptureWorkload::record(VkCommandBuffer cmd, std::uint32_t slot,
                                      const WorkloadTarget& target, std::uint64_t generation,
                                      std::span<const std::byte> snapshot) noexcept {
    if (slot >= m_slots || target.width != m_extent.width || target.height != m_extent.height) {
        return VK_ERROR_FORMAT_NOT_SUPPORTED;
    }
    if (m_timer) {
        // The slot's previous commands completed (it is recorded again only then): count them
        // now if completed() has not, before the queries are reset.
        count(m_timer->reuse(slot));
        m_timer->begin(cmd, slot);
    }
    // SceneCapture discards the old contents (the target's layout does not matter) and leaves
    // the image as output() says.
    const VkResult r = m_capture.record(cmd, slot, target.image, target.view, snapshot);
    if (m_timer && r == VK_SUCCESS) {
        m_timer->end(cmd, slot);
        m_timer->submitted(slot, generation);
    }
    return r;
}

} // namespace tandem::detail
