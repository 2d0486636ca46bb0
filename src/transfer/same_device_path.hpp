// SameDevicePath: worker and primary are queues of one VkDevice, so nothing crosses a device
// boundary. The whole same-device transfer is recorded here (record_transfer), on one command
// buffer of the device's copy queue: the worker image into a copy source, the primary image
// (old contents discarded) into a copy destination, one vkCmdCopyImage and the primary image into
// SHADER_READ_ONLY_OPTIMAL; when the worker image is the primary image, only that last layout
// change. Images are created with concurrent sharing by the main and copy families (the link's
// image descs), so no ownership transfer is recorded. No staging memory, no bands.
// Threads and lifetime as TransferPathBackend.
#pragma once

#include "transfer/transfer_path.hpp"

namespace tandem::detail {

class SameDevicePath final : public TransferPathBackend {
public:
    // Throws Error when `worker` and `primary` are different devices.
    SameDevicePath(const Device& worker, const Device& primary, const StagingLayout& layout);

    [[nodiscard]] TransferPath kind() const noexcept override { return TransferPath::SameDevice; }
    // No staging: both sides are empty. The band recorder calls record_transfer instead.
    void record_worker_band(VkCommandBuffer, std::uint32_t, const Band&, VkImage,
                            VkImageLayout) const override {}
    void record_primary_band(VkCommandBuffer, std::uint32_t, const Band&, VkImage) const override {}

    // One transfer of `source` (in `source_layout`, written by earlier work on any queue of the
    // device, ordered by the caller's semaphore) into `destination`, which ends in
    // SHADER_READ_ONLY_OPTIMAL, as `source` does when they are one image.
    void record_transfer(VkCommandBuffer cmd, VkImage source, VkImageLayout source_layout,
                         VkImage destination) const;
    // The layout `source` is in after record_transfer.
    [[nodiscard]] static VkImageLayout source_layout_after(VkImageLayout source_layout,
                                                           bool same_image) noexcept;
};

} // namespace tandem::detail
