#include "transfer/band_recorder.hpp"

#include "core/vk_check.hpp"
#include "transfer/link_copy_queue.hpp"
#include "transfer/same_device_path.hpp"

namespace tandem::detail {
namespace {

constexpr VkPipelineStageFlags2 k_all = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;

VkResult begin(VkCommandBuffer cmd) {
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    return vk_status(vkBeginCommandBuffer(cmd, &info), "vkBeginCommandBuffer transfer");
}

// `context` names the side, as the fault-injection hooks and the error messages know it.
VkResult end(VkCommandBuffer cmd, const char* context) {
    return vk_status(vkEndCommandBuffer(cmd), context);
}

} // namespace

VkImageLayout copy_source_layout(VkImageLayout layout) noexcept {
    return layout == VK_IMAGE_LAYOUT_GENERAL || layout == VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL
               ? layout
               : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
}

void record_to_copy_source(VkCommandBuffer cmd, VkImage image, VkImageLayout layout) noexcept {
    image_barrier(cmd, image, layout, copy_source_layout(layout), k_all,
                  VK_ACCESS_2_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_TRANSFER_READ_BIT);
}

void record_to_copy_destination(VkCommandBuffer cmd, VkImage image) noexcept {
    image_barrier(cmd, image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  k_all, VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_TRANSFER_WRITE_BIT);
}

void record_to_sampled(VkCommandBuffer cmd, VkImage image) noexcept {
    image_barrier(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_TRANSFER_WRITE_BIT, k_all, VK_ACCESS_2_NONE);
}

BandRecorder::BandRecorder(const TransferPathBackend& path, std::uint32_t slots,
                           const std::string& name, const BandGpuTimer* timer)
    : m_path(&path), m_timer(timer) {
    const bool same = path.kind() == TransferPath::SameDevice;
    // Same device and zero copy: one band, the whole image (one copy, or none).
    m_bands = same || path.kind() == TransferPath::ZeroCopy ? 1 : path.layout().band_count;
    const Device& worker = path.worker();
    const Device& primary = path.primary();
    m_slots.resize(slots);
    for (std::uint32_t s = 0; s < slots; ++s) {
        Slot& slot = m_slots[s];
        const std::string base = name + " slot " + std::to_string(s);
        slot.worker_pool = CommandPool(worker, copy_queue(worker).family(), base + " worker");
        if (!same) {
            slot.primary_pool =
                CommandPool(primary, copy_queue(primary).family(), base + " primary");
        }
        for (std::uint32_t b = 0; b < m_bands; ++b) {
            slot.worker_cmds.push_back(
                slot.worker_pool.allocate(base + " worker band " + std::to_string(b)));
            if (!same) {
                slot.primary_cmds.push_back(
                    slot.primary_pool.allocate(base + " primary band " + std::to_string(b)));
            }
        }
    }
}

VkImageLayout BandRecorder::worker_layout_after(TransferPath path, VkImageLayout worker_layout,
                                                bool same_image) noexcept {
    if (path == TransferPath::SameDevice) {
        return SameDevicePath::source_layout_after(worker_layout, same_image);
    }
    if (path == TransferPath::ZeroCopy ||
        worker_layout == VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL) {
        // Handed over in the sampled layout, or copied and left in it (record_band).
        return VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    return copy_source_layout(worker_layout);
}

VkResult BandRecorder::record(std::uint32_t slot_index, VkImage worker_image,
                              VkImageLayout worker_layout, VkImage primary_image) noexcept {
    Slot& slot = m_slots[slot_index];
    const Device& worker = m_path->worker();
    const Device& primary = m_path->primary();
    VkResult r = vk_status(vkResetCommandPool(worker.handle(), slot.worker_pool.get(), 0),
                           "vkResetCommandPool transfer worker");
    if (r == VK_SUCCESS && slot.primary_pool.get() != VK_NULL_HANDLE) {
        r = vk_status(vkResetCommandPool(primary.handle(), slot.primary_pool.get(), 0),
                      "vkResetCommandPool transfer primary");
    }
    if (r != VK_SUCCESS) {
        return r;
    }
    if (m_path->kind() == TransferPath::SameDevice) {
        VkCommandBuffer cmd = slot.worker_cmds[0];
        r = begin(cmd);
        if (r == VK_SUCCESS) {
            worker.begin_label(cmd, "tandem transfer: same device");
            static_cast<const SameDevicePath&>(*m_path).record_transfer(
                cmd, worker_image, worker_layout, primary_image);
            worker.end_label(cmd);
            r = end(cmd, "vkEndCommandBuffer transfer same device");
        }
        return r;
    }
    if (m_timer != nullptr) {
        m_timer->reset(slot_index); // the slot's previous transfer completed: so did its queries
    }
    for (std::uint32_t b = 0; b < m_bands && r == VK_SUCCESS; ++b) {
        r = record_band(slot_index, b, worker_image, worker_layout, primary_image);
    }
    return r;
}

VkResult BandRecorder::record_band(std::uint32_t slot_index, std::uint32_t b, VkImage worker_image,
                                   VkImageLayout worker_layout, VkImage primary_image) noexcept {
    using Side = BandGpuTimer::Side;
    const Slot& slot = m_slots[slot_index];
    const Device& worker = m_path->worker();
    const Device& primary = m_path->primary();
    const Band band = m_path->layout().band(b);
    // Zero copy: no copy, so no image barriers here; its path releases the image from the
    // layout the work left and acquires it on the primary.
    const bool zero_copy = m_path->kind() == TransferPath::ZeroCopy;

    VkCommandBuffer wcmd = slot.worker_cmds[b];
    VkResult r = begin(wcmd);
    if (r != VK_SUCCESS) {
        return r;
    }
    worker.begin_label(wcmd, "tandem transfer: worker band");
    if (m_timer != nullptr) {
        m_timer->write(wcmd, Side::Worker, slot_index, b, false);
    }
    // Zero copy, and a worker image that is the staging itself: no copy from it, so no layout
    // change of the recorder's (the path's band hands the image or its bytes over).
    const bool worker_copies = !zero_copy && !m_path->worker_writes_staging();
    if (b == 0 && worker_copies) {
        record_to_copy_source(wcmd, worker_image, worker_layout);
    }
    m_path->record_worker_band(wcmd, slot_index, band, worker_image,
                               worker_copies ? copy_source_layout(worker_layout) : worker_layout);
    if (b + 1 == m_bands && worker_copies &&
        worker_layout == VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL) {
        // Submitted sampled (a chain's consumer samples it on the worker): left sampled, after
        // every band's copy (earlier bands are earlier submissions on this queue).
        image_barrier(wcmd, worker_image, copy_source_layout(worker_layout), worker_layout,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
    }
    if (m_timer != nullptr) {
        m_timer->write(wcmd, Side::Worker, slot_index, b, true);
    }
    worker.end_label(wcmd);
    r = end(wcmd, "vkEndCommandBuffer transfer worker");
    if (r != VK_SUCCESS) {
        return r;
    }

    VkCommandBuffer pcmd = slot.primary_cmds[b];
    r = begin(pcmd);
    if (r != VK_SUCCESS) {
        return r;
    }
    primary.begin_label(pcmd, "tandem transfer: primary band");
    if (m_timer != nullptr) {
        m_timer->write(pcmd, Side::Primary, slot_index, b, false);
    }
    // Zero copy, and a primary image that is the staging itself: no copy into it, so no layout
    // change; the path records the barrier that makes the bytes visible.
    const bool primary_copies = !zero_copy && !m_path->primary_reads_staging();
    if (b == 0 && primary_copies) {
        record_to_copy_destination(pcmd, primary_image);
    }
    m_path->record_primary_band(pcmd, slot_index, band, primary_image);
    if (m_timer != nullptr) {
        m_timer->write(pcmd, Side::Primary, slot_index, b, true);
    }
    if (b + 1 == m_bands && primary_copies) {
        record_to_sampled(pcmd, primary_image);
    }
    primary.end_label(pcmd);
    return end(pcmd, "vkEndCommandBuffer transfer primary");
}

BandBatches::BandBatches(const std::vector<VkCommandBuffer>& band_cmds,
                         const TimelineSemaphore& semaphore, std::uint64_t first_value, bool wait)
    : cmds(band_cmds.size()), semaphores(band_cmds.size()),
      submits(band_cmds.size(), VkSubmitInfo2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2}) {
    for (std::size_t b = 0; b < band_cmds.size(); ++b) {
        cmds[b] = VkCommandBufferSubmitInfo{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        cmds[b].commandBuffer = band_cmds[b];
        semaphores[b] = semaphore.submit_info(first_value + b, k_all);
        submits[b].commandBufferInfoCount = 1;
        submits[b].pCommandBufferInfos = &cmds[b];
        if (wait) {
            submits[b].waitSemaphoreInfoCount = 1;
            submits[b].pWaitSemaphoreInfos = &semaphores[b];
        } else {
            submits[b].signalSemaphoreInfoCount = 1;
            submits[b].pSignalSemaphoreInfos = &semaphores[b];
        }
    }
}

} // namespace tandem::detail
