#include "runtime/task.hpp"

#include <algorithm>

namespace tandem::detail {

TaskInstance* Task::on(std::uint32_t device) const noexcept {
    for (const auto& instance : instances) {
        if (instance->device() == device &&
            !instance->link_failed.load(std::memory_order_acquire)) {
            return instance.get();
        }
    }
    return nullptr;
}

TaskInstance* Task::find(std::uint64_t serial) const noexcept {
    for (const auto* list : {&instances, &retiring}) {
        for (const auto& instance : *list) {
            if (instance->serial == serial) {
                return instance.get();
            }
        }
    }
    return nullptr;
}

void Task::retire(TaskInstance* instance) {
    const auto it = std::find_if(instances.begin(), instances.end(),
                                 [&](const auto& i) { return i.get() == instance; });
    if (it == instances.end()) {
        return;
    }
    retiring.push_back(std::move(*it)); // may throw: then nothing moved
    instances.erase(it);
    if (active == instance) {
        set_active(nullptr);
    }
    if (pending == instance) {
        pending = nullptr;
    }
    instance->worker->task_count.fetch_sub(1, std::memory_order_relaxed);
}

void Task::adopt_shape(const TaskDesc& shape_desc) {
    desc = shape_desc;
    shape = workload_shape(shape_desc);
    update_automatic();
}

void Task::update_automatic() noexcept {
    // A chain moves as a unit or not at all (runtime/task_graph.hpp): a follower with its
    // leader; a consumer of several producers, and a pinned producer, stay where they are.
    automatic = desc.placement.kind == PlacementKind::Auto && links.pins == 0 &&
                (links.producers.empty() || links.leader != nullptr);
}

void Task::set_active(TaskInstance* instance) noexcept {
    active = instance;
    active_device.store(instance != nullptr ? instance->device() : k_no_device,
                        std::memory_order_release);
}

WorkloadShape workload_shape(const TaskDesc& desc) {
    WorkloadShape shape;
    shape.kind = desc.cost.kind;
    if (shape.kind.empty()) {
        shape.kind = !desc.factory && desc.workload == "pattern" ? "pattern" : "application";
    }
    shape.width = desc.width;
    shape.height = desc.height;
    shape.work = desc.cost.work;
    shape.content = desc.cost.content;
    return shape;
}

bool Task::move_waits_for_consumers() const noexcept {
    return pending != nullptr && pending_kind == PendingKind::Move && pending->prepared() &&
           links.wanted(generations);
}

} // namespace tandem::detail
