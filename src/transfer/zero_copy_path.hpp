// ZeroCopyPath: for two logical devices on one GPU (equal device and driver UUIDs). Each slot's
// worker image and primary image are one allocation: the worker exports it as an opaque fd and
// the primary imports it, both images made with identical create info (VkExternalMemory-
// ImageCreateInfo included) and bound to it, as dedicated allocations where the driver asks for
// them. The worker renders straight into what the primary samples: nothing is copied. A
// transfer is one band, the whole image: the worker releases the image to
// VK_QUEUE_FAMILY_EXTERNAL, the primary acquires it from there; the link's timeline orders them.
//
// Layouts: the worker first moves its image to SHADER_READ_ONLY_OPTIMAL on its own queue, so the
// release and the acquire (which must name the same layouts) carry no transition, and the
// primary side needs no word of the layout the worker wrote in. The primary's image is moved to
// that layout once, when it is made, so its readers (and the validation layer, which tracks each
// VkImage apart and does not track layouts across an acquire from outside) find it there.
// Back to the worker: a slot's image is rewritten only after the primary's reads of it completed
// (the rule for every path), and the worker's writes discard the old contents (from UNDEFINED),
// so no ownership transfer back is recorded: the specification lets one be skipped when the
// contents need not survive it.
//
// Threads and lifetime as TransferPathBackend; the images create_images() returns own their
// memory (each side its own VkDeviceMemory over the shared allocation) and may outlive the path.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/resources.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

// What both images of a zero-copy slot are made with (TransferLink adds the callers' own usage),
// and so the usage the export check asks about.
inline constexpr VkImageUsageFlags k_zero_copy_usage =
    VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;

class ZeroCopyPath final : public TransferPathBackend {
public:
    // Throws Error when either device lacks opaque-fd external memory.
    ZeroCopyPath(const Device& worker, const Device& primary, const StagingLayout& layout);

    [[nodiscard]] TransferPath kind() const noexcept override { return TransferPath::ZeroCopy; }
    // Moves `image` (the worker's twin, in `layout`) to SHADER_READ_ONLY_OPTIMAL and releases it
    // to VK_QUEUE_FAMILY_EXTERNAL. One band: the whole image.
    void record_worker_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                            VkImage image, VkImageLayout layout) const override;
    // Acquires `image` (the primary's) from VK_QUEUE_FAMILY_EXTERNAL in SHADER_READ_ONLY_OPTIMAL.
    void record_primary_band(VkCommandBuffer cmd, std::uint32_t slot, const Band& band,
                             VkImage image) const override;

    // The worker image and the primary image of one slot, over one allocation, both created from
    // `desc` (its usage must serve both sides) with queue_families() for their sharing. Throws
    // Error when the driver cannot export and import such an image.
    // A pair whose images were destroyed is reused for the next slot of the same description
    // (core/image_cache.hpp: the driver keeps memory of every exported pair destroyed).
    [[nodiscard]] std::pair<Image, Image> create_images(const ImageDesc& desc) const;
    // True when `device`'s driver exports and imports optimal 2D images of `format` and `usage`
    // as opaque fds (the pair matrix checks RGBA8 only).
    [[nodiscard]] static bool exports(const Device& device, VkFormat format,
                                      VkImageUsageFlags usage);
    // The main and transfer families of both devices, sorted, each once (one physical device:
    // the indices mean the same on both). Two or more: concurrent sharing, so the barriers name
    // VK_QUEUE_FAMILY_IGNORED opposite VK_QUEUE_FAMILY_EXTERNAL; one: exclusive, that family.
    [[nodiscard]] const std::vector<std::uint32_t>& queue_families() const noexcept {
        return m_families;
    }

private:
    // Brings the primary's image of a pair to the layout hand-overs leave (discarding contents).
    void hand_over_layout(const Image& primary_image) const;

    std::vector<std::uint32_t> m_families;
    std::uint32_t m_worker_family = VK_QUEUE_FAMILY_IGNORED;
    std::uint32_t m_primary_family = VK_QUEUE_FAMILY_IGNORED;
};

} // namespace tandem::detail
