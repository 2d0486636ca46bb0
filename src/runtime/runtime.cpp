#include "tandem/runtime.hpp"

#include "core/capabilities.hpp"
#include "runtime/runtime_impl.hpp"
#include "runtime/scheduler.hpp"
#include "runtime/task_stats.hpp"

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

const char* to_string(TaskError error) noexcept {
    switch (error) {
    case TaskError::None:
        return "none";
    case TaskError::UnknownTask:
        return "unknown task";
    case TaskError::BadBytes:
        return "bad bytes";
    case TaskError::Stopped:
        return "stopped";
    case TaskError::PreparationFailed:
        return "preparation failed";
    case TaskError::DeviceLost:
        return "device lost";
    case TaskError::NoTransferPath:
        return "no transfer path";
    case TaskError::OutOfMemory:
        return "out of memory";
    case TaskError::LeaseNotHeld:
        return "lease not held";
    case TaskError::NotMeasured:
        return "not measured";
    case TaskError::BadInputs:
        return "bad inputs";
    case TaskError::ChainBroken:
        return "chain broken";
    case TaskError::LoanNotHeld:
        return "loan not held";
    case TaskError::BadArgument:
        return "bad argument";
    case TaskError::PrimarySubmitFailed:
        return "primary submit failed";
    case TaskError::WorkloadFailed:
        return "workload failed";
    case TaskError::TransferFailed:
        return "transfer failed";
    }
    return "?";
}

const char* to_string(RuntimeEventKind kind) noexcept {
    switch (kind) {
    case RuntimeEventKind::JobFailed:
        return "job failed";
    case RuntimeEventKind::TaskStopped:
        return "task stopped";
    case RuntimeEventKind::PreparationFailed:
        return "preparation failed";
    case RuntimeEventKind::DeviceLost:
        return "device lost";
    case RuntimeEventKind::TransferPathDropped:
        return "transfer path dropped";
    case RuntimeEventKind::TaskMoved:
        return "task moved";
    }
    return "?";
}

std::string to_string(TaskId id) {
    return std::to_string(id.index) + ":" + std::to_string(id.generation);
}

Runtime::Runtime(const RuntimeOptions& options)
    : m_impl(std::make_unique<detail::RuntimeImpl>(options)) {}

Runtime::Runtime(const EmbedInfo& embed, const RuntimeOptions& options)
    : m_impl(std::make_unique<detail::RuntimeImpl>(embed, options)) {}

Runtime::~Runtime() = default;

TaskId Runtime::register_task(const TaskDesc& desc) {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->register_task(desc, true);
}

TaskId Runtime::register_task_async(const TaskDesc& desc) {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->register_task(desc, false);
}

TaskError Runtime::unregister_task(TaskId task) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->unregister_task(task);
}

TaskError Runtime::reconfigure(TaskId task, const TaskDesc& desc) {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->reconfigure(task, desc);
}

SubmitResult Runtime::submit(TaskId task, std::span<const std::byte> snapshot) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->submit(task, snapshot, {});
}

SubmitResult Runtime::submit(TaskId task, std::span<const std::byte> snapshot,
                             std::span<const InputImage> inputs) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->submit(task, snapshot, inputs);
}

LendResult Runtime::lend_inputs(TaskId task) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->loans().lend(task);
}

TaskError Runtime::return_inputs(TaskId task, const InputLoan& loan) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->loans().give_back(task, loan);
}

VkSemaphore Runtime::input_timeline() const noexcept {
    return m_impl->input_timeline();
}

void Runtime::leave_devices_open() noexcept {
    m_impl->leave_devices_open();
}

void Runtime::stop_for_exit(std::chrono::milliseconds gpu_wait) noexcept {
    const detail::LogScope scope(m_impl->logger());
    m_impl->stop(std::chrono::steady_clock::now() + gpu_wait, true);
}

void Runtime::pump() noexcept {
    const detail::LogScope scope(m_impl->logger());
    m_impl->pump();
}

namespace {

// What DeviceVulkan says of `device`, whose leases' reads end on `reads`.
DeviceVulkan describe_device(const detail::RuntimeImpl& impl, const detail::Device& device,
                             VkSemaphore reads) {
    const detail::Queue& queue = device.queue(detail::QueueRole::Main);
    DeviceVulkan out;
    out.instance = impl.instance().handle();
    out.physical_device = device.physical();
    out.device = device.handle();
    out.adapter = device.info().index;
    out.queue_family = queue.family();
    out.queue_index = queue.index();
    out.queue = queue.handle();
    out.queue_mutex = queue.lock();
    out.queue_submit2 = queue.submit2_function();
    out.debug_utils = impl.instance().has_debug_utils();
    out.reads_timeline = reads;
    return out;
}

} // namespace

AcquireResult Runtime::acquire(TaskId task) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->acquire(task, false);
}

AcquireResult Runtime::acquire_on_worker(TaskId task) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->acquire(task, true);
}

TaskError Runtime::release(const Lease& lease, std::uint64_t value) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->release(lease, value);
}

VkSemaphore Runtime::primary_timeline() const noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->primary_timeline();
}

TaskStats Runtime::stats(TaskId task) const {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->stats(task);
}

TaskProgress Runtime::progress(TaskId task) const noexcept {
    const std::shared_ptr<detail::Task> found = m_impl->tasks().live(task);
    if (!found) {
        TaskProgress out;
        out.error = TaskError::UnknownTask;
        return out;
    }
    std::lock_guard lock(found->mutex);
    if (!found->live) {
        TaskProgress out;
        out.error = TaskError::UnknownTask;
        return out;
    }
    return detail::collect_progress(*found);
}

PlacementReport Runtime::placement() const {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->scheduler().placement();
}

std::uint64_t Runtime::placement_decisions() const noexcept {
    return m_impl->scheduler().decisions();
}

CalibrationResult Runtime::calibrate(TaskId task, std::span<const std::byte> snapshot,
                                     std::uint32_t jobs) {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->scheduler().calibrate(task, snapshot, jobs);
}

TaskError Runtime::observe_execute(TaskId task, std::uint32_t device, double ms) noexcept {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->scheduler().observe_execute(task, device, ms);
}

std::vector<RuntimeEvent> Runtime::take_events() {
    return m_impl->events().take();
}

std::uint64_t Runtime::events_dropped() const noexcept {
    return m_impl->events().dropped();
}

const DeviceInfo& Runtime::primary_device() const noexcept {
    return m_impl->primary().info();
}

PrimaryVulkan Runtime::primary_vulkan() const {
    const detail::LogScope scope(m_impl->logger());
    return describe_device(*m_impl, m_impl->primary(), m_impl->primary_timeline());
}

std::optional<DeviceVulkan> Runtime::device_vulkan(std::uint32_t adapter) const {
    const detail::LogScope scope(m_impl->logger());
    if (adapter == m_impl->primary().info().index) {
        return primary_vulkan();
    }
    const detail::Worker* worker = m_impl->workers().of(adapter);
    if (worker == nullptr || worker->reads_timeline() == nullptr) {
        return std::nullopt;
    }
    return describe_device(*m_impl, worker->device(), worker->reads_timeline()->handle());
}

std::vector<DeviceInfo> Runtime::worker_devices() const {
    const detail::LogScope scope(m_impl->logger());
    std::vector<DeviceInfo> out;
    for (const auto* w : m_impl->workers().workers()) {
        out.push_back(w->device().info());
    }
    return out;
}

std::string transfer_path_name(const TaskStats& stats) {
    if (stats.transfer_path) {
        return to_string(*stats.transfer_path);
    }
    if (stats.error == TaskError::UnknownTask) {
        return {};
    }
    return stats.preparing ? "(preparing)" : "(not prepared)";
}

std::vector<PairInfo> Runtime::worker_pairs() const {
    const detail::LogScope scope(m_impl->logger());
    std::vector<PairInfo> out;
    for (const auto* w : m_impl->workers().workers()) {
        out.push_back(detail::query_pair_info(w->device().info(), m_impl->primary().info()));
    }
    return out;
}

RuntimeResources Runtime::resources() const {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->resources();
}

std::uint64_t Runtime::validation_messages() const noexcept {
    return m_impl->instance().validation_messages();
}

std::string Runtime::last_validation_message() const {
    const detail::LogScope scope(m_impl->logger());
    return m_impl->instance().last_validation_message();
}

} // namespace tandem
