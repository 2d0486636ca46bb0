// BandGpuTimer: a timestamp before and after each band's copy on both devices of a link, for
// placing every copy on the host's timeline (TransferObserver::times_bands_on_gpus). It owns one
// query pool per device on the copy queue's family, two queries per band and slot, reset from the
// host when a slot is recorded again, and reads a slot's queries back through
// Device::calibrate_timestamps().
//
// Threads: the link's submit() thread (reset, write, read). Lifetime: destroy after both devices
// finished the transfers that wrote its queries (the link drains first).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/resources.hpp"
#include "transfer/transfer_observer.hpp"

namespace tandem::detail {

class BandGpuTimer {
public:
    // Null where either device cannot time queries on the host's clock or either copy queue's
    // family writes no timestamps.
    [[nodiscard]] static std::unique_ptr<BandGpuTimer>
    create(const Device& worker, const Device& primary, std::uint32_t slots, std::uint32_t bands,
           const std::string& name);

    enum class Side { Worker, Primary };
    // Before a slot is recorded again (its previous transfer completed): its queries reset.
    void reset(std::uint32_t slot) const noexcept;
    // The timestamp before (`end` false) or after a band's copy, on `side`'s command buffer.
    void write(VkCommandBuffer cmd, Side side, std::uint32_t slot, std::uint32_t band,
               bool end) const noexcept;
    // Every band of `slot`'s last transfer, which must have completed on both devices; nullopt
    // when reading or calibrating fails. Some drivers idle the device to read queries.
    [[nodiscard]] std::optional<std::vector<BandGpuTimes>> read(std::uint32_t slot) const;

private:
    BandGpuTimer(const Device& worker, const Device& primary, std::uint32_t bands,
                 TimestampPool worker_pool, TimestampPool primary_pool);
    [[nodiscard]] std::uint32_t first_query(std::uint32_t slot) const noexcept {
        return 2 * slot * m_bands;
    }

    const Device* m_worker;
    const Device* m_primary;
    std::uint32_t m_bands;
    TimestampPool m_worker_pool;
    TimestampPool m_primary_pool;
};

} // namespace tandem::detail
