#include "runtime/runtime_probe.hpp"

#include <mutex>

#include "core/vk_check.hpp"
#include "runtime/runtime_impl.hpp"
#include "runtime/task.hpp"
#include "runtime/task_instance.hpp"
#include "runtime/worker.hpp"

namespace tandem::detail {

RuntimeProbe::RuntimeProbe(Runtime& runtime) noexcept : m_impl(RuntimeAccess::impl(runtime)) {}

void RuntimeProbe::hold_generation(TaskId id, std::uint64_t generation) {
    if (const auto task = m_impl.tasks().live(id)) {
        std::lock_guard lock(task->mutex);
        if (task->active != nullptr) {
            task->active->worker->hold(task->active, generation);
        }
    }
}

void RuntimeProbe::release_held(TaskId id) {
    if (const auto task = m_impl.tasks().live(id)) {
        std::lock_guard lock(task->mutex);
        if (task->active != nullptr) {
            task->active->worker->release_held();
        }
    }
}

void RuntimeProbe::force_device_lost(TaskId id) {
    if (const auto task = m_impl.tasks().live(id)) {
        std::lock_guard lock(task->mutex);
        if (task->active != nullptr) {
            inject_vk_fault(worker_submit_context(*task->active->worker), VK_ERROR_DEVICE_LOST);
        }
    }
}

std::vector<SlotState> RuntimeProbe::slot_states(TaskId id) const {
    std::vector<SlotState> out;
    if (const auto task = m_impl.tasks().live(id)) {
        std::lock_guard task_lock(task->mutex);
        if (task->active != nullptr) {
            std::lock_guard lock(task->active->mutex);
            for (std::uint32_t i = 0; i < task->active->ring.size(); ++i) {
                out.push_back(task->active->ring[i].state);
            }
        }
    }
    return out;
}

TaskPulse RuntimeProbe::pulse(TaskId id, std::size_t recent) const {
    if (const auto task = m_impl.tasks().live(id)) {
        std::lock_guard lock(task->mutex);
        if (task->active != nullptr) {
            return instance_pulse(*task->active, recent);
        }
    }
    return {};
}

std::uint64_t RuntimeProbe::completion_rounds() const noexcept {
    return m_impl.completion().rounds();
}

} // namespace tandem::detail
