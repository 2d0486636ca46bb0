#include "core/job_timer.hpp"

#include <cstring>
#include <utility>

namespace tandem::detail {

std::unique_ptr<JobTimer> JobTimer::create(const Device& device, std::uint32_t slots,
                                           const std::string& name) {
    auto pool = create_timestamp_pool(device, QueueRole::Main, 2 * slots, name + " job timestamps");
    if (!pool) {
        return nullptr;
    }
    BufferDesc desc;
    desc.size = k_slot_bytes * slots;
    desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    desc.preferred = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    desc.name = name + " job timestamp results";
    Buffer results = create_buffer(device, desc);
    return std::unique_ptr<JobTimer>(
        new JobTimer(device, slots, std::move(*pool), std::move(results)));
}

JobTimer::JobTimer(const Device& device, std::uint32_t slots, TimestampPool pool, Buffer results)
    : m_device(device), m_slots(slots), m_queries(std::move(pool.pool)),
      m_period_ns(pool.period_ns), m_mask(pool.mask), m_results(std::move(results)),
      m_pending(slots, 0) {}

void JobTimer::begin(VkCommandBuffer cmd, std::uint32_t slot) const noexcept {
    // Reset in the command buffer: the slot's previous commands completed before this one is
    // submitted (the slot ring re-records a slot only then), and reuse() read their pair first.
    vkCmdResetQueryPool(cmd, m_queries.get(), 2 * slot, 2);
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, m_queries.get(), 2 * slot);
}

void JobTimer::end(VkCommandBuffer cmd, std::uint32_t slot) const noexcept {
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, m_queries.get(), 2 * slot + 1);
    // The commands copy their own timestamps to host memory (waiting GPU-side for them), so no
    // thread has to ask the driver.
    const VkDeviceSize offset = k_slot_bytes * slot;
    vkCmdCopyQueryPoolResults(
        cmd, m_queries.get(), 2 * slot, 2, m_results.get(), offset, 2 * sizeof(std::uint64_t),
        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    buffer_barrier(cmd, m_results.get(), offset, k_slot_bytes, VK_PIPELINE_STAGE_2_COPY_BIT,
                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                   VK_ACCESS_2_HOST_READ_BIT);
}

std::optional<JobTime> JobTimer::take_locked(std::uint32_t slot) noexcept {
    const std::uint64_t generation = m_pending[slot];
    if (generation == 0) {
        return std::nullopt;
    }
    m_pending[slot] = 0;
    if (!m_results.host_coherent()) {
        invalidate_buffer(m_device, m_results);
    }
    std::uint64_t r[4]; // (value, availability) twice
    std::memcpy(r, static_cast<const std::byte*>(m_results.mapped) + k_slot_bytes * slot, sizeof r);
    if (r[1] == 0 || r[3] == 0) {
        return std::nullopt; // not written: the commands did not run to the end
    }
    const double ticks = static_cast<double>((r[2] - r[0]) & m_mask);
    return JobTime{generation, ticks * m_period_ns / 1000.0};
}

std::optional<JobTime> JobTimer::reuse(std::uint32_t slot) noexcept {
    if (slot >= m_slots) {
        return std::nullopt;
    }
    std::lock_guard lock(m_mutex);
    return take_locked(slot);
}

void JobTimer::submitted(std::uint32_t slot, std::uint64_t generation) noexcept {
    if (slot >= m_slots) {
        return;
    }
    std::lock_guard lock(m_mutex);
    m_pending[slot] = generation;
}

std::optional<JobTime> JobTimer::completed(std::uint32_t slot, std::uint64_t generation) noexcept {
    if (slot >= m_slots) {
        return std::nullopt;
    }
    std::lock_guard lock(m_mutex);
    // Already taken by reuse() when the slot was recorded again before this call came.
    if (m_pending[slot] != generation) {
        return std::nullopt;
    }
    return take_locked(slot);
}

} // namespace tandem::detail
