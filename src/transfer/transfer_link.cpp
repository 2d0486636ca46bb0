#include "transfer/transfer_link.hpp"

#include "core/capabilities.hpp"
#include "core/cpu.hpp"
#include "core/log.hpp"
#include "core/vk_check.hpp"
#include "tandem/error.hpp"
#include "transfer/host_imported_path.hpp"
#include "transfer/link_copy_queue.hpp"
#include "transfer/stream_hand_off.hpp"
#include "transfer/zero_copy_path.hpp"

namespace tandem::detail {
namespace {

constexpr VkPipelineStageFlags2 k_all = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;

} // namespace

TransferLink::TransferLink(const Device& worker, const Device& primary, const PairInfo& pair,
                           const TransferDesc& desc)
    : m_worker(&worker), m_primary(&primary), m_desc(desc),
      m_path(negotiate_path(pair, desc.forced)) {
    const bool same = m_path == TransferPath::SameDevice;
    if (same != (&worker == &primary)) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The same-device path needs one Device as worker and primary, and the other "
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
        log_debug("transfer", "{}: zero-copy cannot export {} images; {} instead", base,
                  format_name(desc.format), to_string(m_path));
    }
    // Same device and zero copy: no staging and no bands (one copy, or none). Shared memory is
    // whole unless bands are asked for: both of its copies run on one GPU, so bands overlap
    // nothing and cost a synchronisation each (H200, 1920x1080: 0.84 of the on-device copy in
    // 4 bands against 0.98 whole, 251 against 217 us).
    TransferObserver* observer = desc.observer.get();
    const bool no_bands = same || m_path == TransferPath::ZeroCopy;
    const std::vector<std::uint32_t> heights =
        no_bands || observer == nullptr ? std::vector<std::uint32_t>{} : observer->band_heights();
    const bool unbanded_by_default =
        m_path == TransferPath::SharedMemory && desc.band_rows == 0 && heights.empty();
    // In place (one side's images the staging itself): that side has no copy for a next band
    // to overlap, so one band. One side at most: the primary's when both are asked for.
    std::optional<InPlaceImage> in_place;
    StagingSide side = StagingSide::Primary;
    if (m_path == TransferPath::HostImported) {
        if (desc.read_in_place && primary.info().type == "cpu") {
            ImageDesc probe = primary_image_desc(base + " in-place image");
            probe.usage |= VK_IMAGE_USAGE_TRANSFER_SRC_BIT; // a task's inputs are copied from too
            in_place = HostImportedPath::probe_in_place(primary, probe);
        }
        if (!in_place && desc.write_in_place && worker.info().type == "cpu") {
            ImageDesc probe = worker_image_desc(base + " in-place image");
            probe.usage |= desc.worker_usage;
            in_place = HostImportedPath::probe_in_place(worker, probe);
            side = StagingSide::Worker;
        }
    }
    // In place, the staging's rows and slots are laid out as the images' are.
    const auto layout_for = [&](const InPlaceImage* image) {
        const bool whole = no_bands || unbanded_by_default || image != nullptr;
        return staging_layout_for(worker.info(), primary.info(), desc.width, desc.height,
                                  desc.format, desc.slots, whole ? desc.height : desc.band_rows,
                                  desc.hand_off == BandHandOff::Signal ? k_gated_bands
                                                                       : k_submitted_bands,
                                  heights, image);
    };
    StagingLayout layout = layout_for(in_place ? &*in_place : nullptr);
    m_backend = make_transfer_path(m_path, worker, primary, layout, desc.cuda_copier);
    std::string why;
    if (in_place &&
        !static_cast<HostImportedPath&>(*m_backend).place_in_staging(side, *in_place, why)) {
        log_debug("transfer", "{}: {} cannot use {}x{} {} images in place ({}); copied instead",
                  base, (side == StagingSide::Worker ? worker : primary).label(), desc.width,
                  desc.height, format_name(desc.format), why);
        // Banded again, as a copying link is.
        layout = layout_for(nullptr);
        m_backend = make_transfer_path(m_path, worker, primary, layout, desc.cuda_copier);
    }

    const bool gpu_wait = pair.gpu_side_sync && !m_backend->has_host_step();
    // A path with a stream of its copies (cuda-peer) is ordered on the GPUs where both devices
    // export timelines for it (StreamHandOff; a stream the host runs needs no export); else its
    // bridge runs the copies as a host step.
    const bool stream_exports = !m_backend->stream_signals_from_host();
    const bool streamed = !same && desc.stream_copies && m_backend->has_stream() &&
                          (!stream_exports || both_export_timelines(worker.info(), primary.info()));
    m_worker_timeline = std::make_unique<TimelineSemaphore>(
        worker, base + " worker timeline", 0, (gpu_wait || (streamed && stream_exports)) && !same);
    m_primary_timeline = std::make_unique<TimelineSemaphore>(primary, base + " primary timeline");
    m_failure = std::make_unique<LinkFailure>(std::string(tandem::to_string(m_path)) +
                                              " transfer " + m_worker_timeline->name());
    if (!same && observer != nullptr && observer->times_bands_on_gpus()) {
        m_timer = BandGpuTimer::create(worker, primary, desc.slots, layout.band_count, base);
    }
    m_recorder = std::make_unique<BandRecorder>(*m_backend, desc.slots, base, m_timer.get());
    if (!same) {
        HandOffContext context;
        context.primary = &primary;
        context.path = m_backend.get();
        context.recorder = m_recorder.get();
        context.worker_timeline = m_worker_timeline.get();
        context.primary_timeline = m_primary_timeline.get();
        context.failure = m_failure.get();
        context.observer = observer;
        BridgeOptions bridge;
        bridge.name = base + " bridge";
        bridge.pair = desc.bridge;
        bridge.timeout = desc.timeout;
        bridge.worker_progress = desc.worker_progress;
        bridge.spin = desc.bridge_spin.value_or(has_spare_cores() ? std::chrono::microseconds(1000)
                                                                  : std::chrono::microseconds(0));
        if (streamed) {
            try {
                m_hand_off = std::make_unique<StreamHandOff>(context, base);
            } catch (const Error& e) {
                log_info("transfer",
                         "{}: the {} path's copies run as the bridge's host step, not on a "
                         "stream: {}",
                         base, to_string(m_path), e.what());
            }
        }
        if (!m_hand_off) {
            m_hand_off = make_hand_off(context, gpu_wait, desc.hand_off, bridge);
        }
    }

    m_slots.resize(desc.slots);
    for (std::uint32_t s = 0; s < desc.slots && !same; ++s) {
        m_slots[s].worker_fence =
            create_fence(worker, base + " slot " + std::to_string(s) + " worker fence");
    }
    log_debug(
        "transfer", "{}: {} path, {} sync, {} slots, {} band(s) of {} rows, row pitch {} bytes{}{}",
        base, to_string(m_path), gpu_side_sync() ? "GPU-side" : "host-bridged", desc.slots,
        m_recorder->bands(), layout.band_rows, layout.row_pitch,
        gpu_times() ? ", bands timed on the GPUs" : "",
        reads_in_place() ? ", read in place" : (writes_in_place() ? ", written in place" : ""));
}

TransferLink::~TransferLink() {
    drain();
}

void TransferLink::drain() noexcept {
    if (m_primary_timeline == nullptr) {
        return;
    }
    const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(m_desc.timeout);
    if (m_hand_off) {
        m_hand_off->drain(m_desc.timeout);
    }
    // Whatever reached the primary's queue finishes by itself; so does the worker's side once
    // its wait is signalled. Waiting for both keeps command buffers and staging alive meanwhile.
    const std::uint64_t submitted = m_hand_off ? m_hand_off->primary_submitted() : m_primary_value;
    if (m_primary_timeline->wait(submitted, timeout) != VK_SUCCESS ||
        m_worker_timeline->wait(m_worker_value, timeout) != VK_SUCCESS) {
        log_error("transfer",
                  "{}: transfers still in flight at destruction (the worker's wait was never "
                  "signalled?)",
                  m_worker_timeline->name());
        return;
    }
    if (!m_desc.settle_on_destroy) {
        return;
    }
    // The last values reached; the batches behind them may still be finishing in the driver
    // (lavapipe releases a batch's wait semaphores after signalling). Destroy nothing before.
    const auto settle = [&](const Device& device) {
        if (device.settle(timeout) == VK_TIMEOUT) {
            log_error("transfer", "{}: transfer work still in flight at destruction",
                      device.label());
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
                           copy_queue(*m_worker).family()};
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
                           copy_queue(*m_primary).family()};
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

LinkImages TransferLink::create_images(std::uint32_t slot, const std::string& name,
                                       VkImageUsageFlags worker_usage,
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
    // In place, one side's image is the slot's staging (only the host-imported path has one).
    const auto* staging = reads_in_place() || writes_in_place()
                              ? static_cast<const HostImportedPath*>(m_backend.get())
                              : nullptr;
    out.worker = writes_in_place() ? staging->create_staging_image(StagingSide::Worker, slot, wd)
                                   : create_image(*m_worker, wd);
    out.primary = reads_in_place() ? staging->create_staging_image(StagingSide::Primary, slot, pd)
                                   : create_image(*m_primary, pd);
    return out;
}

VkResult TransferLink::check_slot_free(Slot& slot) noexcept {
    if (slot.primary_value != 0) {
        // The caller promises the slot's previous transfer finished; check rather than trust,
        // since reusing its command buffers and staging early would corrupt both transfers.
        std::uint64_t done = 0;
        const VkResult r = m_primary_timeline->value(done);
        if (r != VK_SUCCESS) {
            m_failure->fail(r, "reading the primary timeline failed");
            return r;
        }
        if (done < slot.primary_value) {
            note_not_ready(1, done, slot.primary_value);
            return VK_NOT_READY;
        }
    }
    // The worker's side of the slot's previous transfer, seen on the worker's device: the
    // primary's copy waited for it, so it is done, but the command buffers reset next may be
    // reused only once the worker's device says so (a GPU-side wait on another device is no
    // such word; the validation layer cannot tell either, from an exported timeline).
    if (slot.worker_fence_pending) {
        const VkResult status = vkGetFenceStatus(m_worker->handle(), slot.worker_fence.get());
        if (status == VK_NOT_READY) {
            note_not_ready(3, slot.worker_value, 0);
            return VK_NOT_READY;
        }
        VkFence fence = slot.worker_fence.get();
        const VkResult r =
            status == VK_SUCCESS ? vkResetFences(m_worker->handle(), 1, &fence) : status;
        if (r != VK_SUCCESS) {
            m_failure->fail(r, "the worker's fence of a transfer failed");
            return r;
        }
        slot.worker_fence_pending = false;
    }
    return VK_SUCCESS;
}

VkResult TransferLink::submit(std::uint32_t slot_index, VkImage worker_image,
                              VkImageLayout worker_layout, VkSemaphoreSubmitInfo worker_wait,
                              VkImage primary_image, VkImageLayout primary_layout,
                              TransferTicket& out) {
    (void)primary_layout; // the old contents are discarded whatever their layout
    if (failed()) {
        return VK_ERROR_UNKNOWN;
    }
    if (slot_index >= m_slots.size()) {
        return VK_NOT_READY;
    }
    Slot& slot = m_slots[slot_index];
    VkResult r = check_slot_free(slot);
    if (r != VK_SUCCESS) {
        return r;
    }
    const std::uint32_t bands = m_recorder->bands();
    std::size_t pending = 0;
    if (m_hand_off && !m_hand_off->can_take(bands, pending)) {
        note_not_ready(2, pending, bands);
        return VK_NOT_READY;
    }
    if (worker_wait.semaphore != VK_NULL_HANDLE) {
        worker_wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO;
        if (worker_wait.stageMask == 0) {
            worker_wait.stageMask = k_all;
        }
    }
    r = m_recorder->record(slot_index, worker_image, worker_layout, primary_image);
    if (r != VK_SUCCESS) {
        m_failure->fail(r, "recording transfer commands failed");
        return r;
    }
    const std::uint64_t first = m_worker_value + 1;
    const std::uint64_t primary_value = m_primary_value + 1;
    r = submit_worker_side(slot_index, worker_wait, first, primary_value);
    if (r != VK_SUCCESS) {
        return r;
    }
    m_worker_value = first + bands - 1;
    if (m_hand_off) {
        r = m_hand_off->hand({slot_index, bands, first, primary_value});
        if (r != VK_SUCCESS) {
            return r;
        }
    }
    m_primary_value = primary_value;
    slot.primary_value = primary_value;
    slot.worker_value = m_worker_value;
    out.worker_value = m_worker_value;
    out.primary_value = primary_value;
    return VK_SUCCESS;
}

VkResult TransferLink::submit_worker_side(std::uint32_t slot_index,
                                          const VkSemaphoreSubmitInfo& worker_wait,
                                          std::uint64_t first_value,
                                          std::uint64_t primary_value) noexcept {
    Slot& slot = m_slots[slot_index];
    const std::size_t waits = worker_wait.semaphore != VK_NULL_HANDLE ? 1 : 0;
    VkResult r = VK_SUCCESS;
    if (m_hand_off == nullptr) {
        // Same device: the one batch is the whole transfer, so it signals both timelines.
        const VkSemaphoreSubmitInfo signals[2] = {
            m_worker_timeline->submit_info(first_value, k_all),
            m_primary_timeline->submit_info(primary_value, k_all)};
        r = copy_queue(*m_worker).submit_one(m_recorder->worker_cmds(slot_index)[0],
                                             {&worker_wait, waits}, signals);
    } else {
        try {
            // One batch per band, each signalling its own worker value.
            BandBatches batches(m_recorder->worker_cmds(slot_index), *m_worker_timeline,
                                first_value, false);
            if (waits != 0) {
                batches.submits[0].waitSemaphoreInfoCount = 1;
                batches.submits[0].pWaitSemaphoreInfos = &worker_wait;
            }
            r = copy_queue(*m_worker).submit(batches.submits, slot.worker_fence.get());
        } catch (const std::bad_alloc&) {
            r = VK_ERROR_OUT_OF_HOST_MEMORY;
        }
        slot.worker_fence_pending = r == VK_SUCCESS;
    }
    if (r != VK_SUCCESS) {
        m_failure->fail(r, "submitting the worker side of a transfer failed");
    }
    return r;
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
    return m_timer->read(slot_index);
}

std::vector<RetirePoint> TransferLink::quiesce(std::chrono::milliseconds hand_off_wait) noexcept {
    if (m_hand_off) {
        m_hand_off->drain(hand_off_wait); // stops it: nothing is handed on after
    }
    const std::uint64_t primary = m_hand_off ? m_hand_off->primary_submitted() : m_primary_value;
    try {
        return {{m_worker, m_worker_timeline->handle(), m_worker_value},
                {m_primary, m_primary_timeline->handle(), primary}};
    } catch (...) {
        return {}; // out of memory: the caller cannot retire it through a list (it settles)
    }
}

bool TransferLink::may_wait_for(std::uint64_t primary_value) const noexcept {
    if (gpu_side_sync()) {
        return true;
    }
    if (m_hand_off->submits_ready_batches() && m_hand_off->primary_submitted() >= primary_value) {
        return true;
    }
    std::uint64_t done = 0;
    return completed_primary_value(done) == VK_SUCCESS && done >= primary_value;
}

VkResult TransferLink::completed_primary_value(std::uint64_t& out) const noexcept {
    return m_primary_timeline->value(out);
}

bool TransferLink::failed() const noexcept {
    return m_failure->failed() || (m_hand_off != nullptr && m_hand_off->failed());
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
    std::string error = m_failure->error();
    if (error.empty() && m_hand_off != nullptr) {
        error = m_hand_off->error();
    }
    return error;
}

} // namespace tandem::detail
