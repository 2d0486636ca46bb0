#include "tandem/runtime.hpp"

#include "runtime/runtime_impl.hpp"
#include "runtime/task_router.hpp"

namespace tandem {

const char* to_string(SubmitStatus status) noexcept {
    switch (status) {
    case SubmitStatus::Accepted:
        return "accepted";
    case SubmitStatus::Busy:
        return "busy";
    case SubmitStatus::Preparing:
        return "preparing";
    case SubmitStatus::Failed:
        return "failed";
    }
    return "?";
}

Runtime::Runtime(const RuntimeOptions& options)
    : m_impl(std::make_unique<detail::RuntimeImpl>(options)),
      m_tasks(std::make_unique<detail::TaskRouter>(*m_impl, options)) {}

Runtime::Runtime(const EmbedInfo& embed, const RuntimeOptions& options)
    : m_impl(std::make_unique<detail::RuntimeImpl>(embed, options)),
      m_tasks(std::make_unique<detail::TaskRouter>(*m_impl, options)) {}

Runtime::~Runtime() {
    // The registrations (and their GPU work) go first; the logical tasks only point at them.
    m_impl.reset();
}

TaskId Runtime::register_task(const TaskDesc& desc) {
    return m_tasks->register_task(desc, true);
}

PrimaryVulkan Runtime::primary_vulkan() const {
    const detail::Device& primary = m_impl->primary();
    const detail::Queue& queue = primary.queue(detail::QueueRole::Main);
    PrimaryVulkan out;
    out.instance = m_impl->instance().handle();
    out.physical_device = primary.physical();
    out.device = primary.handle();
    out.queue_family = queue.family();
    out.queue_index = queue.index();
    out.queue = queue.handle();
    out.queue_mutex = queue.lock();
    out.debug_utils = m_impl->instance().has_debug_utils();
    return out;
}

TaskId Runtime::register_task_async(const TaskDesc& desc) {
    return m_tasks->register_task(desc, false);
}

SubmitResult Runtime::submit(TaskId task, std::span<const std::byte> snapshot) noexcept {
    return m_tasks->submit(task, snapshot);
}

void Runtime::pump() noexcept {
    m_tasks->pump();
}

std::optional<Lease> Runtime::acquire(TaskId task) noexcept {
    return m_tasks->acquire(task);
}

void Runtime::release(const Lease& lease, std::uint64_t primary_value) noexcept {
    m_tasks->release(lease, primary_value);
}

VkSemaphore Runtime::primary_timeline() const noexcept {
    return m_impl->primary_timeline();
}

TaskStats Runtime::stats(TaskId task) const {
    return m_tasks->stats(task);
}

PlacementReport Runtime::placement() const {
    return m_tasks->placement();
}

std::uint64_t Runtime::placement_decisions() const noexcept {
    return m_tasks->placement_decisions();
}

std::vector<DeviceCost> Runtime::calibrate(TaskId task, std::span<const std::byte> snapshot,
                                           std::uint32_t jobs) {
    return m_tasks->calibrate(task, snapshot, jobs);
}

void Runtime::observe_execute(TaskId task, std::uint32_t device, double ms) noexcept {
    m_tasks->observe_execute(task, device, ms);
}

const DeviceInfo& Runtime::primary_device() const noexcept {
    return m_impl->primary().info();
}

std::uint64_t Runtime::validation_messages() const noexcept {
    return m_impl->instance().validation_messages();
}

std::string Runtime::last_validation_message() const {
    return m_impl->instance().last_validation_message();
}

std::vector<DeviceInfo> Runtime::worker_devices() const {
    std::vector<DeviceInfo> out;
    for (const auto* w : m_impl->workers()) {
        out.push_back(w->device().info());
    }
    return out;
}

DeviceInfo Runtime::task_device(TaskId task) const {
    return m_impl->task_worker(m_tasks->active_registration(task)).device().info();
}

std::string Runtime::task_transfer_path(TaskId task) const {
    return m_impl->task_transfer_path(m_tasks->active_registration(task));
}

} // namespace tandem
