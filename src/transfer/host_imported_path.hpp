// HostImportedPath: one page-aligned host allocation imported into both devices with
// VK_EXT_external_memory_host (aligned to the larger minImportedHostPointerAlignment, size rounded
// up). The worker's copy engine writes a band into it; the primary's copy engine reads the band
// out of it. The CPU never touches the bytes: one pinned buffer, two DMA copies.
// Threads and lifetime as TransferPathBackend; the host allocation outlives both imports.
#pragma once

#include <cstddef>
#include <memory>

#include "core/handle.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

class HostImportedPath final : public TransferPathBackend {
public:
    HostImportedPath(const Device& worker, const Device& primary, const StagingLayout& layout);
    ~HostImportedPath() override;

    [[nodiscard]] TransferPath kind() const noexcept override { return TransferPath::HostImported; }
    void record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                            VkImage image, VkImageLayout layout) const override;
    void record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                             VkImage image) const override;

    [[nodiscard]] std::size_t alignment() const noexcept { return m_alignment; }
    [[nodiscard]] std::size_t host_bytes() const noexcept { return m_host_bytes; }

private:
    std::size_t m_alignment = 0;
    std::size_t m_host_bytes = 0;
    void* m_host = nullptr; // aligned_alloc'd; freed in the destructor after both imports
    Handle<VkBuffer> m_worker_buffer;
    Handle<VkDeviceMemory> m_worker_memory;
    Handle<VkBuffer> m_primary_buffer;
    Handle<VkDeviceMemory> m_primary_memory;
};

} // namespace tandem::detail
