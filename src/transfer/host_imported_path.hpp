// HostImportedPath: one page-aligned host allocation imported into both devices with
// VK_EXT_external_memory_host (aligned to the larger minImportedHostPointerAlignment, size rounded
// up). The worker's copy engine writes a band into it; the primary's copy engine reads the band
// out of it. The CPU never touches the bytes: one pinned buffer, two DMA copies.
//
// Read in place (read_in_place): where the primary is a CPU device (lavapipe), whose memory is
// the host's, its slot images are linear images bound to the import at each slot's staging
// (create_primary_image), so the worker's copy into staging is the whole transfer: the
// primary's side copies nothing, only makes the host's writes visible to its reads, and the
// images stay in GENERAL (the layout in which a linear image's bytes are the memory's, whoever
// wrote them). One band, since nothing on the primary's side would overlap a next one.
//
// Threads and lifetime as TransferPathBackend; the host allocation outlives both imports. Slot
// images made by create_primary_image may outlive the path (freeing memory that images are
// bound to is allowed), but must not be used once it is destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "core/handle.hpp"
#include "core/resources.hpp"
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

    // Whether `device` can read an image of `desc` in place (a linear image in imported host
    // memory, with desc's usage, sampled and copied both ways), and what that image needs;
    // nullopt when the driver refuses it. Never throws.
    [[nodiscard]] static std::optional<InPlaceImage> probe_in_place(const Device& device,
                                                                    const ImageDesc& desc) noexcept;
    // Switches the primary's side to reading in place, when `image` (probe_in_place on the
    // primary) fits this path's staging: its rows at the layout's pitch, one band, each slot's
    // start aligned for it, and a memory type the import has. False (nothing changed, `why`
    // says what does not fit) otherwise.
    [[nodiscard]] bool read_in_place(const InPlaceImage& image, std::string& why);
    [[nodiscard]] bool primary_reads_staging() const noexcept override { return m_in_place; }
    // With primary_reads_staging(): `slot`'s primary image, linear, bound to the import at the
    // slot's staging, in GENERAL, with a view. Throws Error.
    [[nodiscard]] Image create_primary_image(std::uint32_t slot, const ImageDesc& desc) const;

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
    std::uint32_t m_primary_memory_type = 0;
    bool m_in_place = false;
};

} // namespace tandem::detail
