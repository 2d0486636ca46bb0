// HostImportedPath: one page-aligned host allocation imported into both devices with
// VK_EXT_external_memory_host (aligned to the larger minImportedHostPointerAlignment, size rounded
// up). The worker's copy engine writes a band into it; the primary's copy engine reads the band
// out of it. The CPU never touches the bytes: one pinned buffer, two DMA copies.
//
// In place (place_in_staging): where one side is a CPU device (lavapipe), whose memory is the
// host's, that side's slot images can be linear images bound to its import at each slot's
// staging (create_staging_image), so the other side's copy is the whole transfer. Read in place
// (the primary's side): the worker's copy writes the primary's image, whose side copies
// nothing and only makes the host's writes visible to its reads. Written in place (the
// worker's side): the worker's work writes the staging itself, and its side only hands those
// writes to the host for the primary's copy. Such images are used in GENERAL, the layout in
// which a linear image's bytes are the memory's whoever wrote them. One band, since nothing on
// the side in place would overlap a next one.
//
// Threads and lifetime as TransferPathBackend; the host allocation outlives both imports. Slot
// images made by create_staging_image may outlive the path (freeing memory that images are
// bound to is allowed), but must not be used once it is destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

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
    // Switches `side`'s slot images to the staging itself, when `image` (probe_in_place on that
    // side's device) fits this path's staging: its rows at the layout's pitch, one band, each
    // slot's start aligned for it and room for it, and a memory type that side's import has.
    // False (nothing changed, `why` says what does not fit) otherwise.
    [[nodiscard]] bool place_in_staging(StagingSide side, const InPlaceImage& image,
                                        std::string& why);
    [[nodiscard]] bool worker_writes_staging() const noexcept override { return m_in_place[0]; }
    [[nodiscard]] bool primary_reads_staging() const noexcept override { return m_in_place[1]; }
    // Once place_in_staging(side): `slot`'s image of that side, linear, bound to its import at
    // the slot's staging, with a view; the primary's already in GENERAL (one blocking submit on
    // its main queue), the worker's UNDEFINED until its work writes it. Throws Error.
    [[nodiscard]] Image create_staging_image(StagingSide side, std::uint32_t slot,
                                             const ImageDesc& desc) const;

    [[nodiscard]] std::size_t alignment() const noexcept { return m_alignment; }
    [[nodiscard]] std::size_t host_bytes() const noexcept { return m_host_bytes; }

private:
    // Why `image` cannot be `side`'s images in this staging; empty when it can.
    [[nodiscard]] std::string misfit(StagingSide side, const InPlaceImage& image) const;

    std::size_t m_alignment = 0;
    std::size_t m_host_bytes = 0;
    void* m_host = nullptr; // aligned_alloc'd; freed in the destructor after both imports
    Handle<VkBuffer> m_worker_buffer;
    Handle<VkDeviceMemory> m_worker_memory;
    Handle<VkBuffer> m_primary_buffer;
    Handle<VkDeviceMemory> m_primary_memory;
    std::uint32_t m_memory_types[2] = {0, 0}; // the imports' types, worker's and primary's
    bool m_in_place[2] = {false, false};      // the worker's side, the primary's
};

} // namespace tandem::detail
