#include "tandem/runtime.hpp"

#include "runtime/runtime_impl.hpp"

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
    : m_impl(std::make_unique<detail::RuntimeImpl>(options)) {}

Runtime::Runtime(const EmbedInfo& embed, const RuntimeOptions& options)
    : m_impl(std::make_unique<detail::RuntimeImpl>(embed, options)) {}

Runtime::~Runtime() = default;

TaskId Runtime::register_task(const TaskDesc& desc) {
    return m_impl->register_task(desc);
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
    return out;
}

TaskId Runtime::register_task_async(const TaskDesc& desc) {
    return m_impl->register_task_async(desc);
}

SubmitResult Runtime::submit(TaskId task, std::span<const std::byte> snapshot) noexcept {
    return m_impl->submit(task, snapshot);
}

void Runtime::pump() noexcept {
    m_impl->pump();
}

std::optional<Lease> Runtime::acquire(TaskId task) noexcept {
    return m_impl->acquire(task);
}

void Runtime::release(const Lease& lease, std::uint64_t primary_value) noexcept {
    m_impl->release(lease, primary_value);
}

VkSemaphore Runtime::primary_timeline() const noexcept {
    return m_impl->primary_timeline();
}

TaskStats Runtime::stats(TaskId task) const {
    return m_impl->stats(task);
}

const DeviceInfo& Runtime::primary_device() const noexcept {
    return m_impl->primary().info();
}

std::vector<DeviceInfo> Runtime::worker_devices() const {
    std::vector<DeviceInfo> out;
    for (const auto* w : m_impl->workers()) {
        out.push_back(w->device().info());
    }
    return out;
}

DeviceInfo Runtime::task_device(TaskId task) const {
    return m_impl->task_worker(task).device().info();
}

std::string Runtime::task_transfer_path(TaskId task) const {
    return m_impl->task_transfer_path(task);
}

} // namespace tandem
