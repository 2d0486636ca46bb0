#include "layer_state.hpp"

#include <cerrno>
#include <utility>

#include "layer_log.hpp"

namespace tandem::layer {

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

LayerRegistry::LayerRegistry() {
    static_cast<void>(layer_settings());
}

LayerRegistry::~LayerRegistry() {
    const LayerSettings& settings = layer_settings();
    if (!m_devices.empty() && !settings.report_path.empty()) {
        log_info("process exit with devices still open: writing the report");
        static_cast<void>(write_frame_report(report_contents()));
    }
}

void LayerRegistry::add_instance(std::shared_ptr<InstanceRecord> record) {
    const std::lock_guard lock(m_mutex);
    m_application_name = record->application_name;
    m_instances[dispatch_key(record->instance)] = std::move(record);
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
    DeviceCounts& counts = m_finished[record->device_name];
    counts.name = record->device_name;
    counts.devices += 1;
    counts.swapchains_created += record->swapchains_created.load(std::memory_order_relaxed);
    counts.real_frames_presented += record->frames_presented.load(std::memory_order_relaxed);
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
        DeviceCounts& counts = by_name[record.device_name];
        counts.name = record.device_name;
        counts.devices += 1;
        counts.open += 1;
        // Relaxed: counters only; the report is a snapshot and needs no ordering with the frames.
        counts.swapchains_created += record.swapchains_created.load(std::memory_order_relaxed);
        counts.real_frames_presented += record.frames_presented.load(std::memory_order_relaxed);
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

} // namespace tandem::layer
