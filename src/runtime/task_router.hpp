// TaskRouter: the tasks as tandem::Runtime's callers know them. Each TaskId names a
// LogicalTask (logical_task.hpp) for its whole life; the router sends its submits to the
// registration that is active now, hands out leases under the never-blank, never-back-in-time
// rule, sums statistics over registrations, and runs the LinkFallback (a task whose transfer path
// failed is prepared again with the next one) and the Scheduler in pump(). RuntimeImpl keeps
// the registrations (one per device a task ran on) and everything that touches a GPU.
//
// Threads: as tandem::Runtime (every method thread-safe). The schedule lock serialises the
// scheduler (registration, pump's decisions, calibrate); pump() only tries it, so a pump never
// waits for a registration or a calibration on another thread.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "runtime/link_fallback.hpp"
#include "runtime/logical_task.hpp"
#include "runtime/scheduler.hpp"
#include "tandem/lease.hpp"
#include "tandem/runtime.hpp"
#include "tandem/scheduler.hpp"

namespace tandem::detail {

class RuntimeImpl;

class TaskRouter {
public:
    // Throws Error when the scheduler's options or profile are refused.
    TaskRouter(RuntimeImpl& runtime, const RuntimeOptions& options);

    [[nodiscard]] TaskId register_task(const TaskDesc& desc, bool wait);
    [[nodiscard]] SubmitResult submit(TaskId id, std::span<const std::byte> snapshot) noexcept;
    void pump() noexcept;
    [[nodiscard]] std::optional<Lease> acquire(TaskId id) noexcept;
    void release(const Lease& lease, std::uint64_t primary_value) noexcept;
    [[nodiscard]] TaskStats stats(TaskId id) const;
    [[nodiscard]] TaskId active_registration(TaskId id) const;
    [[nodiscard]] PlacementReport placement() const;
    [[nodiscard]] std::uint64_t placement_decisions() const noexcept {
        return m_scheduler.decisions();
    }
    [[nodiscard]] std::vector<DeviceCost> calibrate(TaskId id, std::span<const std::byte> snapshot,
                                                    std::uint32_t jobs);
    void observe_execute(TaskId id, std::uint32_t device, double ms) noexcept;

    static constexpr std::size_t k_max_ids = 256; // TaskRegistry::k_capacity

private:
    [[nodiscard]] LogicalTask* find(TaskId id) const noexcept;
    [[nodiscard]] LogicalTask& get(TaskId id) const; // throws Error for an unknown id
    // Every logical task, in registration order (under m_schedule).
    [[nodiscard]] const std::vector<LogicalTask*>& all() const noexcept { return m_all; }

    RuntimeImpl* m_runtime;
    mutable std::mutex m_schedule;
    Scheduler m_scheduler;
    LinkFallback m_fallback;                           // under m_schedule
    std::vector<std::unique_ptr<LogicalTask>> m_owned; // under m_schedule
    // The same tasks as plain pointers, kept beside m_owned so that a pump hands the scheduler
    // the list without building it (under m_schedule).
    std::vector<LogicalTask*> m_all;
    // Indexed by TaskId (a logical task's first registration); null for registrations that
    // are a moved or measured task's later ones. Release on publication, acquire on lookup.
    std::array<std::atomic<LogicalTask*>, k_max_ids> m_by_id{};
};

} // namespace tandem::detail
