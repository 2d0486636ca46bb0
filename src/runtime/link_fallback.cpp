#include "runtime/link_fallback.hpp"

#include <exception>

#include <spdlog/spdlog.h>

#include "runtime/runtime_impl.hpp"

namespace tandem::detail {

void LinkFallback::step(const std::vector<LogicalTask*>& tasks) {
    for (LogicalTask* task : tasks) {
        if (task->regs.empty()) {
            continue;
        }
        if (task->fallback) {
            settle(*task);
            continue;
        }
        const Registration& active = task->regs[task->active];
        if (!active.link_failed && m_runtime->link_failed(active.id)) {
            start(*task);
        }
    }
}

void LinkFallback::start(LogicalTask& task) {
    const Registration failed = task.regs[task.active];
    const std::string why = m_runtime->link_failure(failed.id);
    spdlog::warn("task '{}' on adapter {}: {}; preparing it again there with the next path",
                 task.desc.name, failed.device, why);
    TaskId id = 0;
    try {
        id = m_runtime->register_instance(task.desc, failed.device, task.generations);
    } catch (const std::exception& e) {
        std::lock_guard lock(task.mutex);
        task.regs[task.active].link_failed = true;
        task.fallback_error = why + "; registering it again failed: " + e.what();
        return;
    }
    Registration reg;
    reg.device = failed.device;
    reg.id = id;
    reg.trial = false;
    std::lock_guard lock(task.mutex);
    task.regs[task.active].link_failed = true;
    task.regs.push_back(reg);
    task.fallback = task.regs.size() - 1;
}

void LinkFallback::settle(LogicalTask& task) {
    const std::size_t reg = *task.fallback;
    const TaskPulse p = m_runtime->pulse(task.regs[reg].id, 0);
    if (p.counters.preparing) {
        return;
    }
    const std::string failure = m_runtime->link_failure(task.regs[task.active].id);
    std::lock_guard lock(task.mutex);
    task.fallback.reset();
    if (!p.counters.preparation_error.empty()) {
        task.regs[reg].unusable = true;
        task.fallback_error =
            failure + "; no other path could be prepared: " + p.counters.preparation_error;
        spdlog::error("task '{}': {}", task.desc.name, task.fallback_error);
        return;
    }
    if (!task.regs[task.active].link_failed) {
        return; // the scheduler moved it elsewhere meanwhile: that registration stays active
    }
    Registration& r = task.regs[reg];
    r.activated_after = p.counters.newest_generation;
    task.active = reg;
}

} // namespace tandem::detail
