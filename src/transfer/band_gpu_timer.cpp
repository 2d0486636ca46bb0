#include "transfer/band_gpu_timer.hpp"

#include <bit>

#include "transfer/link_copy_queue.hpp"

namespace tandem::detail {

std::unique_ptr<BandGpuTimer> BandGpuTimer::create(const Device& worker, const Device& primary,
                                                   std::uint32_t slots, std::uint32_t bands,
                                                   const std::string& name) {
    if (!worker.has_host_timed_queries() || !primary.has_host_timed_queries()) {
        return nullptr;
    }
    const std::uint32_t queries = 2 * bands * slots;
    auto worker_pool = create_timestamp_pool(worker, copy_queue_role(worker), queries,
                                             name + " worker band times");
    auto primary_pool = create_timestamp_pool(primary, copy_queue_role(primary), queries,
                                              name + " primary band times");
    if (!worker_pool || !primary_pool) {
        return nullptr;
    }
    return std::unique_ptr<BandGpuTimer>(new BandGpuTimer(
        worker, primary, bands, std::move(*worker_pool), std::move(*primary_pool)));
}

BandGpuTimer::BandGpuTimer(const Device& worker, const Device& primary, std::uint32_t bands,
                           TimestampPool worker_pool, TimestampPool primary_pool)
    : m_worker(&worker), m_primary(&primary), m_bands(bands), m_worker_pool(std::move(worker_pool)),
      m_primary_pool(std::move(primary_pool)) {}

void BandGpuTimer::reset(std::uint32_t slot) const noexcept {
    vkResetQueryPool(m_worker->handle(), m_worker_pool.pool.get(), first_query(slot), 2 * m_bands);
    vkResetQueryPool(m_primary->handle(), m_primary_pool.pool.get(), first_query(slot),
                     2 * m_bands);
}

void BandGpuTimer::write(VkCommandBuffer cmd, Side side, std::uint32_t slot, std::uint32_t band,
                         bool end) const noexcept {
    const TimestampPool& pool = side == Side::Worker ? m_worker_pool : m_primary_pool;
    vkCmdWriteTimestamp2(
        cmd, end ? VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT : VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT,
        pool.pool.get(), first_query(slot) + 2 * band + (end ? 1 : 0));
}

std::optional<std::vector<BandGpuTimes>> BandGpuTimer::read(std::uint32_t slot) const {
    std::vector<std::uint64_t> worker(2 * m_bands);
    std::vector<std::uint64_t> primary(2 * m_bands);
    const auto read = [&](const Device& device, VkQueryPool pool, std::vector<std::uint64_t>& out) {
        return vkGetQueryPoolResults(device.handle(), pool, first_query(slot), 2 * m_bands,
                                     out.size() * sizeof(std::uint64_t), out.data(),
                                     sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT) == VK_SUCCESS;
    };
    if (!read(*m_worker, m_worker_pool.pool.get(), worker) ||
        !read(*m_primary, m_primary_pool.pool.get(), primary)) {
        return std::nullopt;
    }
    const auto on_worker = m_worker->calibrate_timestamps();
    const auto on_primary = m_primary->calibrate_timestamps();
    if (!on_worker || !on_primary) {
        return std::nullopt;
    }
    using Clock = std::chrono::steady_clock;
    const auto worker_bits = static_cast<std::uint32_t>(std::popcount(m_worker_pool.mask));
    const auto primary_bits = static_cast<std::uint32_t>(std::popcount(m_primary_pool.mask));
    const auto at = [](const TimestampCalibration& c, std::uint64_t ticks, std::uint32_t bits) {
        return Clock::time_point(std::chrono::nanoseconds(c.host_ns_of(ticks, bits)));
    };
    std::vector<BandGpuTimes> times(m_bands);
    for (std::uint32_t b = 0; b < m_bands; ++b) {
        times[b].worker_begin = at(*on_worker, worker[2 * b], worker_bits);
        times[b].worker_end = at(*on_worker, worker[2 * b + 1], worker_bits);
        times[b].primary_begin = at(*on_primary, primary[2 * b], primary_bits);
        times[b].primary_end = at(*on_primary, primary[2 * b + 1], primary_bits);
    }
    return times;
}

} // namespace tandem::detail
