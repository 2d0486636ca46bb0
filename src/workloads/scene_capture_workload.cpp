#include "workloads/scene_capture_workload.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/vk_check.hpp"

namespace tandem::detail {

void SceneCaptureTimes::collect_locked(SceneCaptureWorkload* w) const {
    double busy_ms = 0;
    std::uint64_t generations = 0;
    double first_ms = 0;
    std::uint64_t firsts = 0;
    const bool timed = w->collect(busy_ms, generations, first_ms, firsts);
    for (DeviceTime* d :
         {&m_done[w->device_index()], &m_done_by_task[{w->task_name(), w->device_index()}]}) {
        d->busy_ms += busy_ms;
        d->generations += generations;
        d->first_ms += first_ms;
        d->firsts += firsts;
        d->timed = timed && d->timed;
    }
}

std::map<std::uint32_t, SceneCaptureTimes::DeviceTime> SceneCaptureTimes::busy() const {
    std::lock_guard lock(m_mutex);
    for (SceneCaptureWorkload* w : m_live) {
        collect_locked(w);
    }
    return m_done;
}

std::map<std::pair<std::string, std::uint32_t>, SceneCaptureTimes::DeviceTime>
SceneCaptureTimes::busy_by_task() const {
    std::lock_guard lock(m_mutex);
    for (SceneCaptureWorkload* w : m_live) {
        collect_locked(w);
    }
    return m_done_by_task;
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
    : m_device(device), m_device_index(device.info().index),
      m_task_name(params.task_name), m_extent{params.width, params.height}, m_slots(params.slots),
      m_capture(shared_mesh_cache(device, assets), params.format, m_extent, params.slots),
      m_times(std::move(times)), m_pending(params.slots, 0) {
    if (auto ts = create_timestamp_pool(device, QueueRole::Main, 2 * params.slots,
                                        "scene capture timestamps " + params.task_name)) {
        BufferDesc desc;
        desc.size = k_result_bytes * params.slots;
        desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        desc.preferred = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        desc.name = "scene capture timestamp results " + params.task_name;
        m_results = create_buffer(device, desc);
        m_queries = std::move(ts->pool);
        m_period_ns = ts->period_ns;
        m_mask = ts->mask;
    }
    if (m_times) {
        m_times->add(this);
    }
}

SceneCaptureWorkload::~SceneCaptureWorkload() {
    // The runtime destroys a workload only after its commands completed: count what is left.
    if (m_queries) {
        std::lock_guard lock(m_slot_mutex);
        for (std::uint32_t slot = 0; slot < m_slots; ++slot) {
            count_slot(slot);
        }
    }
    if (m_times) {
        m_times->remove(this);
    }
}

void SceneCaptureWorkload::count_slot(std::uint32_t slot) noexcept {
    if (m_pending[slot] == 0) {
        return;
    }
    m_pending[slot] = 0;
    invalidate_buffer(m_device, m_results);
    std::uint64_t r[4]; // (value, availability) twice
    std::memcpy(r, static_cast<const std::byte*>(m_results.mapped) + k_result_bytes * slot,
                sizeof r);
    if (r[1] == 0 || r[3] == 0) {
        return; // not written (the commands did not run to the end)
    }
    const double ms = static_cast<double>((r[2] - r[0]) & m_mask) * m_period_ns * 1e-6;
    std::lock_guard lock(m_sum_mutex);
    m_busy_ms += ms;
    ++m_generations;
    if (!m_first_counted) {
        m_first_counted = true;
        m_first_ms = ms;
    }
}

void SceneCaptureWorkload::completed(std::uint32_t slot, std::uint64_t generation) noexcept {
    if (!m_queries || slot >= m_slots) {
        return;
    }
    std::lock_guard lock(m_slot_mutex);
    // Already counted by record() when the slot was reused before this call came.
    if (m_pending[slot] == generation) {
        count_slot(slot);
    }
}

bool SceneCaptureWorkload::collect(double& busy_ms, std::uint64_t& generations, double& first_ms,
                                   std::uint64_t& firsts) noexcept {
    if (!m_queries) {
        return false;
    }
    std::lock_guard lock(m_sum_mutex);
    busy_ms += m_busy_ms;
    generations += m_generations;
    m_busy_ms = 0;
    m_generations = 0;
    if (m_first_counted && !m_first_collected) {
        m_first_collected = true;
        first_ms += m_first_ms;
        ++firsts;
    }
    return true;
}

VkResult SceneCaptureWorkload::record(VkCommandBuffer cmd, std::uint32_t slot,
                                      const WorkloadTarget& target, std::uint64_t generation,
                                      std::span<const std::byte> snapshot) noexcept {
    if (slot >= m_slots || target.width != m_extent.width || target.height != m_extent.height) {
        return VK_ERROR_FORMAT_NOT_SUPPORTED;
    }
    if (m_queries) {
        std::lock_guard lock(m_slot_mutex);
        // The slot's previous commands completed (the runtime re-records a slot only then):
        // count them now if completed() has not, before the queries are reset.
        count_slot(slot);
        vkCmdResetQueryPool(cmd, m_queries.get(), 2 * slot, 2);
        vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, m_queries.get(), 2 * slot);
    }
    // SceneCapture discards the old contents (the target's layout does not matter) and leaves
    // the image as output() says.
    const VkResult r = m_capture.record(cmd, slot, target.image, target.view, snapshot);
    if (m_queries && r == VK_SUCCESS) {
        vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, m_queries.get(),
                             2 * slot + 1);
        // The commands copy their own timestamps to host memory, so nobody has to ask the
        // driver for them.
        const VkDeviceSize offset = k_result_bytes * slot;
        vkCmdCopyQueryPoolResults(cmd, m_queries.get(), 2 * slot, 2, m_results.buffer.get(), offset,
                                  2 * sizeof(std::uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT |
                                      VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
        buffer_barrier(cmd, m_results.buffer.get(), offset, k_result_bytes,
                       VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
        std::lock_guard lock(m_slot_mutex);
        m_pending[slot] = generation;
    }
    return r;
}

} // namespace tandem::detail
