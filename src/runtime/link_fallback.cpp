#include "runtime/link_fallback.hpp"

#include <exception>

#include "core/log.hpp"

#include "runtime/runtime_impl.hpp"

namespace tandem::detail {

void LinkFallback::step(const std::vector<std::shared_ptr<Task>>& tasks) {
    for (const auto& task : tasks) {
        std::lock_guard lock(task->mutex);
        TaskInstance* failed = task->active;
        if (!task->live || failed == nullptr ||
            !failed->link_failed.load(std::memory_order_acquire) || task->pending != nullptr ||
            !task->preparation.fallback_error.empty()) {
            continue; // nothing failed, something replaces it already, or no path is left
        }
        const std::string why = LinkFailures::failure(*failed);
        log_warn("scheduler",
                 "task '{}' on adapter {}: {}; preparing it again there with the next path",
                 task->desc.name, failed->device(), why);
        try {
            TaskInstance& next = m_runtime->add_instance(*task, failed->desc, failed->device());
            task->pending = &next;
            task->pending_kind = PendingKind::Fallback;
        } catch (const std::exception& e) {
            task->preparation.fallback_error = why + "; registering it again failed: " + e.what();
        }
    }
}

} // namespace tandem::detail
