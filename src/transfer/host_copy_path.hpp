// HostCopyPath: the last resort. Each device maps a host-visible buffer of its own: the worker's
// copy engine writes a band into the worker's (host-cached preferred, for fast CPU reads), the
// CPU copies the band into the primary's (coherent preferred; write-combined is fine for
// writes), and the primary's copy engine reads it. The memcpy is the host step, run on the
// bridge thread between the worker's signal and the primary's; non-coherent memory is
// invalidated/flushed around it. Threads and lifetime as TransferPathBackend.
#pragma once

#include "core/resources.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

class HostCopyPath final : public TransferPathBackend {
public:
    HostCopyPath(const Device& worker, const Device& primary, const StagingLayout& layout);

    [[nodiscard]] TransferPath kind() const noexcept override { return TransferPath::HostCopy; }
    void record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                            VkImage image, VkImageLayout layout) const override;
    [[nodiscard]] bool has_host_step() const noexcept override { return true; }
    [[nodiscard]] VkResult host_step(std::uint32_t slot, const Band& band) const noexcept override;
    void record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                             VkImage image) const override;

private:
    Buffer m_worker_buffer;
    Buffer m_primary_buffer;
};

} // namespace tandem::detail
