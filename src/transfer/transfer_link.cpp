#include "transfer/transfer_link.hpp"

#include <bit>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/cpu.hpp"
#include "core/instance.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/same_device_path.hpp"
#include "transfer/zero_copy_path.hpp"

namespace tandem::detail {
namespace {

constexpr VkPipelineStageFlags2 k_all = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
// What both images of a zero-copy slot are made with, before the callers' own usage.
constexpr VkImageUsageFlags k_zero_copy_usage =
    VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
// The most bands one bridge hand-off submits at once (the rest follow with later hand-offs).
constexpr std::uint32_t k_max_coalesced_bands = 16;

bool copyable_in_place(VkImageLayout layout) {
    return layout == VK_IMAGE_LAYOUT_GENERAL || layout == VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
}

VkResult begin(VkCommandBuffer cmd) {
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    return vk_status(vkBeginCommandBuffer(cmd, &info), "vkBeginCommandBuffer transfer");
}

VkCommandBufferSubmitInfo cmd_info(VkCommandBuffer cmd) {
    VkCommandBufferSubmitInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    info.commandBuffer = cmd;
    return info;
}

// One batch per band: band b's command buffer, waiting on (`wait`) or signalling `semaphore` at
// first_value + b. Not copyable: the submit infos point into the other two vectors.
struct BandBatches {
    BandBatches(const std::vector<VkCommandBuffer>& band_cmds, const TimelineSemaphore& semaphore,
                std::uint64_t first_value, bool wait)
        : cmds(band_cmds.size()), semaphores(band_cmds.size()),
          submits(band_cmds.size(), VkSubmitInfo2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2}) {
        for (std::size_t b = 0; b < band_cmds.size(); ++b) {
            cmds[b] = cmd_info(band_cmds[b]);
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
    BandBatches(const BandBatches&) = delete;
    BandBatches& operator=(const BandBatches&) = delete;
    std::vector<VkCommandBufferSubmitInfo> cmds;
    std::vector<VkSemaphoreSubmitInfo> semaphores;
    std::vector<VkSubmitInfo2> submits;
};

// The worker image enters the copy: written by earlier work (on any queue of the worker,
// ordered by the caller's semaphore or by submission order on a shared queue).
void worker_image_to_source(VkCommandBuffer cmd, VkImage image, VkImageLayout layout) {
    image_barrier(cmd, image, layout,
                  copyable_in_place(layout) ? layout : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, k_all,
                  VK_ACCESS_2_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_TRANSFER_READ_BIT);
}

} // namespace

TransferLink::TransferLink(const Device& worker, const Device& primary, const PairInfo& pair,
                           const TransferDesc& desc)
    : m_worker(&worker), m_primary(&primary), m_desc(desc),
      m_path(negotiate_path(pair, desc.forced)) {
    const bool same = m_path == TransferPath::SameDevice;
    if (same != (&worker == &primary)) {
        throw Error("The same-device path needs one Device as worker and primary, and the other "
                    "paths two",
                    "Pass the same Device twice for a same-device pair, else two Devices");
    }
    const std::string base = worker.label() + "->" + primary.label();
    if (m_path == TransferPath::ZeroCopy && !desc.forced &&
        !ZeroCopyPath::exports(worker, desc.format, k_zero_copy_usage)) {
        // The matrix knows RGBA8; this format the driver cannot share: the next path instead.
        PairInfo without = pair;
        for (auto& a : without.paths) {
            a.available = a.available && a.path != TransferPath::ZeroCopy;
        }
        m_path = negotiate_path(without, std::nullopt);
        spdlog::debug("{}: zero-copy cannot export {} images; {} instead", base,
                      format_name(desc.format), to_string(m_path));
    }
    // Same device and zero copy: no staging and no bands (one copy, or none). Shared memory is
    // whole unless bands are asked for: both of its copies run on one GPU, so bands overlap
    // nothing and cost a synchronisation each (H200, 1920x1080: 0.84 of the on-device copy in
    // 4 bands against 0.98 whole, 251 against 217 us).
    const bool unbanded_by_default =
        m_path == TransferPath::SharedMemory && desc.band_rows == 0 && desc.band_heights.empty();
    const bool whole = same || m_path == TransferPath::ZeroCopy || unbanded_by_default;
    const StagingLayout layout =
        staging_layout_for(worker.info(), primary.info(), desc.width, desc.height, desc.format,
                           desc.slots, whole ? desc.height : desc.band_rows,
                           desc.hand_off == BandHandOff::Signal ? k_gated_bands : k_submitted_bands,
                           whole ? std::span<const std::uint32_t>{}
                                 : std::span<const std::uint32_t>{desc.band_heights});
    m_backend = make_transfer_path(m_path, worker, primary, layout);

    const bool gpu_wait = pair.gpu_side_sync && !m_backend->has_host_step();
    m_worker_timeline = std::make_unique<TimelineSemaphore>(worker, base + " worker timeline", 0,
                                                            gpu_wait && !same);
    m_primary_timeline = std::make_unique<TimelineSemaphore>(primary, base + " primary timeline");
    if (!same) {
        if (gpu_wait) {
            m_imported_worker = std::make_unique<TimelineSemaphore>(TimelineSemaphore::import_from(
                primary, *m_worker_timeline, base + " worker timeline (imported)"));
        } else {
            HostBridge::Options options;
            options.name = base + " bridge";
            options.timeout = desc.timeout;
            options.progress = desc.worker_progress;
            options.spin = desc.bridge_spin.value_or(
                has_spare_cores() ? std::chrono::microseconds(1000) : std::chrono::microseconds(0));
            // Every slot's bands, and those of a transfer whose copies completed while its
            // last forwards were still being handed off (they are skipped, but still queued).
            options.capacity = std::size_t{layout.band_count} * (layout.slots + 1) + 1;
            if (desc.hand_off == BandHandOff::Signal) {
                m_gate = std::make_unique<TimelineSemaphore>(
                    primary, base + " band gate" + std::string(k_host_signalled_only));
                options.on_exit = [this] { open_gate(); };
            }
            m_bridge = std::make_unique<HostBridge>(*m_worker_timeline, options);
        }
    }

    m_slots.resize(desc.slots);
    m_handed = std::make_unique<std::atomic<std::uint64_t>[]>(desc.slots);
    for (std::uint32_t s = 0; s < desc.slots; ++s) {
        Slot& slot = m_slots[s];
        const std::string name = base + " slot " + std::to_string(s);
        slot.worker_pool =
            CommandPool(worker, worker.queue(QueueRole::Transfer).family(), name + " worker");
        slot.primary_pool =
            CommandPool(primary, primary.queue(QueueRole::Transfer).family(), name + " primary");
        if (!same) {
            slot.worker_fence = create_fence(worker, name + " worker fence");
        }
        const std::uint32_t bands = same ? 1 : layout.band_count;
        for (std::uint32_t b = 0; b < bands; ++b) {
            slot.worker_cmds.push_back(
                slot.worker_pool.allocate(name + " worker band " + std::to_string(b)));
            if (!same) {
                slot.primary_cmds.push_back(
                    slot.primary_pool.allocate(name + " primary band " + std::to_string(b)));
            }
        }
    }
    if (desc.gpu_times && !same && worker.has_host_timed_queries() &&
        primary.has_host_timed_queries()) {
        // Only where both transfer queues write timestamps (else each is nullopt).
        const std::uint32_t queries = 2 * layout.band_count * desc.slots;
        m_worker_queries = create_timestamp_pool(worker, QueueRole::Transfer, queries,
                                                 base + " worker band times");
        m_primary_queries = create_timestamp_pool(primary, QueueRole::Transfer, queries,
                                                  base + " primary band times");
        if (!m_worker_queries || !m_primary_queries) {
            m_worker_queries.reset();
            m_primary_queries.reset();
        }
    }
    spdlog::debug("{}: {} path, {} sync, {} slots, {} band(s) of {} rows, row pitch {} bytes{}",
                  base, to_string(m_path), m_bridge ? "host-bridged" : "GPU-side", desc.slots,
                  layout.band_count, layout.band_rows, layout.row_pitch,
                  gpu_times() ? ", bands timed on the GPUs" : "");
}

const char* to_string(BandHandOff hand_off) noexcept {
    return hand_off == BandHandOff::Signal ? "signal" : "submit";
}

TransferLink::~TransferLink() {
    drain();
}

void TransferLink::drain() noexcept {
    if (m_primary_timeline == nullptr) {
        return;
    }
    const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(m_desc.timeout);
    // Let the bridge submit what the worker delivers, unless it has failed; then stop it, so no
    // action runs on members being destroyed.
    if (m_bridge) {
        const auto deadline = std::chrono::steady_clock::now() + m_desc.timeout;
        while (m_bridge->state() == HostBridge::State::Running && m_bridge->pending() > 0 &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        m_bridge->stop();
        open_gate(); // the bridge has ended: nothing is left to wait for it
    }
    // Whatever reached the primary's queue finishes by itself; so does the worker's side once
    // its wait is signalled. Waiting for both keeps command buffers and staging alive meanwhile.
    const std::uint64_t submitted = m_primary_submitted.load(std::memory_order_acquire);
    if (m_primary_timeline->wait(submitted, timeout) != VK_SUCCESS ||
        m_worker_timeline->wait(m_worker_value, timeout) != VK_SUCCESS) {
        spdlog::error("{}: transfers still in flight at destruction (the worker's wait was never "
                      "signalled?)",
                      m_worker_timeline->name());
        return;
    }
    // The last values reached; the batches behind them may still be finishing in the driver
    // (lavapipe releases a batch's wait semaphores after signalling). Destroy nothing before.
    const auto settle = [&](const Device& device) {
        if (device.settle(timeout) == VK_TIMEOUT) {
            spdlog::error("{}: transfer work still in flight at destruction", device.label());
        }
    };
    settle(*m_worker);
    if (m_primary != m_worker) {
        settle(*m_primary);
    }
}

ImageDesc TransferLink::worker_image_desc(const std::string& name) const {
    if (m_path == TransferPath::ZeroCopy) {
        return zero_copy_image_desc(name);
    }
    ImageDesc desc;
    desc.width = m_desc.width;
    desc.height = m_desc.height;
    desc.format = m_desc.format;
    // SAMPLED too: create_image makes a view, which needs a view-capable usage.
    desc.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    if (m_path == TransferPath::SameDevice) {
        desc.usage |= VK_IMAGE_USAGE_TRANSFER_DST_BIT; // it may also be the primary image
    }
    desc.name = name;
    desc.queue_families = {m_worker->queue(QueueRole::Main).family(),
                           m_worker->queue(QueueRole::Transfer).family()};
    return desc;
}

ImageDesc TransferLink::primary_image_desc(const std::string& name) const {
    if (m_path == TransferPath::ZeroCopy) {
        return zero_copy_image_desc(name);
    }
    ImageDesc desc;
    desc.width = m_desc.width;
    desc.height = m_desc.height;
    desc.format = m_desc.format;
    desc.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    desc.name = name;
    desc.queue_families = {m_primary->queue(QueueRole::Main).family(),
                           m_primary->queue(QueueRole::Transfer).family()};
    return desc;
}

ImageDesc TransferLink::zero_copy_image_desc(const std::string& name) const {
    ImageDesc desc;
    desc.width = m_desc.width;
    desc.height = m_desc.height;
    desc.format = m_desc.format;
    desc.usage = k_zero_copy_usage;
    desc.name = name;
    desc.queue_families = static_cast<const ZeroCopyPath&>(*m_backend).queue_families();
    return desc;
}

LinkImages TransferLink::create_images(const std::string& name, VkImageUsageFlags worker_usage,
                                       VkImageUsageFlags primary_usage) const {
    LinkImages out;
    if (m_path == TransferPath::ZeroCopy) {
        // One allocation, so one create info: the union of both sides' usage.
        ImageDesc desc = zero_copy_image_desc(name);
        desc.usage |= worker_usage | primary_usage;
        auto images = static_cast<const ZeroCopyPath&>(*m_backend).create_images(desc);
        out.worker = std::move(images.first);
        out.primary = std::move(images.second);
        return out;
    }
    ImageDesc wd = worker_image_desc(name + " (worker)");
    wd.usage |= worker_usage;
    ImageDesc pd = primary_image_desc(name + " (primary)");
    pd.usage |= primary_usage;
    out.worker = create_image(*m_worker, wd);
    out.primary = create_image(*m_primary, pd);
    return out;
}

VkImageLayout TransferLink::worker_layout_after(VkImageLayout worker_layout,
                                                bool same_image) const noexcept {
    if ((m_path == TransferPath::SameDevice && same_image) || m_path == TransferPath::ZeroCopy) {
        return VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    return copyable_in_place(worker_layout) ? worker_layout : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
}

VkResult TransferLink::submit(std::uint32_t slot_index, VkImage worker_image,
                              VkImageLayout worker_layout, VkSemaphoreSubmitInfo worker_wait,
                              VkImage primary_image, VkImageLayout primary_layout,
                              TransferTicket& out) {
    if (failed()) {
        return VK_ERROR_UNKNOWN;
    }
    if (slot_index >= m_slots.size()) {
        return VK_NOT_READY;
    }
    Slot& slot = m_slots[slot_index];
    if (slot.primary_value != 0) {
        // The caller promises the slot's previous transfer finished; check rather than trust,
        // since reusing its command buffers and staging early would corrupt both transfers.
        std::uint64_t done = 0;
        const VkResult r = m_primary_timeline->value(done);
        if (r != VK_SUCCESS) {
            fail(r, "reading the primary timeline failed");
            return r;
        }
        if (done < slot.primary_value) {
            note_not_ready(1, done, slot.primary_value);
            return VK_NOT_READY;
        }
    }
    const bool has_wait = worker_wait.semaphore != VK_NULL_HANDLE;
    if (has_wait) {
        worker_wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO;
        if (worker_wait.stageMask == 0) {
            worker_wait.stageMask = k_all;
        }
    }
    if (m_path == TransferPath::SameDevice) {
        return submit_same_device(slot, worker_image, worker_layout, worker_wait, primary_image,
                                  primary_layout, out);
    }

    const StagingLayout& layout = m_backend->layout();
    const std::uint32_t bands = layout.band_count;
    if (m_bridge && m_bridge->pending() + bands > std::size_t{bands} * (layout.slots + 1) + 1) {
        note_not_ready(2, m_bridge->pending(), bands);
        return VK_NOT_READY;
    }
    // The worker's side of the slot's previous transfer, seen on the worker's device: the
    // primary's copy waited for it, so it is done, but the command buffers reset below may be
    // reused only once the worker's device says so (a GPU-side wait on another device is no
    // such word; the validation layer cannot tell either, from an exported timeline).
    if (slot.worker_fence_pending) {
        const VkResult status = vkGetFenceStatus(m_worker->handle(), slot.worker_fence.get());
        if (status == VK_NOT_READY) {
            note_not_ready(3, slot.worker_value, 0);
            return VK_NOT_READY;
        }
        VkFence fence = slot.worker_fence.get();
        VkResult rf = status == VK_SUCCESS ? vkResetFences(m_worker->handle(), 1, &fence) : status;
        if (rf != VK_SUCCESS) {
            fail(rf, "the worker's fence of a transfer failed");
            return rf;
        }
        slot.worker_fence_pending = false;
    }
    VkResult r = vk_status(vkResetCommandPool(m_worker->handle(), slot.worker_pool.get(), 0),
                           "vkResetCommandPool transfer worker");
    if (r == VK_SUCCESS) {
        r = vk_status(vkResetCommandPool(m_primary->handle(), slot.primary_pool.get(), 0),
                      "vkResetCommandPool transfer primary");
    }
    if (r != VK_SUCCESS) {
        fail(r, "resetting a transfer command pool failed");
        return r;
    }

    if (gpu_times()) {
        // The slot's previous transfer has completed (checked above), so are its timestamps.
        const std::uint32_t first = 2 * slot_index * bands;
        vkResetQueryPool(m_worker->handle(), m_worker_queries->pool.get(), first, 2 * bands);
        vkResetQueryPool(m_primary->handle(), m_primary_queries->pool.get(), first, 2 * bands);
    }

    // Record both sides of every band. Zero copy has one band and no copy: its worker band
    // releases the image (from the layout the work left), its primary band acquires it.
    const bool zero_copy = m_path == TransferPath::ZeroCopy;
    for (std::uint32_t b = 0; b < bands && r == VK_SUCCESS; ++b) {
        const Band band = layout.band(b);
        VkCommandBuffer wcmd = slot.worker_cmds[b];
        r = begin(wcmd);
        if (r != VK_SUCCESS) {
            break;
        }
        m_worker->begin_label(wcmd, "tandem transfer: worker band");
        const std::uint32_t query = 2 * (slot_index * bands + b); // this band's two timestamps
        if (gpu_times()) {
            vkCmdWriteTimestamp2(wcmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT,
                                 m_worker_queries->pool.get(), query);
        }
        if (b == 0 && !zero_copy) {
            worker_image_to_source(wcmd, worker_image, worker_layout);
        }
        m_backend->record_worker_band(wcmd, slot_index, band, worker_image,
                                      zero_copy ? worker_layout
                                                : worker_layout_after(worker_layout));
        if (gpu_times()) {
            vkCmdWriteTimestamp2(wcmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                 m_worker_queries->pool.get(), query + 1);
        }
        m_worker->end_label(wcmd);
        r = vk_status(vkEndCommandBuffer(wcmd), "vkEndCommandBuffer transfer worker");
        if (r != VK_SUCCESS) {
            break;
        }
        VkCommandBuffer pcmd = slot.primary_cmds[b];
        r = begin(pcmd);
        if (r != VK_SUCCESS) {
            break;
        }
        m_primary->begin_label(pcmd, "tandem transfer: primary band");
        if (gpu_times()) {
            vkCmdWriteTimestamp2(pcmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT,
                                 m_primary_queries->pool.get(), query);
        }
        if (b == 0 && !zero_copy) {
            // The previous contents are discarded; readers finished before the slot came back.
            image_barrier(pcmd, primary_image, VK_IMAGE_LAYOUT_UNDEFINED,
                          VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, k_all, VK_ACCESS_2_NONE,
                          VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        }
        m_backend->record_primary_band(pcmd, slot_index, band, primary_image);
        if (gpu_times()) {
            vkCmdWriteTimestamp2(pcmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                 m_primary_queries->pool.get(), query + 1);
        }
        if (b + 1 == bands && !zero_copy) {
            image_barrier(pcmd, primary_image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                          VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT, k_all, VK_ACCESS_2_NONE);
        }
        m_primary->end_label(pcmd);
        r = vk_status(vkEndCommandBuffer(pcmd), "vkEndCommandBuffer transfer primary");
    }
    if (r != VK_SUCCESS) {
        fail(r, "recording transfer commands failed");
        return r;
    }
    (void)primary_layout; // the old contents are discarded whatever their layout

    const std::uint64_t first = m_worker_value + 1;
    const std::uint64_t primary_value = m_primary_value + 1;

    // Worker side: one batch per band, each signalling its own worker value.
    BandBatches worker_batches(slot.worker_cmds, *m_worker_timeline, first, false);
    std::vector<VkSubmitInfo2>& wsubmits = worker_batches.submits;
    if (has_wait) {
        wsubmits[0].waitSemaphoreInfoCount = 1;
        wsubmits[0].pWaitSemaphoreInfos = &worker_wait;
    }
    r = m_worker->queue(QueueRole::Transfer).submit(wsubmits, slot.worker_fence.get());
    if (r != VK_SUCCESS) {
        fail(r, "submitting the worker side of a transfer failed");
        return r;
    }
    slot.worker_fence_pending = true;
    m_worker_value = first + bands - 1;

    if (m_bridge) {
        // Host-bridged: once the worker's band b is done, the bridge thread runs the host step
        // (host copy) and hands the primary band b, with any later bands already done:
        // BandHandOff::Submit submits its copy (every semaphore is then signalled by a queue);
        // Signal raises the gate its copy, submitted here, waits on. The last band's copy
        // signals primary_value.
        m_handed[slot_index].store(handed_state(first, 0), std::memory_order_release);
        const std::uint64_t gate_base = m_gate_next;
        if (m_gate) {
            m_gate_next += bands;
            // Before the copies exist: open_gate() must cover every value one waits on.
            m_gate_assigned.store(gate_base + bands - 1, std::memory_order_release);
            r = submit_gated_copies(slot, bands, primary_value, gate_base);
            if (r != VK_SUCCESS) {
                return r;
            }
        }
        for (std::uint32_t b = 0; b < bands; ++b) {
            HostBridge::Action action = [this, slot_index, b, bands, first, primary_value,
                                         gate_base]() -> VkResult {
                return m_gate ? release_bands(slot_index, b, bands, first, gate_base)
                              : forward_bands(slot_index, b, bands, first, primary_value);
            };
            if (!m_bridge->try_forward(first + b, std::move(action))) {
                // Cannot happen while pending() was checked above.
                fail(VK_ERROR_UNKNOWN, "the bridge refused a forward");
                open_gate();
                return VK_ERROR_UNKNOWN;
            }
        }
    } else {
        // GPU-side: the primary's bands are submitted now, each waiting on the imported worker
        // timeline for its band.
        for (std::uint32_t b = 0; b < bands; ++b) {
            const VkSemaphoreSubmitInfo wait = m_imported_worker->submit_info(first + b, k_all);
            r = primary_band(slot_index, b, bands, primary_value, &wait);
            if (r != VK_SUCCESS) {
                return r;
            }
        }
    }
    m_primary_value = primary_value;
    slot.primary_value = primary_value;
    slot.worker_value = m_worker_value;
    out.worker_value = m_worker_value;
    out.primary_value = primary_value;
    return VK_SUCCESS;
}

VkResult TransferLink::forward_bands(std::uint32_t slot_index, std::uint32_t band,
                                     std::uint32_t bands, std::uint64_t first_value,
                                     std::uint64_t primary_value) noexcept {
    Slot& slot = m_slots[slot_index];
    const auto from = handed(slot_index, first_value);
    if (!from || band < *from) {
        return VK_SUCCESS; // went with an earlier band's submission
    }
    // Every band the worker has finished by now goes in this submission.
    const std::uint32_t last = last_finished_band(band, bands, first_value);
    VkCommandBufferSubmitInfo cmds[k_max_coalesced_bands];
    VkSubmitInfo2 submits[k_max_coalesced_bands];
    const VkSemaphoreSubmitInfo signal = m_primary_timeline->submit_info(primary_value, k_all);
    std::uint32_t n = 0;
    for (std::uint32_t b = band; b <= last && n < k_max_coalesced_bands; ++b, ++n) {
        if (m_backend->has_host_step()) {
            const VkResult r = m_backend->host_step(slot_index, m_backend->layout().band(b));
            if (r != VK_SUCCESS) {
                fail(r, "the host copy between the devices failed");
                return r;
            }
        }
        cmds[n] = cmd_info(slot.primary_cmds[b]);
        submits[n] = VkSubmitInfo2{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submits[n].commandBufferInfoCount = 1;
        submits[n].pCommandBufferInfos = &cmds[n];
        if (b + 1 == bands) {
            submits[n].signalSemaphoreInfoCount = 1;
            submits[n].pSignalSemaphoreInfos = &signal;
        }
    }
    // Before the submission: once the last band signals primary_value, the caller may submit
    // the slot's next transfer at once, and submit() resets this count for it; written after,
    // it could overwrite that reset and the next transfer's band 0 would never be submitted.
    m_handed[slot_index].store(handed_state(first_value, band + n), std::memory_order_release);
    const bool complete = band + n == bands; // read nothing of the slot after the submission
    const VkResult r = m_primary->queue(QueueRole::Transfer).submit({submits, n});
    if (r != VK_SUCCESS) {
        fail(r, "submitting the primary side of a transfer failed");
        return r;
    }
    if (complete) {
        // release: drain() readers that see the value also see the submission behind it.
        m_primary_submitted.store(primary_value, std::memory_order_release);
    }
    report_handed(slot_index, band, band + n);
    return VK_SUCCESS;
}

std::optional<std::uint32_t> TransferLink::handed(std::uint32_t slot,
                                                  std::uint64_t first_value) const noexcept {
    const std::uint64_t state = m_handed[slot].load(std::memory_order_acquire);
    if ((state >> 16) != (handed_state(first_value, 0) >> 16)) {
        return std::nullopt;
    }
    return static_cast<std::uint32_t>(state & 0xffffu);
}

std::uint32_t TransferLink::last_finished_band(std::uint32_t band, std::uint32_t bands,
                                               std::uint64_t first_value) const noexcept {
    std::uint64_t reached = first_value + band;
    if (band + 1 < bands) {
        std::uint64_t current = 0;
        if (m_worker_timeline->value(current) == VK_SUCCESS) {
            reached = std::max(reached, current);
        }
    }
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(bands - 1, reached - first_value));
}

VkResult TransferLink::submit_gated_copies(Slot& slot, std::uint32_t bands,
                                           std::uint64_t primary_value,
                                           std::uint64_t gate_base) noexcept {
    BandBatches batches(slot.primary_cmds, *m_gate, gate_base, true);
    std::vector<VkSubmitInfo2>& submits = batches.submits;
    const VkSemaphoreSubmitInfo signal = m_primary_timeline->submit_info(primary_value, k_all);
    submits[bands - 1].signalSemaphoreInfoCount = 1;
    submits[bands - 1].pSignalSemaphoreInfos = &signal;
    const VkResult r = m_primary->queue(QueueRole::Transfer).submit(submits);
    if (r != VK_SUCCESS) {
        fail(r, "submitting the primary side of a transfer failed");
        return r;
    }
    // release: drain() readers that see the value also see the submission behind it.
    m_primary_submitted.store(primary_value, std::memory_order_release);
    return VK_SUCCESS;
}

VkResult TransferLink::release_bands(std::uint32_t slot_index, std::uint32_t band,
                                     std::uint32_t bands, std::uint64_t first_value,
                                     std::uint64_t gate_base) noexcept {
    const auto from = handed(slot_index, first_value);
    if (!from || band < *from) {
        return VK_SUCCESS; // released with an earlier band
    }
    const std::uint32_t last = last_finished_band(band, bands, first_value);
    if (m_backend->has_host_step()) {
        for (std::uint32_t b = *from; b <= last; ++b) {
            const VkResult r = m_backend->host_step(slot_index, m_backend->layout().band(b));
            if (r != VK_SUCCESS) {
                fail(r, "the host copy between the devices failed");
                return r;
            }
        }
    }
    // Before the signal: once the last band's copy signals the primary value, the caller may
    // submit the slot's next transfer at once, and submit() resets this count for it.
    m_handed[slot_index].store(handed_state(first_value, last + 1), std::memory_order_release);
    const VkResult r = raise_gate(gate_base + last);
    if (r != VK_SUCCESS) {
        fail(r, "signalling the primary's band gate failed");
        return r;
    }
    report_handed(slot_index, *from, last + 1);
    return r;
}

void TransferLink::report_handed(std::uint32_t slot, std::uint32_t first_band,
                                 std::uint32_t end_band) const noexcept {
    if (m_desc.on_band_handed) {
        for (std::uint32_t b = first_band; b < end_band; ++b) {
            m_desc.on_band_handed(slot, b);
        }
    }
}

VkResult TransferLink::raise_gate(std::uint64_t value) noexcept {
    std::lock_guard lock(m_gate_mutex);
    if (value <= m_gate_raised) {
        return VK_SUCCESS; // already open that far (open_gate() went first)
    }
    const VkResult r = m_gate->signal(value);
    if (r == VK_SUCCESS) {
        m_gate_raised = value;
    }
    return r;
}

void TransferLink::open_gate() noexcept {
    if (m_gate) {
        (void)raise_gate(m_gate_assigned.load(std::memory_order_acquire));
    }
}

VkResult TransferLink::primary_band(std::uint32_t slot_index, std::uint32_t band,
                                    std::uint32_t bands, std::uint64_t primary_value,
                                    const VkSemaphoreSubmitInfo* wait) noexcept {
    const Band b = m_backend->layout().band(band);
    if (m_backend->has_host_step()) {
        const VkResult r = m_backend->host_step(slot_index, b);
        if (r != VK_SUCCESS) {
            fail(r, "the host copy between the devices failed");
            return r;
        }
    }
    const VkSemaphoreSubmitInfo signal = m_primary_timeline->submit_info(primary_value, k_all);
    const VkResult r =
        m_primary->queue(QueueRole::Transfer)
            .submit_one(m_slots[slot_index].primary_cmds[band], {wait, wait != nullptr ? 1u : 0u},
                        {&signal, band + 1 == bands ? 1u : 0u});
    if (r != VK_SUCCESS) {
        fail(r, "submitting the primary side of a transfer failed");
        return r;
    }
    if (band + 1 == bands) {
        // release: drain() readers that see the value also see the submission behind it.
        m_primary_submitted.store(primary_value, std::memory_order_release);
    }
    return VK_SUCCESS;
}

VkResult TransferLink::submit_same_device(Slot& slot, VkImage worker_image,
                                          VkImageLayout worker_layout,
                                          const VkSemaphoreSubmitInfo& worker_wait,
                                          VkImage primary_image, VkImageLayout primary_layout,
                                          TransferTicket& out) {
    (void)primary_layout;
    VkResult r = vk_status(vkResetCommandPool(m_worker->handle(), slot.worker_pool.get(), 0),
                           "vkResetCommandPool transfer same device");
    VkCommandBuffer cmd = slot.worker_cmds[0];
    if (r == VK_SUCCESS) {
        r = begin(cmd);
    }
    if (r != VK_SUCCESS) {
        fail(r, "recording a same-device transfer failed");
        return r;
    }
    m_worker->begin_label(cmd, "tandem transfer: same device");
    if (worker_image == primary_image) {
        // No copy: the image only changes layout (concurrent sharing: no ownership transfer).
        image_barrier(cmd, worker_image, worker_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                      k_all, VK_ACCESS_2_MEMORY_WRITE_BIT, k_all, VK_ACCESS_2_NONE);
    } else {
        worker_image_to_source(cmd, worker_image, worker_layout);
        image_barrier(cmd, primary_image, VK_IMAGE_LAYOUT_UNDEFINED,
                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, k_all, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        static_cast<const SameDevicePath&>(*m_backend)
            .record_image_copy(cmd, m_backend->layout().band(0), worker_image,
                               worker_layout_after(worker_layout), primary_image);
        image_barrier(cmd, primary_image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                      VK_ACCESS_2_TRANSFER_WRITE_BIT, k_all, VK_ACCESS_2_NONE);
    }
    m_worker->end_label(cmd);
    r = vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer transfer same device");
    if (r != VK_SUCCESS) {
        fail(r, "recording a same-device transfer failed");
        return r;
    }
    const std::uint64_t worker_value = m_worker_value + 1;
    const std::uint64_t primary_value = m_primary_value + 1;
    const VkSemaphoreSubmitInfo signals[2] = {
        m_worker_timeline->submit_info(worker_value, k_all),
        m_primary_timeline->submit_info(primary_value, k_all)};
    const std::size_t waits = worker_wait.semaphore != VK_NULL_HANDLE ? 1 : 0;
    r = m_worker->queue(QueueRole::Transfer).submit_one(cmd, {&worker_wait, waits}, signals);
    if (r != VK_SUCCESS) {
        fail(r, "submitting a same-device transfer failed");
        return r;
    }
    m_worker_value = worker_value;
    m_primary_value = primary_value;
    m_primary_submitted.store(primary_value, std::memory_order_release);
    slot.primary_value = primary_value;
    slot.worker_value = worker_value;
    out.worker_value = worker_value;
    out.primary_value = primary_value;
    return VK_SUCCESS;
}

std::optional<std::vector<BandGpuTimes>>
TransferLink::read_gpu_times(std::uint32_t slot_index) const {
    if (!gpu_times() || slot_index >= m_slots.size() || m_slots[slot_index].primary_value == 0 ||
        failed()) {
        return std::nullopt;
    }
    // Both sides done, so every timestamp is written (each batch writes its own before it
    // signals); checked first because reading queries may wait for the device.
    const Slot& slot = m_slots[slot_index];
    std::uint64_t worker_done = 0;
    std::uint64_t primary_done = 0;
    if (m_worker_timeline->value(worker_done) != VK_SUCCESS ||
        m_primary_timeline->value(primary_done) != VK_SUCCESS || worker_done < slot.worker_value ||
        primary_done < slot.primary_value) {
        return std::nullopt;
    }
    const std::uint32_t bands = m_backend->layout().band_count;
    const std::uint32_t first = 2 * slot_index * bands;
    std::vector<std::uint64_t> worker(2 * bands);
    std::vector<std::uint64_t> primary(2 * bands);
    const auto read = [&](const Device& device, VkQueryPool pool, std::vector<std::uint64_t>& out) {
        return vkGetQueryPoolResults(device.handle(), pool, first, 2 * bands,
                                     out.size() * sizeof(std::uint64_t), out.data(),
                                     sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT) == VK_SUCCESS;
    };
    if (!read(*m_worker, m_worker_queries->pool.get(), worker) ||
        !read(*m_primary, m_primary_queries->pool.get(), primary)) {
        return std::nullopt;
    }
    const auto on_worker = m_worker->calibrate_timestamps();
    const auto on_primary = m_primary->calibrate_timestamps();
    if (!on_worker || !on_primary) {
        return std::nullopt;
    }
    using Clock = std::chrono::steady_clock;
    const auto worker_bits = static_cast<std::uint32_t>(std::popcount(m_worker_queries->mask));
    const auto primary_bits = static_cast<std::uint32_t>(std::popcount(m_primary_queries->mask));
    const auto at = [](const TimestampCalibration& c, std::uint64_t ticks, std::uint32_t bits) {
        return Clock::time_point(std::chrono::nanoseconds(c.host_ns_of(ticks, bits)));
    };
    std::vector<BandGpuTimes> times(bands);
    for (std::uint32_t b = 0; b < bands; ++b) {
        times[b].worker_begin = at(*on_worker, worker[2 * b], worker_bits);
        times[b].worker_end = at(*on_worker, worker[2 * b + 1], worker_bits);
        times[b].primary_begin = at(*on_primary, primary[2 * b], primary_bits);
        times[b].primary_end = at(*on_primary, primary[2 * b + 1], primary_bits);
    }
    return times;
}

VkResult TransferLink::completed_primary_value(std::uint64_t& out) const noexcept {
    return m_primary_timeline->value(out);
}

bool TransferLink::failed() const noexcept {
    if (m_failed.load(std::memory_order_acquire)) {
        return true;
    }
    return m_bridge != nullptr && (m_bridge->state() == HostBridge::State::TimedOut ||
                                   m_bridge->state() == HostBridge::State::Failed);
}

void TransferLink::note_not_ready(int kind, std::uint64_t a, std::uint64_t b) noexcept {
    m_not_ready_a.store(a, std::memory_order_relaxed);
    m_not_ready_b.store(b, std::memory_order_relaxed);
    m_not_ready_kind.store(kind, std::memory_order_release);
}

std::string TransferLink::not_ready_reason() const {
    const int kind = m_not_ready_kind.load(std::memory_order_acquire);
    const auto a = std::to_string(m_not_ready_a.load(std::memory_order_relaxed));
    const auto b = std::to_string(m_not_ready_b.load(std::memory_order_relaxed));
    switch (kind) {
    case 1:
        return "the slot's previous transfer had not finished (primary timeline " + a + ", needs " +
               b + ")";
    case 2:
        return "the bridge's queue was full (" + a + " hand-offs pending, " + b + " more asked)";
    case 3:
        return "the worker's side of the slot's previous transfer (to worker value " + a +
               ") had not completed on the worker";
    default:
        return {};
    }
}

std::string TransferLink::error() const {
    {
        std::lock_guard lock(m_error_mutex);
        if (!m_error.empty()) {
            return m_error;
        }
    }
    if (m_bridge != nullptr && m_bridge->state() != HostBridge::State::Running) {
        return m_bridge->error();
    }
    return {};
}

void TransferLink::fail(VkResult result, const std::string& message) noexcept {
    try {
        std::lock_guard lock(m_error_mutex);
        if (m_error.empty()) {
            m_error = std::string(tandem::to_string(m_path)) + " transfer " +
                      m_worker_timeline->name() + ": " + message + " (" +
                      tandem::to_string(result) + ")";
        }
    } catch (...) {
        // Out of memory while describing the failure: the flag below still reports it.
    }
    // release: error() readers that see the flag also see the message.
    m_failed.store(true, std::memory_order_release);
}

} // namespace tandem::detail
