#include "transfer/transfer_path.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/cuda_peer_path.hpp"
#include "transfer/host_copy_path.hpp"
#include "transfer/host_imported_path.hpp"
#include "transfer/same_device_path.hpp"
#include "transfer/shared_memory_path.hpp"
#include "transfer/zero_copy_path.hpp"

namespace tandem::detail {

Band StagingLayout::band(std::uint32_t index) const noexcept {
    Band b;
    b.index = index;
    b.first_row = band_first_rows[index];
    b.rows = band_first_rows[index + 1] - b.first_row;
    b.offset = band_offsets[index];
    b.bytes = row_pitch * b.rows;
    return b;
}

namespace {

// Each band at least 1 row, adding up to the height (at most 16384, checked before): so at most
// 16384 bands, too.
void check_band_heights(std::span<const std::uint32_t> heights, std::uint32_t height) {
    const auto fix = "Give band heights of at least 1 row that add up to the image's height";
    std::uint64_t sum = 0;
    for (const std::uint32_t rows : heights) {
        if (rows == 0) {
            throw Error(ErrorCategory::InvalidArgument, "A band of 0 rows was asked for", fix);
        }
        sum += rows;
    }
    if (sum != height) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Band heights add up to " + std::to_string(sum) + " rows, not the image's " +
                        std::to_string(height),
                    fix);
    }
}

} // namespace

std::uint32_t default_band_rows(std::uint32_t height, VkDeviceSize row_pitch,
                                BandDefaults defaults) {
    if (row_pitch * height <= k_whole_image_below_bytes) {
        return height;
    }
    const VkDeviceSize image = row_pitch * height;
    const VkDeviceSize band_bytes =
        std::max(defaults.min_band_bytes, (image + defaults.max_bands - 1) / defaults.max_bands);
    const VkDeviceSize rows = std::max<VkDeviceSize>(1, (band_bytes + row_pitch - 1) / row_pitch);
    return static_cast<std::uint32_t>(std::min<VkDeviceSize>(rows, height));
}

StagingLayout make_staging_layout(std::uint32_t width, std::uint32_t height, VkFormat format,
                                  std::uint32_t slots, std::uint32_t band_rows,
                                  VkDeviceSize row_alignment, VkDeviceSize offset_alignment,
                                  VkDeviceSize slot_alignment, BandDefaults defaults,
                                  std::span<const std::uint32_t> band_heights,
                                  VkDeviceSize min_slot_bytes) {
    if (width == 0 || height == 0 || width > 16384 || height > 16384) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Transfer size " + std::to_string(width) + "x" + std::to_string(height) +
                        " is not valid",
                    "Use a width and height from 1 to 16384");
    }
    if (slots == 0 || slots > 64) {
        throw Error(ErrorCategory::InvalidArgument,
                    "A transfer needs from 1 to 64 slots, not " + std::to_string(slots),
                    "Use the default of 3 slots");
    }
    StagingLayout l;
    l.width = width;
    l.height = height;
    l.format = format;
    l.texel_bytes = bytes_per_texel(format);
    l.slots = slots;
    const VkDeviceSize texel = l.texel_bytes;
    const VkDeviceSize pitch_unit = std::lcm(std::max<VkDeviceSize>(row_alignment, 1), texel);
    l.row_pitch = align_up(VkDeviceSize{width} * texel, pitch_unit);
    l.row_texels = static_cast<std::uint32_t>(l.row_pitch / texel);
    std::vector<std::uint32_t> heights(band_heights.begin(), band_heights.end());
    if (heights.empty()) {
        const std::uint32_t rows = band_rows == 0 ? default_band_rows(height, l.row_pitch, defaults)
                                                  : std::min(band_rows, height);
        for (std::uint32_t row = 0; row < height; row += rows) {
            heights.push_back(std::min(rows, height - row));
        }
    } else {
        check_band_heights(heights, height);
    }
    l.band_count = static_cast<std::uint32_t>(heights.size());
    const VkDeviceSize offset_unit = std::lcm(std::max<VkDeviceSize>(offset_alignment, 1), texel);
    VkDeviceSize offset = 0;
    std::uint32_t row = 0;
    for (const std::uint32_t rows : heights) {
        l.band_first_rows.push_back(row);
        l.band_offsets.push_back(offset);
        l.band_rows = std::max(l.band_rows, rows);
        row += rows;
        offset = align_up(offset + l.row_pitch * rows, offset_unit);
    }
    l.band_first_rows.push_back(row);
    const VkDeviceSize slot_unit = std::lcm(offset_unit, std::max<VkDeviceSize>(slot_alignment, 1));
    l.slot_stride = align_up(std::max(offset, min_slot_bytes), slot_unit);
    l.total_bytes = l.slot_stride * slots;
    return l;
}

StagingLayout staging_layout_for(const DeviceInfo& worker, const DeviceInfo& primary,
                                 std::uint32_t width, std::uint32_t height, VkFormat format,
                                 std::uint32_t slots, std::uint32_t band_rows,
                                 BandDefaults defaults, std::span<const std::uint32_t> band_heights,
                                 const InPlaceImage* in_place) {
    const VkDeviceSize row =
        in_place != nullptr
            ? in_place->row_pitch
            : std::lcm(std::max<VkDeviceSize>(1, worker.optimal_buffer_copy_row_pitch_alignment),
                       std::max<VkDeviceSize>(1, primary.optimal_buffer_copy_row_pitch_alignment));
    const VkDeviceSize offset =
        std::lcm(std::max<VkDeviceSize>(1, worker.optimal_buffer_copy_offset_alignment),
                 std::max<VkDeviceSize>(1, primary.optimal_buffer_copy_offset_alignment));
    const VkDeviceSize atom =
        std::lcm(std::lcm(std::max<VkDeviceSize>(1, worker.non_coherent_atom_size),
                          std::max<VkDeviceSize>(1, primary.non_coherent_atom_size)),
                 std::max<VkDeviceSize>(1, in_place != nullptr ? in_place->alignment : 1));
    return make_staging_layout(width, height, format, slots, band_rows, row, offset, atom, defaults,
                               band_heights, in_place != nullptr ? in_place->size : 0);
}

VkBufferImageCopy TransferPathBackend::record_band_download(VkCommandBuffer cmd, VkBuffer staging,
                                                            std::uint32_t slot, const Band& band,
                                                            VkImage image,
                                                            VkImageLayout layout) const noexcept {
    const VkBufferImageCopy region = band_region(slot, band);
    if (band.index == 0) {
        // The slot's previous writes before any of this transfer's: one barrier over the whole
        // slot, ahead of band 0, serves every band after it in submission order.
        buffer_barrier(cmd, staging, m_layout.slot_offset(slot), m_layout.slot_stride,
                       VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    }
    vkCmdCopyImageToBuffer(cmd, image, layout, staging, 1, &region);
    return region;
}

VkBufferImageCopy TransferPathBackend::band_region(std::uint32_t slot,
                                                   const Band& band) const noexcept {
    VkBufferImageCopy region{};
    region.bufferOffset = m_layout.slot_offset(slot) + band.offset;
    region.bufferRowLength = m_layout.row_texels;
    region.bufferImageHeight = band.rows;
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageOffset = {0, static_cast<std::int32_t>(band.first_row), 0};
    region.imageExtent = {m_layout.width, band.rows, 1};
    return region;
}

TransferPath negotiate_path(const PairInfo& pair, std::optional<TransferPath> forced) {
    if (forced) {
        for (const auto& a : pair.paths) {
            if (a.path == *forced) {
                if (a.available) {
                    return *forced;
                }
                // Unsupported: the pair lacks the forced path; the reason says what it lacks.
                throw Error(ErrorCategory::Unsupported,
                            std::string("Transfer path ") + to_string(*forced) +
                                " is not available from adapter " + std::to_string(pair.worker) +
                                " to adapter " + std::to_string(pair.primary) + ": " + a.reason,
                            "Leave the path to negotiation, or force one that `tandem devices` "
                            "lists as available for this pair");
            }
        }
        throw Error(ErrorCategory::Unsupported,
                    std::string("Transfer path ") + to_string(*forced) +
                        " is not in the pair matrix of adapters " + std::to_string(pair.worker) +
                        " -> " + std::to_string(pair.primary),
                    "Leave the path to negotiation");
    }
    if (auto best = pair.best_path()) {
        return *best;
    }
    throw Error(ErrorCategory::Unsupported,
                "No transfer path exists from adapter " + std::to_string(pair.worker) +
                    " to adapter " + std::to_string(pair.primary),
                "Pick other devices; `tandem devices` shows the pair matrix");
}

std::unique_ptr<TransferPathBackend> make_transfer_path(TransferPath path, const Device& worker,
                                                        const Device& primary,
                                                        const StagingLayout& layout,
                                                        const StagingCopierFactory& cuda_copier) {
    switch (path) {
    case TransferPath::SameDevice:
        return std::make_unique<SameDevicePath>(worker, primary, layout);
    case TransferPath::ZeroCopy:
        return std::make_unique<ZeroCopyPath>(worker, primary, layout);
    case TransferPath::SharedMemory:
        return std::make_unique<SharedMemoryPath>(worker, primary, layout);
    case TransferPath::CudaPeer:
        return cuda_copier ? std::make_unique<CudaPeerPath>(worker, primary, layout, cuda_copier)
                           : std::make_unique<CudaPeerPath>(worker, primary, layout);
    case TransferPath::HostImported:
        return std::make_unique<HostImportedPath>(worker, primary, layout);
    case TransferPath::HostCopy:
        return std::make_unique<HostCopyPath>(worker, primary, layout);
    }
    // Other: a value outside the enum is Tandem's bug, not the application's refused argument.
    throw Error("Unknown transfer path", "This is a bug in Tandem");
}

Handle<VkBuffer> create_external_buffer(const Device& device, VkDeviceSize size,
                                        VkBufferUsageFlags usage,
                                        VkExternalMemoryHandleTypeFlagBits handle,
                                        const std::string& name) {
    const VkDevice dev = device.handle();
    VkExternalMemoryBufferCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
    external.handleTypes = handle;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.pNext = &external;
    info.size = size;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buffer = VK_NULL_HANDLE;
    vk_check(vkCreateBuffer(dev, &info, nullptr, &buffer), "vkCreateBuffer " + name);
    device.name(buffer, VK_OBJECT_TYPE_BUFFER, name);
    return Handle<VkBuffer>(buffer, [dev](VkBuffer b) { vkDestroyBuffer(dev, b, nullptr); });
}

} // namespace tandem::detail
