#include "workloads/application_workload.hpp"

#include <exception>
#include <utility>

#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

// The device whose workload factory runs on this thread (null: none).
thread_local const Device* t_factory_device = nullptr;

// Sets t_factory_device for the scope of one factory call.
class FactoryScope {
public:
    explicit FactoryScope(const Device& device)
        : m_previous(std::exchange(t_factory_device, &device)) {}
    ~FactoryScope() { t_factory_device = m_previous; }
    FactoryScope(const FactoryScope&) = delete;
    FactoryScope& operator=(const FactoryScope&) = delete;

private:
    const Device* m_previous;
};

} // namespace

const Device* application_device(VkDevice device) noexcept {
    return t_factory_device != nullptr && t_factory_device->handle() == device ? t_factory_device
                                                                               : nullptr;
}

ApplicationWorkload::ApplicationWorkload(const tandem::WorkloadFactory& factory,
                                         VkInstance instance, const Device& device,
                                         const WorkloadParams& params) {
    tandem::WorkerContext context;
    context.instance = instance;
    context.physical_device = device.physical();
    context.device = device.handle();
    context.queue_family = device.queue(QueueRole::Main).family();
    context.device_info = device.info();
    context.task_name = params.task_name;
    context.width = params.width;
    context.height = params.height;
    context.format = params.format;
    context.slots = params.slots;
    context.inputs = params.inputs;
    context.set_name = [&device](VkObjectType type, std::uint64_t handle, const std::string& name) {
        device.set_name(type, handle, name);
    };
    context.find_memory_type =
        [&device](std::uint32_t bits, VkMemoryPropertyFlags required,
                  VkMemoryPropertyFlags preferred) -> std::optional<std::uint32_t> {
        try {
            return device.memory_type(bits, required, preferred);
        } catch (const Error&) {
            return std::nullopt;
        }
    };
    {
        const FactoryScope scope(device);
        m_workload = factory(context);
    }
    if (!m_workload) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The workload factory of task '" + params.task_name + "' returned nothing",
                    "Return a tandem::Workload from TaskDesc::factory");
    }
    m_output = m_workload->output();
    m_usage = m_workload->target_usage();
}

std::string ApplicationWorkload::check(std::span<const std::byte> snapshot) const {
    try {
        return m_workload->check(snapshot);
    } catch (const std::exception& e) {
        return std::string("its workload's check failed: ") + e.what();
    } catch (...) {
        return "its workload's check threw an exception that is not a std::exception";
    }
}

VkResult ApplicationWorkload::record(VkCommandBuffer cmd, std::uint32_t slot,
                                     const WorkloadTarget& target, std::uint64_t generation,
                                     std::span<const std::byte> snapshot) noexcept {
    tandem::RecordContext job;
    job.cmd = cmd;
    job.slot = slot;
    job.image = target.image;
    job.view = target.view;
    job.format = target.format;
    job.extent = {target.width, target.height};
    job.initial_layout = target.layout;
    job.generation = generation;
    job.bytes = snapshot;
    job.inputs = target.inputs;
    std::string why;
    try {
        m_workload->record(job);
        return VK_SUCCESS;
    } catch (const std::exception& e) {
        why = e.what();
    } catch (...) {
        why = "an exception that is not a std::exception";
    }
    try {
        std::lock_guard lock(m_mutex);
        m_failure =
            "its workload failed to record generation " + std::to_string(generation) + ": " + why;
    } catch (...) {
        // Out of memory for the sentence: the VkResult below still fails the job.
    }
    return VK_ERROR_UNKNOWN;
}

void ApplicationWorkload::completed(std::uint32_t slot, std::uint64_t generation) noexcept {
    m_workload->completed(slot, generation);
}

std::string ApplicationWorkload::failure() const {
    std::lock_guard lock(m_mutex);
    return m_failure;
}

} // namespace tandem::detail
