// SameDevicePath: worker and primary are queues of one VkDevice, so nothing crosses a device
// boundary. Images shared by the worker's and primary's queue families are created with
// concurrent sharing (TransferLink's image descs), so no ownership transfer is recorded; when the
// worker image is the primary image there is no copy at all, only the layout change the caller
// records; when they differ, one vkCmdCopyImage per band. No staging memory.
// Threads and lifetime as TransferPathBackend.
#pragma once

#include "transfer/transfer_path.hpp"

namespace tandem::detail {

class SameDevicePath final : public TransferPathBackend {
public:
    // Throws Error when `worker` and `primary` are different devices.
    SameDevicePath(const Device& worker, const Device& primary, const StagingLayout& layout);

    [[nodiscard]] TransferPath kind() const noexcept override { return TransferPath::SameDevice; }
    // No staging: both sides are empty. Use record_image_copy.
    void record_worker_band(VkCommandBuffer, std::uint32_t, const Band&, VkImage,
                            VkImageLayout) const override {}
    void record_primary_band(VkCommandBuffer, std::uint32_t, const Band&, VkImage) const override {}

    // Copies `band` of `source` (TRANSFER_SRC_OPTIMAL or GENERAL) into `destination`
    // (TRANSFER_DST_OPTIMAL); records nothing when they are the same image.
    void record_image_copy(VkCommandBuffer cmd, const Band& band, VkImage source,
                           VkImageLayout source_layout, VkImage destination) const;
};

} // namespace tandem::detail
