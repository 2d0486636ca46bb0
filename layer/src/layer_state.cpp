#include "layer_state.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "layer_log.hpp"

namespace tandem::layer {

std::optional<bool> InstanceRecord::known_blits(VkPhysicalDevice physical,
                                                VkSurfaceKHR surface) const {
    const std::lock_guard lock(m_surfaces_mutex);
    const auto found = m_blits.find({physical, surface});
    return found != m_blits.end() ? std::optional<bool>(found->second) : std::nullopt;
}

void InstanceRecord::note_blits(VkPhysicalDevice physical, VkSurfaceKHR surface, bool blits) const {
    const std::lock_guard lock(m_surfaces_mutex);
    m_blits[{physical, surface}] = blits;
}

void InstanceRecord::forget_surface(VkSurfaceKHR surface) const {
    const std::lock_guard lock(m_surfaces_mutex);
    std::erase_if(m_blits, [&](const auto& entry) { return entry.first.second == surface; });
}

bool DeviceRecord::abandon_generation() noexcept {
    std::vector<std::shared_ptr<SwapchainGeneration>> presenting;
    {
        const std::lock_guard lock(m_mutex);
        for (auto& entry : m_swapchains) {
            try {
                if (entry.second.generation) {
                    presenting.push_back(entry.second.generation);
                    // Deliberately never freed: see the declaration.
                    static_cast<void>(new std::shared_ptr<SwapchainGeneration>(
                        std::move(entry.second.generation)));
                }
                if (entry.second.scaled) {
                    // Its images are the device's, left to the process's end as the device is.
                    static_cast<void>(
                        new std::shared_ptr<ScaledSwapchain>(std::move(entry.second.scaled)));
                }
            } catch (...) {
                // No memory: the shared_ptr stays in the record, where nothing frees it either.
            }
        }
    }
    for (const std::shared_ptr<SwapchainGeneration>& swapchain : presenting) {
        swapchain->stop_for_exit(); // they call the runtime: stopped first
    }
    const std::lock_guard lock(generation_mutex);
    if (!generation) {
        return false;
    }
    // Long enough for a CPU driver's last jobs at a small size, short enough not to hold up the
    // program's exit much where the work never finishes.
    generation->runtime().stop_for_exit(std::chrono::milliseconds(1000));
    static_cast<void>(generation.release());
    return true;
}

void DeviceRecord::set_pass_through(std::string reason) {
    const std::lock_guard lock(m_reason_mutex);
    m_pass_through_reason = std::move(reason);
    generation_possible = false;
}

std::string DeviceRecord::pass_through_reason() const {
    const std::lock_guard lock(m_reason_mutex);
    return m_pass_through_reason;
}

std::shared_ptr<QueueRecord> DeviceRecord::queue_record(VkQueue queue) {
    const std::lock_guard lock(m_mutex);
    auto& record = m_queues[queue];
    if (!record) {
        record = std::make_shared<QueueRecord>();
    }
    return record;
}

void DeviceRecord::note_queue(VkQueue queue, std::uint32_t family, std::uint32_t index) {
    const std::shared_ptr<QueueRecord> record = queue_record(queue);
    const std::lock_guard lock(m_mutex);
    record->family = family;
    record->index = index;
}

std::vector<VkQueue> DeviceRecord::queues() const {
    const std::lock_guard lock(m_mutex);
    std::vector<VkQueue> handles;
    handles.reserve(m_queues.size());
    for (const auto& entry : m_queues) {
        handles.push_back(entry.first);
    }
    return handles;
}

void DeviceRecord::add_swapchain(VkSwapchainKHR swapchain, SwapchainRecord record) {
    const std::lock_guard lock(m_mutex);
    m_swapchains[swapchain] = std::move(record);
}

void DeviceRecord::remove_swapchain(VkSwapchainKHR swapchain) {
    const std::lock_guard lock(m_mutex);
    m_swapchains.erase(swapchain);
}

void DeviceRecord::set_swapchain_images(VkSwapchainKHR swapchain, std::vector<VkImage> images) {
    const std::lock_guard lock(m_mutex);
    const auto found = m_swapchains.find(swapchain);
    if (found != m_swapchains.end()) {
        found->second.images = std::move(images);
    }
}

namespace {

// Adds an open device's counts (relaxed: counters only; the report is a snapshot and needs no
// ordering with the frames).
void add_counts(DeviceCounts& counts, const DeviceRecord& record) {
    counts.name = record.device_name;
    counts.devices += 1;
    counts.open += 1;
    counts.swapchains_created += record.swapchains_created.load(std::memory_order_relaxed);
    counts.real_frames_presented += record.frames_presented.load(std::memory_order_relaxed);
    counts.generated_frames += record.generation_counts.generated.load(std::memory_order_relaxed);
    counts.skipped_frames += record.generation_counts.skipped.load(std::memory_order_relaxed);
    const GenerationCounts& g = record.generation_counts;
    counts.upscaled_frames += g.upscaled.load(std::memory_order_relaxed);
    counts.blitted_frames += g.blitted.load(std::memory_order_relaxed);
    counts.real_frames_not_shown += g.real_not_shown.load(std::memory_order_relaxed);
    counts.displays_taken_back += g.displays_taken_back.load(std::memory_order_relaxed);
    const std::int64_t span_ns = g.last_present_ns.load() - g.first_present_ns.load();
    const std::uint64_t presents = record.frames_presented.load(std::memory_order_relaxed);
    if (span_ns > 0 && presents > 1) {
        counts.program_fps = static_cast<double>(presents - 1) * 1e9 / static_cast<double>(span_ns);
    }
    {
        const std::lock_guard lock(g.summary_mutex);
        if (!g.summary.worker.empty()) {
            counts.generation = g.summary;
        }
        const auto append = [](std::vector<double>& to, const SampleRing& from) {
            const std::vector<double> samples = from.in_order();
            to.insert(to.end(), samples.begin(), samples.end());
        };
        append(counts.delays_us, g.delays_us);
        append(counts.gaps_us, g.gaps_us);
        append(counts.copies_us, g.copies_us);
        append(counts.generated_delays_us, g.generated_delays_us);
        append(counts.presenter_started_us, g.presenter_started_us);
        append(counts.generated_noticed_us, g.generated_noticed_us);
        counts.verify.merge(g.verify);
        if (g.scaling) {
            counts.scaling = g.scaling;
        }
        if (g.worker_lost.load()) {
            counts.worker_lost = true;
            counts.worker_lost_reason = g.worker_lost_reason;
        }
    }
    counts.dumped += std::min<std::uint64_t>(g.dumped.load(), layer_settings().dump_frames);
    const bool generating = record.generation_possible.load();
    counts.generating = counts.generating || generating;
    if (!generating && counts.pass_through_reason.empty()) {
        counts.pass_through_reason = record.pass_through_reason();
    }
}

} // namespace

LayerRegistry::LayerRegistry() {
    static_cast<void>(layer_settings());
}

LayerRegistry::~LayerRegistry() {
    // A runtime still embedded at exit (a program that never destroyed its swapchains) is left
    // to the process's end: its destruction would wait on devices whose driver may be gone.
    for (auto& entry : m_devices) {
        // Done already where note_exit_stop_point's handler ran.
        static_cast<void>(entry.second->abandon_generation());
    }
    const LayerSettings& settings = layer_settings();
    // Tandem's workers left open (Runtime::leave_devices_open) are not the program's.
    const bool open = std::any_of(m_devices.begin(), m_devices.end(),
                                  [](const auto& entry) { return !entry.second->tandem_worker; });
    if (open && !settings.report_path.empty()) {
        log_info("process exit with devices still open: writing the report");
        static_cast<void>(write_frame_report(report_contents()));
    }
}

void LayerRegistry::add_instance(std::shared_ptr<InstanceRecord> record) {
    const std::lock_guard lock(m_mutex);
    m_application_name = record->application_name;
    m_instances[dispatch_key(record->instance)] = std::move(record);
}

std::vector<std::shared_ptr<DeviceRecord>> LayerRegistry::devices() const {
    const std::lock_guard lock(m_mutex);
    std::vector<std::shared_ptr<DeviceRecord>> all;
    all.reserve(m_devices.size());
    for (const auto& entry : m_devices) {
        all.push_back(entry.second);
    }
    return all;
}

std::shared_ptr<InstanceRecord> LayerRegistry::find_instance(const void* dispatchable) const {
    const std::lock_guard lock(m_mutex);
    const auto found = m_instances.find(dispatch_key(dispatchable));
    return found != m_instances.end() ? found->second : nullptr;
}

std::shared_ptr<InstanceRecord> LayerRegistry::remove_instance(const void* dispatchable) {
    const std::lock_guard lock(m_mutex);
    const auto found = m_instances.find(dispatch_key(dispatchable));
    if (found == m_instances.end()) {
        return nullptr;
    }
    std::shared_ptr<InstanceRecord> record = std::move(found->second);
    m_instances.erase(found);
    return record;
}

void LayerRegistry::add_device(std::shared_ptr<DeviceRecord> record) {
    const std::lock_guard lock(m_mutex);
    m_devices[dispatch_key(record->device)] = std::move(record);
}

std::shared_ptr<DeviceRecord> LayerRegistry::find_device(const void* dispatchable) const {
    const std::lock_guard lock(m_mutex);
    const auto found = m_devices.find(dispatch_key(dispatchable));
    return found != m_devices.end() ? found->second : nullptr;
}

bool LayerRegistry::scales_on(VkPhysicalDevice physical) const {
    const std::lock_guard lock(m_mutex);
    return std::any_of(m_devices.begin(), m_devices.end(), [&](const auto& entry) {
        const DeviceRecord& device = *entry.second;
        return device.physical_device == physical && !device.tandem_worker &&
               device.generation_possible.load();
    });
}

std::shared_ptr<DeviceRecord> LayerRegistry::remove_device(const void* dispatchable) {
    const std::lock_guard lock(m_mutex);
    const auto found = m_devices.find(dispatch_key(dispatchable));
    if (found == m_devices.end()) {
        return nullptr;
    }
    std::shared_ptr<DeviceRecord> record = std::move(found->second);
    m_devices.erase(found);
    for (const VkQueue queue : record->queues()) {
        m_queue_devices.erase(queue);
    }
    if (!record->tandem_worker) {
        DeviceCounts& counts = m_finished[record->device_name];
        add_counts(counts, *record);
        counts.open -= 1;
    }
    return record;
}

void LayerRegistry::add_queue(VkQueue queue, const std::shared_ptr<DeviceRecord>& device) {
    const std::lock_guard lock(m_mutex);
    m_queue_devices[queue] = device;
}

std::shared_ptr<DeviceRecord> LayerRegistry::find_queue_device(VkQueue queue) const {
    const std::lock_guard lock(m_mutex);
    const auto found = m_queue_devices.find(queue);
    if (found != m_queue_devices.end()) {
        return found->second;
    }
    // A queue shares its device's dispatch key: one the layer did not see handed out still finds
    // its device.
    const auto device = m_devices.find(dispatch_key(queue));
    return device != m_devices.end() ? device->second : nullptr;
}

ReportContents LayerRegistry::report_contents() const {
    ReportContents contents;
    contents.program = program_invocation_short_name;
    contents.settings = &layer_settings();
    const std::lock_guard lock(m_mutex);
    contents.application_name = m_application_name;
    std::map<std::string, DeviceCounts> by_name = m_finished;
    for (const auto& entry : m_devices) {
        const DeviceRecord& record = *entry.second;
        if (!record.tandem_worker) {
            add_counts(by_name[record.device_name], record);
        }
    }
    for (auto& entry : by_name) {
        contents.devices.push_back(std::move(entry.second));
    }
    return contents;
}

LayerRegistry& registry() {
    static LayerRegistry instance;
    return instance;
}

namespace {

void stop_generation_at_exit() {
    try {
        for (const std::shared_ptr<DeviceRecord>& device : registry().devices()) {
            if (device->abandon_generation()) {
                log_info("process exit while frames are generated on " + device->device_name +
                         ": the layer's threads and Tandem's stop, the frames queued are "
                         "dropped");
            }
        }
    } catch (...) {
        // No memory for the list: the registry's destructor abandons them later.
    }
}

} // namespace

void note_exit_stop_point(ExitStopPoint point) noexcept {
    static std::array<std::atomic<bool>, 3> firsts{}; // each point but FramePresented, once
    static std::atomic<std::uint64_t> frames{0};
    if (point == ExitStopPoint::FramePresented
            ? !std::has_single_bit(frames.fetch_add(1) + 1)
            : firsts[static_cast<std::size_t>(point)].exchange(true)) {
        return; // not a first, nor the 1st, 2nd, 4th, 8th... frame
    }
    static_cast<void>(registry()); // made first, so destroyed after the handler runs
    if (std::atexit(stop_generation_at_exit) != 0) {
        log_problem("no exit handler: a program that exits while frames are generated may "
                    "crash at its exit");
    }
}

} // namespace tandem::layer
