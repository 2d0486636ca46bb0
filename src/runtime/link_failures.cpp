#include "runtime/link_failures.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "runtime/event_queue.hpp"
#include "runtime/task.hpp"

#include "tandem/error.hpp"

namespace tandem::detail {

bool LinkFailures::retire(TaskInstance& task, bool from_pump) noexcept {
    if (task.same_device) {
        return false; // no link: a local transport fails only with its device
    }
    try {
        return retire_failed(task, from_pump,
                             {task.transport->error(), task.transport->path_name(), task.device(),
                              m_primary.info().index, "its transfer path "});
    } catch (...) {
        return false; // out of memory describing it: as before, the worker goes
    }
}

bool LinkFailures::retire_input(TaskInstance& task, const SlotTransport& link) noexcept {
    try {
        // Inputs travel primary -> device: their pair is keyed the other way round.
        return retire_failed(task, false,
                             {link.error(), link.path_name(), m_primary.info().index, task.device(),
                              "its input path "});
    } catch (...) {
        return false;
    }
}

bool LinkFailures::retire_link(TaskInstance& task, const SlotTransport& link, std::uint32_t from,
                               std::uint32_t to, const std::string& what) noexcept {
    try {
        return retire_failed(task, false, {link.error(), link.path_name(), from, to, what});
    } catch (...) {
        return false;
    }
}

bool LinkFailures::retire_failed(TaskInstance& task, bool from_pump,
                                 const FailedLink& link) noexcept {
    const std::string& error = link.error;
    const std::string& path = link.path;
    if (task.link_failed.load(std::memory_order_acquire)) {
        return true; // retired already
    }
    Worker& worker = *task.worker;
    const auto now = Clock::now();
    const auto timeout =
        worker.allowance(std::chrono::milliseconds(m_timeout_ms.load(std::memory_order_relaxed)),
                         m_first_job_timeout);
    // The device's fault, not the path's: it reported loss, its own work failed, or (seen by the
    // pump) a slot waited longer than the worker's allowance in which it completed nothing.
    bool device_failed = worker.lost() || worker.watch_result() != VK_SUCCESS ||
                         error.find(tandem::to_string(VK_ERROR_DEVICE_LOST)) != std::string::npos;
    try {
        std::lock_guard lock(task.mutex);
        if (task.link_failed.load(std::memory_order_relaxed)) {
            return true; // the pump and the transfer thread both saw it: the other one retired it
        }
        for (std::uint32_t i = 0; i < task.ring.size() && from_pump && !device_failed; ++i) {
            const SlotRecord& s = task.ring[i];
            device_failed = in_flight(s.state) &&
                            now - std::max(s.times.request, worker.last_progress()) > timeout;
        }
        if (device_failed) {
            return false;
        }
        task.link_error = link.what + path + " failed: " + error;
        EventQueue* events = task.owner->events;
        if (events != nullptr) {
            events->post(RuntimeEventKind::TransferPathDropped, task.owner->id, task.device(), 0,
                         TaskError::TransferFailed, task.link_error,
                         "; it is dropped for the pair and the task prepared again");
        }
        for (std::uint32_t i = 0; i < task.ring.size(); ++i) {
            const SlotRecord& slot = task.ring[i];
            const SlotState s = slot.state;
            if (events != nullptr && in_flight(s) && !slot.trial) {
                events->post(RuntimeEventKind::JobFailed, task.owner->id, task.device(),
                             slot.generation, TaskError::TransferFailed,
                             "the job failed: ", task.link_error);
            }
            // As for a lost worker: Ready and Leased slots hold finished outputs on the primary.
            if (s == SlotState::Free || held(s)) {
                (void)task.ring.apply(i, SlotEvent::Fail);
            }
        }
        // Dropped before the flag is published: the fallback that sees the flag prepares the
        // task again at once, and its negotiation must not pick this path again.
        try {
            m_pairs.drop(link.from, link.to, path, "it failed in use: " + error);
        } catch (...) {
            // Out of memory: the link is retired all the same; only the record lacks it.
        }
        // Release: whoever sees the flag sees link_error, the retired slots and the drop.
        task.link_failed.store(true, std::memory_order_release);
    } catch (...) {
        return false; // out of memory describing it: as before, the worker goes
    }
    try {
        log_warn("runtime", "task '{}' on {}: {}{} failed and is dropped for its pair: {}",
                 task.desc.name, worker.label(), link.what, path, error);
    } catch (...) {
        // Out of memory: nothing more to say.
    }
    return true;
}

std::string LinkFailures::failure(const TaskInstance& instance) {
    // Acquire: pairs with retire()'s release.
    if (!instance.link_failed.load(std::memory_order_acquire)) {
        return {};
    }
    std::lock_guard lock(instance.mutex);
    return instance.link_error;
}

std::vector<DroppedTransferPath> LinkFailures::dropped_paths(std::uint32_t device) const {
    if (device == m_primary.info().index) {
        return {};
    }
    std::vector<DroppedTransferPath> out = m_pairs.dropped(device, m_primary.info().index);
    for (DroppedTransferPath d : m_pairs.dropped(m_primary.info().index, device)) {
        d.inputs = true;
        out.push_back(std::move(d));
    }
    return out;
}

} // namespace tandem::detail
