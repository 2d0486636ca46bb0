#include "runtime/task_inputs.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>

#include "core/atomic_max.hpp"
#include "core/cpu.hpp"
#include "core/log.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "runtime/task.hpp"
#include "runtime/worker.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

// Where a copy of the application's image may start and what it left behind: any writes of
// the application's before Tandem's batch, on any stage.
constexpr VkPipelineStageFlags2 k_before = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
constexpr VkAccessFlags2 k_written = VK_ACCESS_2_MEMORY_WRITE_BIT;
constexpr VkAccessFlags2 k_compute_read = VK_ACCESS_2_SHADER_SAMPLED_READ_BIT;

std::string usage_hex(VkImageUsageFlags usage) {
    std::array<char, 16> text{};
    (void)std::snprintf(text.data(), text.size(), "0x%x", static_cast<unsigned>(usage));
    return text.data();
}

bool needs_transition(VkImageLayout layout) noexcept {
    return layout != VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL && layout != VK_IMAGE_LAYOUT_GENERAL;
}

// A buffer input's bytes in its carrier image (buffer_carrier): whole rows, then what is left
// in the first texels of the last row. Buffer offsets are `offset` onwards.
struct CarrierRegions {
    std::array<VkBufferImageCopy, 2> regions{};
    std::uint32_t count = 0;
};

CarrierRegions carrier_regions(VkDeviceSize size, VkDeviceSize offset) noexcept {
    const VkExtent2D shape = buffer_carrier(size);
    const VkDeviceSize texels = size / 4;
    const auto rows = static_cast<std::uint32_t>(texels / shape.width);
    const auto rest = static_cast<std::uint32_t>(texels % shape.width);
    CarrierRegions out;
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    if (rows > 0) {
        region.bufferOffset = offset;
        region.imageExtent = {shape.width, rows, 1};
        out.regions[out.count++] = region;
    }
    if (rest > 0) {
        region.bufferOffset = offset + VkDeviceSize{rows} * shape.width * 4;
        region.imageOffset = {0, static_cast<std::int32_t>(rows), 0};
        region.imageExtent = {rest, 1, 1};
        out.regions[out.count++] = region;
    }
    return out;
}

} // namespace

VkExtent2D buffer_carrier(VkDeviceSize size) noexcept {
    const VkDeviceSize texels = std::max<VkDeviceSize>(size / 4, 1);
    const VkDeviceSize width = std::min<VkDeviceSize>(texels, k_carrier_width);
    return {static_cast<std::uint32_t>(width),
            static_cast<std::uint32_t>((texels + width - 1) / width)};
}

std::vector<TaskInputDesc> resolved_inputs(const TaskDesc& desc) {
    if (desc.inputs.size() > k_max_inputs) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Task '" + desc.name + "' declares " + std::to_string(desc.inputs.size()) +
                        " inputs",
                    "Give a task at most " + std::to_string(k_max_inputs) + " inputs");
    }
    std::vector<TaskInputDesc> out;
    std::set<std::string> names;
    for (TaskInputDesc input : desc.inputs) {
        const std::string what = "Input '" + input.name + "' of task '" + desc.name + "'";
        if (!names.insert(input.name).second) {
            throw Error(ErrorCategory::InvalidArgument, what + " is declared twice",
                        "Give each input a name of its own");
        }
        constexpr VkImageUsageFlags lendable = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                               VK_IMAGE_USAGE_STORAGE_BIT |
                                               VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        if ((input.usage & ~lendable) != 0 ||
            (input.usage != 0 && (input.buffer_size > 0 || input.producer))) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " asks for image usage " + usage_hex(input.usage),
                        "Give only an image input of the application's usage, and only "
                        "COLOR_ATTACHMENT, STORAGE or TRANSFER_DST (for rendering into lent "
                        "images; transfers and sampling are always allowed)");
        }
        if (input.application_usage != 0 && (input.buffer_size > 0 || input.producer)) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " states the application's image usage " +
                            usage_hex(input.application_usage) + " but takes no image of it",
                        "Leave application_usage 0 for a buffer input and a chained one");
        }
        if (input.buffer_size > 0) {
            if (input.producer) {
                throw Error(ErrorCategory::InvalidArgument,
                            what + " is a buffer (buffer_size " +
                                std::to_string(input.buffer_size) + ") and names a producer",
                            "A chained input is its producer's output image: leave buffer_size 0");
            }
            if (input.buffer_size % 4 != 0 || input.buffer_size > k_max_input_buffer) {
                throw Error(ErrorCategory::InvalidArgument,
                            what + " is a buffer of " + std::to_string(input.buffer_size) +
                                " bytes",
                            "Give a buffer input a multiple of 4 bytes, at most " +
                                std::to_string(k_max_input_buffer >> 20) + " MiB");
            }
            input.width = 0;
            input.height = 0;
            out.push_back(std::move(input));
            continue;
        }
        if (!is_input_format(input.format)) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " has format " + format_name(input.format) +
                            ", which Tandem does not carry between devices",
                        "Use RGBA8, BGRA8, RGBA16F, RG16F or R32F (depth as R32F)");
        }
        input.width = input.width == 0 ? desc.width : input.width;
        input.height = input.height == 0 ? desc.height : input.height;
        if (input.width > 16384 || input.height > 16384) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " has size " + std::to_string(input.width) + "x" +
                            std::to_string(input.height),
                        "Use a width and height from 1 to 16384 (0: the task's)");
        }
        out.push_back(std::move(input));
    }
    return out;
}

void prepare_inputs(TaskInstance& instance, const Device& primary,
                    std::span<const TaskInputDesc> all, bool compute_copies,
                    const InputLinkFactory& make_link) {
    // The application's inputs only: chained ones are read in place (task_chains.hpp).
    InstanceInputs& in = instance.inputs;
    std::vector<TaskInputDesc> inputs;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (!all[i].producer) {
            inputs.push_back(all[i]);
            in.declared.push_back(i);
            in.buffer_sizes.push_back(all[i].buffer_size);
        }
    }
    if (inputs.empty()) {
        return;
    }
    const Device& device = instance.worker->device();
    const std::string base = device.label() + " " + instance.desc.name;
    // Copied by a compute dispatch where the application's images may be sampled and the format
    // is one it moves exactly; Tandem's images of the input are then written as storage.
    std::vector<VkImageUsageFlags> storage(inputs.size(), 0);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (compute_copies && inputs[i].buffer_size == 0 &&
            (inputs[i].application_usage & VK_IMAGE_USAGE_SAMPLED_BIT) != 0 &&
            copies_by_compute(primary, inputs[i].format)) {
            storage[i] = VK_IMAGE_USAGE_STORAGE_BIT;
        }
    }
    if (!instance.same_device) {
        for (TaskInputDesc input : inputs) {
            if (input.buffer_size > 0) { // its bytes travel in an RGBA8 image
                const VkExtent2D shape = buffer_carrier(input.buffer_size);
                input.format = VK_FORMAT_R8G8B8A8_UNORM;
                input.width = shape.width;
                input.height = shape.height;
            }
            in.links.push_back(make_link(input));
        }
    }
    in.slots.resize(instance.desc.slots);
    for (std::uint32_t s = 0; s < instance.desc.slots; ++s) {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const std::string name =
                base + " input " + inputs[i].name + " slot " + std::to_string(s);
            InputSlot slot;
            if (inputs[i].buffer_size > 0) {
                BufferDesc b;
                b.size = inputs[i].buffer_size;
                b.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;
                b.preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
                b.name = name;
                slot.buffer = create_buffer(device, b);
            }
            if (instance.same_device) {
                if (inputs[i].buffer_size > 0) { // the submit copies into slot.buffer
                    in.slots[s].push_back(std::move(slot));
                    continue;
                }
                ImageDesc d;
                d.width = inputs[i].width;
                d.height = inputs[i].height;
                d.format = inputs[i].format;
                d.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                          VK_IMAGE_USAGE_SAMPLED_BIT | inputs[i].usage | storage[i];
                d.name = name;
                d.queue_families = {primary.queue(QueueRole::Main).family()};
                slot.source = create_image(primary, d);
            } else {
                // The primary's image: written by the submit's copy or, lent, by the
                // application (its usage); a loan that outlived a move is copied from. A path
                // whose images cannot also be storage keeps the copy command for the input.
                const VkImageUsageFlags sent = VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                                               VK_IMAGE_USAGE_TRANSFER_SRC_BIT | inputs[i].usage;
                const VkImageUsageFlags received = VK_IMAGE_USAGE_SAMPLED_BIT |
                                                   VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                                   VK_IMAGE_USAGE_TRANSFER_DST_BIT;
                SlotImages images;
                bool made = false;
                if (storage[i] != 0) {
                    try {
                        images = in.links[i]->create_images(s, name, sent | storage[i], received);
                        made = true;
                    } catch (const Error& e) {
                        if (s > 0) {
                            throw; // the slots before it were made with storage
                        }
                        log_info("runtime",
                                 "{}: its images cannot be storage images on this path ({}); its "
                                 "copies at submit are the copy command's",
                                 name, e.what());
                        storage[i] = 0;
                    }
                }
                if (!made) {
                    images = in.links[i]->create_images(s, name, sent, received);
                }
                slot.source = std::move(images.sender);
                slot.target = std::move(images.receiver);
            }
            if (storage[i] != 0 && !slot.source.view) {
                slot.source.view =
                    create_image_view(primary, slot.source.get(), inputs[i].format, name);
            }
            in.slots[s].push_back(std::move(slot));
        }
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        in.compute.push_back(storage[i] == 0 ? nullptr
                                             : std::make_unique<ComputeCopy>(
                                                   primary, inputs[i].format, instance.desc.slots,
                                                   base + " input " + inputs[i].name + " copy"));
    }
    in.pool = CommandPool(primary, primary.queue(QueueRole::Main).family(), base + " input copies");
    for (std::uint32_t s = 0; s < instance.desc.slots; ++s) {
        in.cmds.push_back(in.pool.allocate(base + " input copies slot " + std::to_string(s)));
    }
    in.recorded.resize(instance.desc.slots);
    in.timer = JobTimer::create(primary, instance.desc.slots, base + " input copies");
    in.copied.assign(instance.desc.slots, 0);
    in.copy_results = std::make_unique<std::atomic<VkResult>[]>(instance.desc.slots);
    for (std::uint32_t s = 0; s < instance.desc.slots; ++s) {
        in.copy_results[s].store(VK_SUCCESS, std::memory_order_relaxed);
    }
    // Lendable (an image input): each slot's loan semaphore (InputLoan::written).
    if (std::any_of(in.buffer_sizes.begin(), in.buffer_sizes.end(),
                    [](VkDeviceSize size) { return size == 0; })) {
        for (std::uint32_t s = 0; s < instance.desc.slots; ++s) {
            in.signals.push_back(LoanSignal{
                TimelineSemaphore(primary, base + " loan writes slot " + std::to_string(s))});
        }
    }
}

InputCopier::InputCopier(const Device& primary, bool deferred)
    : m_primary(primary), m_timeline(primary, "tandem input timeline"), m_deferred(deferred) {
    if (m_deferred) {
        m_thread = start_logged_thread([this] { run(); });
    }
}

InputCopier::~InputCopier() {
    stop();
}

void InputCopier::stop() noexcept {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

bool InputCopier::push_pending(const Pending& batch) noexcept {
    if (m_ring_count == m_ring.size()) {
        try {
            std::vector<Pending> grown(std::max<std::size_t>(4, m_ring.size() * 2));
            for (std::size_t i = 0; i < m_ring_count; ++i) {
                grown[i] = m_ring[(m_ring_head + i) % m_ring.size()];
            }
            m_ring.swap(grown);
            m_ring_head = 0;
        } catch (...) {
            return false;
        }
    }
    m_ring[(m_ring_head + m_ring_count) % m_ring.size()] = batch;
    ++m_ring_count;
    return true;
}

InputCopier::Pending InputCopier::pop_pending() noexcept {
    const Pending batch = m_ring[m_ring_head];
    m_ring_head = (m_ring_head + 1) % m_ring.size();
    --m_ring_count;
    return batch;
}

void InputCopier::wake_owed() noexcept {
    if (m_wake_owed.load(std::memory_order_acquire) &&
        m_wake_owed.exchange(false, std::memory_order_acq_rel)) {
        m_wake.notify_one();
    }
}

void InputCopier::run() noexcept {
    for (;;) {
        Pending batch;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stopping || m_ring_count > 0; });
            if (m_ring_count == 0) {
                return; // stopping, and every batch queued was submitted
            }
            batch = pop_pending();
        }
        if (batch.instance != nullptr && batch.instance->inputs.timer) {
            // The slot's last copy ran (slot_ready, at submit): its time, before this one's
            // overwrites it; off the application's thread too.
            if (const std::optional<JobTime> t = batch.instance->inputs.timer->reuse(batch.slot)) {
                try {
                    std::lock_guard lock(batch.instance->owner->mutex);
                    batch.instance->owner->counts.input_copy_gpu.add(*t);
                } catch (...) {
                    // Out of memory keeping a sample: the statistics miss one.
                }
            }
        }
        // Read before the submit: once it ran, the instance may go at any time.
        Worker* const worker = batch.instance != nullptr ? batch.instance->worker : nullptr;
        submit_pending(batch);
        if (worker != nullptr) {
            worker->wake(); // its job, queued without a wake-up of the application's thread
        }
    }
}

void InputCopier::submit_pending(Pending& batch) noexcept {
    VkResult r = VK_SUCCESS;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    if (batch.instance != nullptr) {
        r = prepare_commands(*batch.instance, batch.slot, batch.inputs.span(), batch.lent);
        cmd = batch.instance->inputs.cmds[batch.slot];
    }
    if (r == VK_SUCCESS) {
        // Before the submit: once it ran, the instance may go at any time.
        if (batch.instance != nullptr && batch.instance->inputs.timer) {
            batch.instance->inputs.timer->submitted(batch.slot, batch.value);
        }
        const VkSemaphoreSubmitInfo signal =
            m_timeline.submit_info(batch.value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        r = vk_status(
            m_primary.queue(QueueRole::Main).submit_one(cmd, batch.waits.span(), {&signal, 1}),
            cmd != VK_NULL_HANDLE ? "input copies submit" : "input timeline submit");
    }
    if (r != VK_SUCCESS) {
        // Its job fails (copy_submitted); the value is reached all the same, after the ones
        // before it, so that nothing waiting for it (the instance's retirement) waits forever.
        if (batch.instance != nullptr) {
            batch.instance->inputs.copy_results[batch.slot].store(r, std::memory_order_relaxed);
        }
        log_error("runtime", "{}: the copy of a task's inputs could not be submitted ({})",
                  m_primary.label(), tandem::to_string(r));
        if (m_timeline.wait(batch.value - 1, std::chrono::seconds(5)) != VK_SUCCESS ||
            m_timeline.signal(batch.value) != VK_SUCCESS) {
            log_error("runtime", "{}: the input timeline could not pass value {}",
                      m_primary.label(), batch.value);
        }
    }
    m_submitted.store(batch.value, std::memory_order_release);
}

VkResult InputCopier::copy_submitted(const TaskInstance& instance, std::uint32_t slot,
                                     std::string& why) const noexcept {
    const std::uint64_t value = instance.inputs.copied[slot];
    if (!m_deferred || value == 0) {
        return VK_SUCCESS;
    }
    if (m_submitted.load(std::memory_order_acquire) < value) {
        return VK_NOT_READY;
    }
    const VkResult r = instance.inputs.copy_results[slot].load(std::memory_order_relaxed);
    if (r != VK_SUCCESS) {
        try {
            why = "the copy of the inputs of task '" + instance.desc.name +
                  "' could not be submitted to the primary's queue (" +
                  std::string(tandem::to_string(r)) + ")";
        } catch (...) {
            // Out of memory: the failure is reported without its sentence.
        }
    }
    return r;
}

bool InputCopier::copy_queued(const TaskInstance& instance, std::uint32_t slot) const noexcept {
    if (!m_deferred || slot >= instance.inputs.copied.size()) {
        return false;
    }
    const std::uint64_t value = instance.inputs.copied[slot];
    return value != 0 && m_submitted.load(std::memory_order_acquire) < value;
}

std::string InputCopier::check(const TaskInstance& instance, std::span<const InputImage> inputs) {
    const std::vector<std::size_t>& declared = instance.inputs.declared;
    if (inputs.size() != declared.size()) {
        const std::size_t chained = instance.desc.inputs.size() - declared.size();
        return "task '" + instance.desc.name + "' declares " + std::to_string(declared.size()) +
               " input(s)" +
               (chained > 0 ? " of the application's (and " + std::to_string(chained) +
                                  " chained, never named at submit)"
                            : std::string()) +
               " and the submit named " + std::to_string(inputs.size());
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string& name = instance.desc.inputs[declared[i]].name;
        if (instance.inputs.buffer_sizes[i] > 0) {
            if (inputs[i].buffer == VK_NULL_HANDLE) {
                return "input '" + name + "' of task '" + instance.desc.name +
                       "' is a buffer and the submit names no buffer (VK_NULL_HANDLE)";
            }
            if (inputs[i].buffer_offset % 4 != 0) {
                return "input '" + name + "' of task '" + instance.desc.name +
                       "' starts at buffer offset " + std::to_string(inputs[i].buffer_offset) +
                       ", which is not a multiple of 4";
            }
            continue;
        }
        if (inputs[i].image == VK_NULL_HANDLE) {
            return "input '" + name + "' of task '" + instance.desc.name +
                   "' names no image (VK_NULL_HANDLE)";
        }
        if (inputs[i].layout == VK_IMAGE_LAYOUT_UNDEFINED ||
            inputs[i].layout == VK_IMAGE_LAYOUT_PREINITIALIZED) {
            return "input '" + name + "' of task '" + instance.desc.name +
                   "' is in layout UNDEFINED: give the layout its writes leave it in";
        }
    }
    return {};
}

bool InputCopier::slot_ready(const TaskInstance& instance, std::uint32_t slot) const noexcept {
    const std::uint64_t needed = instance.inputs.copied[slot];
    if (needed == 0) {
        return true;
    }
    if (m_seen_reached.load(std::memory_order_acquire) >= needed) {
        return true; // reached before: the usual case, without a call into the driver
    }
    std::uint64_t done = 0;
    if (m_timeline.value(done) != VK_SUCCESS) {
        return false;
    }
    raise_to(m_seen_reached, done, std::memory_order_release);
    return done >= needed;
}

VkResult InputCopier::record(TaskInstance& instance, std::uint32_t slot,
                             std::span<const InputImage> inputs, std::uint32_t lent,
                             bool once) noexcept {
    InstanceInputs& in = instance.inputs;
    std::vector<InputSlot>& images = in.slots[slot];
    const bool to_link = !instance.same_device;
    VkCommandBuffer cmd = in.cmds[slot];
    VkResult r = vk_status(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer input copies");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = once ? VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT : 0;
    if (r == VK_SUCCESS) {
        r = vk_status(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer input copies");
    }
    if (r != VK_SUCCESS) {
        return r;
    }
    m_primary.begin_label(cmd, (instance.desc.name + " inputs").c_str());
    // Every earlier command of the queue (the application's writes of the images, which the
    // copies read, among them) before the copies. First, so that the timestamps bracket the
    // copies' own time, not the queue's earlier work they wait for.
    memory_barrier(cmd, k_before, k_written, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                   VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT | k_compute_read |
                       VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    if (in.timer) {
        in.timer->begin(cmd, slot);
    }
    // Three steps, each one call for every input: the layouts the copies need (the slot's
    // images are rewritten whole: their contents before may go), the copies, the layouts after
    // (the application's images back in theirs; across devices the link copies, or hands over,
    // from TRANSFER_SRC_OPTIMAL; on the primary the job samples them).
    std::array<VkImageMemoryBarrier2, 2 * k_max_inputs> before{};
    std::array<VkImageMemoryBarrier2, 2 * k_max_inputs> after{};
    std::uint32_t n_before = 0;
    std::uint32_t n_after = 0;
    const VkImageLayout slot_after =
        to_link ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    // Bit i: input i copied by a compute dispatch (InstanceInputs::compute): not lent, and its
    // image named for no other input (which the copy command reads, in another layout).
    std::uint32_t by_compute = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (in.compute[i] != nullptr && ((lent >> i) & 1u) == 0 &&
            std::count_if(inputs.begin(), inputs.end(), [&](const InputImage& other) {
                return other.image == inputs[i].image;
            }) == 1) {
            by_compute |= 1u << i;
        }
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const InputImage& from = inputs[i];
        const VkImage to = images[i].source.get();
        if (in.buffer_sizes[i] > 0 && !to_link) {
            continue; // buffer to buffer: the barrier above covers it
        }
        if ((lent >> i) & 1u) { // the application wrote the slot's image itself
            if (from.layout != slot_after) {
                before[n_before++] =
                    image_barrier_info(to, from.layout, slot_after, k_before, k_written,
                                       VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
            }
            continue;
        }
        // An image named for two inputs changes layout once.
        const bool named_before =
            std::any_of(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(i),
                        [&](const InputImage& other) { return other.image == from.image; });
        if ((by_compute >> i) & 1u) {
            if (const VkImageLayout read = sampled_layout(from.layout); read != from.layout) {
                before[n_before++] =
                    image_barrier_info(from.image, from.layout, read, k_before, k_written,
                                       VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, k_compute_read);
                after[n_after++] = image_barrier_info(
                    from.image, read, from.layout, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                    VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
            }
            before[n_before++] = image_barrier_info(
                to, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, k_before, VK_ACCESS_2_NONE,
                VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
            after[n_after++] = image_barrier_info(
                to, VK_IMAGE_LAYOUT_GENERAL, slot_after, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                VK_ACCESS_2_NONE);
            continue;
        }
        if (in.buffer_sizes[i] == 0 && needs_transition(from.layout) && !named_before) {
            before[n_before++] = image_barrier_info(
                from.image, from.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, k_before, k_written,
                VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
            after[n_after++] =
                image_barrier_info(from.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, from.layout,
                                   VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                                   VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
        }
        before[n_before++] = image_barrier_info(
            to, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, k_before,
            VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        after[n_after++] = image_barrier_info(
            to, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, slot_after, VK_PIPELINE_STAGE_2_COPY_BIT,
            VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
    }
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.imageMemoryBarrierCount = n_before;
    dep.pImageMemoryBarriers = before.data();
    if (n_before > 0) {
        vkCmdPipelineBarrier2(cmd, &dep);
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const InputImage& from = inputs[i];
        const InputSlot& to = images[i];
        if ((lent >> i) & 1u) {
            continue;
        }
        if (const VkDeviceSize size = in.buffer_sizes[i]; size > 0) {
            if (to_link) {
                const CarrierRegions c = carrier_regions(size, from.buffer_offset);
                vkCmdCopyBufferToImage(cmd, from.buffer, to.source.get(),
                                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, c.count,
                                       c.regions.data());
            } else {
                const VkBufferCopy region{from.buffer_offset, 0, size};
                vkCmdCopyBuffer(cmd, from.buffer, to.buffer.buffer.get(), 1, &region);
            }
            continue;
        }
        if ((by_compute >> i) & 1u) {
            if (const VkResult made = in.compute[i]->record(
                    cmd, slot, from.image, sampled_layout(from.layout), from.view,
                    to.source.view.get(), to.source.extent, images[i].application_view);
                made != VK_SUCCESS) {
                static_cast<void>(vkEndCommandBuffer(cmd));
                return made;
            }
            continue;
        }
        copy_whole_image(cmd, from.image,
                         needs_transition(from.layout) ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL
                                                       : from.layout,
                         to.source.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, to.source.extent);
    }
    // The copies' writes (a buffer's, on the primary, which the job reads) before what follows.
    const VkMemoryBarrier2 written{
        VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
        nullptr,
        VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
        VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
        VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
        VK_ACCESS_2_NONE};
    dep.memoryBarrierCount = 1;
    dep.pMemoryBarriers = &written;
    dep.imageMemoryBarrierCount = n_after;
    dep.pImageMemoryBarriers = after.data();
    vkCmdPipelineBarrier2(cmd, &dep);
    if (in.timer) {
        in.timer->end(cmd, slot);
    }
    m_primary.end_label(cmd);
    return vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer input copies");
}

VkResult InputCopier::copy(TaskInstance& instance, std::uint32_t slot,
                           std::span<const InputImage> inputs, std::uint32_t lent,
                           std::uint64_t& value) noexcept {
    InstanceInputs& in = instance.inputs;
    std::vector<InputSlot>& images = in.slots[slot];
    const bool to_link = !instance.same_device;
    VkCommandBuffer cmd = in.cmds[slot];
    if (in.timer && !m_deferred) { // deferred: the copier's thread reads it (run)
        // The slot's last copy ran (slot_ready): its time, before this one's overwrites it.
        if (const std::optional<JobTime> t = in.timer->reuse(slot)) {
            try {
                instance.owner->counts.input_copy_gpu.add(*t); // under the task's mutex
            } catch (...) {
                // Out of memory keeping a sample: the statistics miss one.
            }
        }
    }
    const bool all_lent = !inputs.empty() && lent == (1u << inputs.size()) - 1;
    // Every input lent and signalled by the slot's loan semaphore: nothing to submit. The job's
    // side waits for the application's signal and changes the layouts (CopiedInput).
    if (slot < in.signals.size()) {
        LoanSignal& signal = in.signals[slot];
        // The value need not be compared: match_loan refused any other than the loan's.
        signal.job_waits =
            all_lent && std::all_of(inputs.begin(), inputs.end(), [&](const InputImage& input) {
                return input.wait_semaphore == signal.semaphore.handle();
            });
        if (signal.job_waits) {
            signal.named = signal.lent;
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                images[i].lent_layout = inputs[i].layout;
                images[i].to_send = to_link;
            }
            in.copied[slot] = 0;
            value = 0;
            return VK_SUCCESS;
        }
    }
    // Every input lent: the batch only changes the images' layouts, from those the application
    // left them in, the same commands each time they are the same: recorded once for the slot
    // and submitted again (the application thread's cost is then the submit alone).
    // Deferred, the copier's thread records them.
    if (!m_deferred) {
        if (const VkResult r = prepare_commands(instance, slot, inputs, lent); r != VK_SUCCESS) {
            return r;
        }
    }
    Pending pending;
    bool fits = true;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].wait_semaphore != VK_NULL_HANDLE) {
            fits = fits && pending.waits.push_back(semaphore_submit_info(
                               inputs[i].wait_semaphore, inputs[i].wait_value, k_before));
        }
        // The link's last read of the slot's copy (its download, on the primary).
        if (to_link && images[i].source_free > 0) {
            fits = fits && pending.waits.push_back(semaphore_submit_info(
                               in.links[i]->sender_semaphore(), images[i].source_free, k_before));
        }
    }
    if (m_deferred) {
        pending.instance = &instance;
        pending.slot = slot;
        fits = fits && pending.inputs.assign(inputs);
        pending.lent = lent;
        in.copy_results[slot].store(VK_SUCCESS, std::memory_order_relaxed);
    }
    if (!fits) { // more than k_max_inputs: InputCopier::check refused them before
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    std::uint64_t next = 0;
    // The copier's thread is woken once the task's lock is released (wake_owed): woken here, it
    // would wait for that lock (its timings) and the release would have to wake it again.
    const VkResult r = submit_batch(cmd, next, pending, false);
    if (r != VK_SUCCESS) {
        return r;
    }
    if (in.timer && !m_deferred) { // deferred: once the copier's thread submitted it
        in.timer->submitted(slot, next);
    }
    for (InputSlot& image : images) {
        image.to_send = to_link;
    }
    in.copied[slot] = next;
    in.last_copy = next;
    value = next;
    return VK_SUCCESS;
}

VkResult InputCopier::prepare_commands(TaskInstance& instance, std::uint32_t slot,
                                       std::span<const InputImage> inputs,
                                       std::uint32_t lent) noexcept {
    // Every input lent: the batch only changes the images' layouts, from those the application
    // left them in, the same commands each time they are the same: recorded once for the slot
    // and submitted again (the application thread's cost is then the submit alone).
    const bool all_lent = !inputs.empty() && lent == (1u << inputs.size()) - 1;
    RecordedBatch& recorded = instance.inputs.recorded[slot];
    bool same = all_lent && recorded.all_lent && recorded.layouts.size() == inputs.size();
    for (std::size_t i = 0; same && i < inputs.size(); ++i) {
        same = recorded.layouts[i] == inputs[i].layout;
    }
    if (same) {
        return VK_SUCCESS;
    }
    recorded.all_lent = false; // until recorded
    const VkResult r = record(instance, slot, inputs, lent, !all_lent);
    if (r != VK_SUCCESS) {
        return r;
    }
    if (all_lent) {
        try {
            recorded.layouts.clear();
            for (const InputImage& input : inputs) {
                recorded.layouts.push_back(input.layout);
            }
            recorded.all_lent = true;
        } catch (...) {
            // Out of memory: recorded again next time.
        }
    }
    return VK_SUCCESS;
}

VkResult InputCopier::submit_batch(VkCommandBuffer cmd, std::uint64_t& value,
                                   const Pending& pending, bool wake_now) noexcept {
    std::unique_lock lock(m_mutex);
    const std::uint64_t next = m_value + 1;
    if (m_deferred) {
        Pending queued = pending;
        queued.value = next;
        if (m_stopping) {
            // Stopped (shutdown): submitted here, in order after everything the thread submitted.
            submit_pending(queued);
        } else if (!push_pending(queued)) {
            return VK_ERROR_OUT_OF_HOST_MEMORY;
        }
        m_value = next;
        value = next;
        lock.unlock();
        if (wake_now) {
            m_wake.notify_one();
        } else {
            m_wake_owed.store(true, std::memory_order_release);
        }
        return VK_SUCCESS;
    }
    const VkSemaphoreSubmitInfo signal =
        m_timeline.submit_info(next, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    const VkResult r = vk_status(
        m_primary.queue(QueueRole::Main).submit_one(cmd, pending.waits.span(), {&signal, 1}),
        cmd != VK_NULL_HANDLE ? "input copies submit" : "input timeline submit");
    if (r == VK_SUCCESS) {
        m_value = next;
        value = next;
    }
    return r;
}

VkResult InputCopier::lend(TaskInstance& instance, std::uint32_t slot, std::uint64_t last_work,
                           std::uint64_t& value) noexcept {
    InstanceInputs& in = instance.inputs;
    Pending pending;
    BatchWaits& waits = pending.waits;
    bool fits = true;
    if (instance.same_device) {
        if (last_work > 0) { // the job that read the slot's images last
            fits = waits.push_back(semaphore_submit_info(instance.worker->work_timeline().handle(),
                                                         last_work,
                                                         VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
        }
    } else {
        for (std::size_t i = 0; i < in.links.size(); ++i) {
            if (const std::uint64_t free = in.slots[slot][i].source_free; free > 0) {
                fits = fits &&
                       waits.push_back(semaphore_submit_info(in.links[i]->sender_semaphore(), free,
                                                             VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
            }
        }
    }
    if (!fits) { // more links than k_max_inputs: prepare_inputs made no more
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    // Usually those reads completed long ago (the slot is free once its job completed, which
    // waited for them): then the application may write at once, and no batch is submitted.
    bool done = true;
    for (const VkSemaphoreSubmitInfo& w : waits) {
        std::uint64_t reached = 0;
        done =
            done &&
            vkGetSemaphoreCounterValue(m_primary.handle(), w.semaphore, &reached) == VK_SUCCESS &&
            reached >= w.value;
    }
    if (done) {
        return m_timeline.value(value); // a value reached already
    }
    std::uint64_t next = 0;
    const VkResult r = submit_batch(VK_NULL_HANDLE, next, pending, true);
    if (r != VK_SUCCESS) {
        return r;
    }
    in.copied[slot] = next;
    in.last_copy = next;
    value = next;
    return VK_SUCCESS;
}

VkResult InputCopier::fence(TaskInstance& instance) noexcept {
    std::uint64_t next = 0;
    const VkResult r = submit_batch(VK_NULL_HANDLE, next, Pending{}, true);
    if (r == VK_SUCCESS) {
        instance.inputs.last_copy = next;
    }
    return r;
}

void record_input_prelude(const TaskInstance& instance, std::uint32_t slot,
                          VkCommandBuffer cmd) noexcept {
    const InstanceInputs& in = instance.inputs;
    if (in.empty()) {
        return;
    }
    if (instance.same_device) {
        // Lent images the application signalled itself: from the layout its submit named to
        // the one the workload reads, after its writes (the job's batch waited for them).
        if (!in.signalled(slot)) {
            return;
        }
        std::array<VkImageMemoryBarrier2, k_max_inputs> barriers{};
        std::uint32_t n = 0;
        for (const InputSlot& input : in.slots[slot]) {
            if (input.lent_layout != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL) {
                barriers[n++] = image_barrier_info(
                    input.source.get(), input.lent_layout, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                    VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                    VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
            }
        }
        if (n > 0) {
            VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
            dep.imageMemoryBarrierCount = n;
            dep.pImageMemoryBarriers = barriers.data();
            vkCmdPipelineBarrier2(cmd, &dep);
        }
        return;
    }
    for (std::size_t i = 0; i < in.buffer_sizes.size(); ++i) {
        const VkDeviceSize size = in.buffer_sizes[i];
        if (size == 0) {
            continue;
        }
        const InputSlot& input = in.slots[slot][i];
        const VkImage carrier = input.target.get();
        // Where the link left it (GENERAL when read in place, copied from as it is).
        const VkImageLayout arrived = input.target_layout;
        const VkImageLayout copied = arrived == VK_IMAGE_LAYOUT_GENERAL
                                         ? VK_IMAGE_LAYOUT_GENERAL
                                         : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        // The arrival (the job's batch waited for it) before the copy reads; the slot's last
        // job (which may have written the buffer) before the copy writes.
        image_barrier(cmd, carrier, arrived, copied, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                      VK_ACCESS_2_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                      VK_ACCESS_2_TRANSFER_READ_BIT);
        memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                       VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const CarrierRegions c = carrier_regions(size, 0);
        vkCmdCopyImageToBuffer(cmd, carrier, copied, input.buffer.buffer.get(), c.count,
                               c.regions.data());
        image_barrier(cmd, carrier, copied, arrived, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
        memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                       VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
    }
}

CopiedInput::CopiedInput(const TaskInstance& instance, std::size_t declared, std::size_t index)
    : InputSource(declared), m_index(index),
      m_link(index < instance.inputs.links.size() ? instance.inputs.links[index].get() : nullptr) {}

namespace {

// What the slot's inputs wait for: Tandem's copy at submit, or the application's signal of the
// slot's loan semaphore when its submit submitted nothing. NotYet while the copy is still queued
// on the copier's thread.
Gathered written_by(const TaskInstance& instance, std::uint32_t slot, const InputCopier& copies,
                    VkSemaphoreSubmitInfo& written, std::string& why) noexcept {
    const InstanceInputs& in = instance.inputs;
    if (in.signalled(slot)) {
        written = in.signals[slot].semaphore.submit_info(in.signals[slot].named,
                                                         VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        return Gathered::Ready;
    }
    switch (copies.copy_submitted(instance, slot, why)) {
    case VK_SUCCESS:
        written =
            copies.timeline().submit_info(in.copied[slot], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        return Gathered::Ready;
    case VK_NOT_READY:
        return Gathered::NotYet;
    default:
        return Gathered::Failed;
    }
}

} // namespace

Gathered CopiedInput::send(TaskInstance& instance, std::uint32_t slot, const InputCopier& copies,
                           std::string& why, bool ahead) noexcept {
    InstanceInputs& in = instance.inputs;
    VkSemaphoreSubmitInfo written{};
    if (const Gathered g = written_by(instance, slot, copies, written, why); g != Gathered::Ready) {
        return g;
    }
    InputSlot& image = in.slots[slot][m_index];
    SlotTicket ticket;
    const VkResult r = m_link->submit(slot, image.source.get(),
                                      in.signalled(slot) ? image.lent_layout
                                                         : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                      written, image.target.get(), image.target_layout, ticket);
    if (r == VK_NOT_READY) {
        return Gathered::LinkBusy;
    }
    if (r != VK_SUCCESS) {
        try {
            why = "input '" + instance.desc.inputs[declared()].name + "' could not be sent to " +
                  instance.worker->label() + " on " + m_link->path_name() + ": " +
                  (m_link->failed() ? m_link->error() : std::string(tandem::to_string(r)));
        } catch (...) {
            // Out of memory for the sentence: the job fails with the default one.
        }
        return Gathered::Failed;
    }
    image.to_send = false;
    // Relaxed: counters for statistics, ordering nothing.
    instance.owner->counts.input_sends.fetch_add(1, std::memory_order_relaxed);
    if (ahead) {
        instance.owner->counts.input_sends_early.fetch_add(1, std::memory_order_relaxed);
    }
    image.target_layout = m_link->receiver_layout_after();
    image.source_free = ticket.sender_value;
    image.arrived = ticket.receiver_value;
    return Gathered::Ready;
}

Gathered CopiedInput::send_ahead(TaskInstance& instance, std::uint32_t slot,
                                 const InputCopier& copies) noexcept {
    if (m_link == nullptr || !instance.inputs.slots[slot][m_index].to_send) {
        return Gathered::Ready;
    }
    std::string why; // the job's own turn reports a failure
    return send(instance, slot, copies, why, true);
}

Gathered CopiedInput::gather(TaskInstance& instance, std::uint32_t slot, const InputCopier& copies,
                             JobInput& input, std::vector<VkSemaphoreSubmitInfo>& waits,
                             std::string& why) noexcept {
    const InstanceInputs& in = instance.inputs;
    const InputSlot& image = in.slots[slot][m_index];
    try {
        if (m_link == nullptr) {
            // On the primary: the job waits for the copy (or the application's signal) itself.
            VkSemaphoreSubmitInfo written{};
            if (const Gathered g = written_by(instance, slot, copies, written, why);
                g != Gathered::Ready) {
                return g;
            }
            add_wait(waits, written);
        } else {
            if (image.to_send) {
                if (const Gathered g = send(instance, slot, copies, why, false);
                    g != Gathered::Ready) {
                    return g;
                }
            }
            if (m_link->failed()) {
                why = "an input's link failed: " + m_link->error();
                return Gathered::Failed;
            }
            if (!m_link->may_wait_for(image.arrived)) {
                return Gathered::NotYet; // a host bridge submits the receiving side later
            }
            add_wait(waits, semaphore_submit_info(m_link->receiver_semaphore(), image.arrived,
                                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
        }
    } catch (...) {
        why = "out of memory sending its inputs";
        return Gathered::Failed;
    }
    if (const VkDeviceSize size = in.buffer_sizes[m_index]; size > 0) {
        input.buffer = image.buffer.buffer.get();
        input.size = size;
        return Gathered::Ready;
    }
    const Image& read = image.read();
    input.image = read.get();
    input.view = read.view.get();
    // Where its link left it (GENERAL where the device reads the link's staging in place).
    input.layout =
        image.target.image ? image.target_layout : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    input.format = read.format;
    input.extent = read.extent;
    return Gathered::Ready;
}

bool inputs_to_send(const TaskInstance& instance, std::uint32_t slot) noexcept {
    const InstanceInputs& in = instance.inputs;
    return !in.links.empty() && std::any_of(in.slots[slot].begin(), in.slots[slot].end(),
                                            [](const InputSlot& image) { return image.to_send; });
}

bool inputs_to_send_ahead(const TaskInstance& instance, std::uint32_t slot) noexcept {
    return !instance.inputs.signalled(slot) && inputs_to_send(instance, slot);
}

} // namespace tandem::detail
