#include "autoplace/auto_placer.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/capabilities.hpp"
#include "runtime/runtime_impl.hpp"
#include "tandem/error.hpp"
#include "transfer/transfer_path.hpp"

namespace tandem::detail {

namespace {
// Outputs of a registration whose timings are not observed.
constexpr std::uint64_t k_warm_up_outputs = 2;
// Samples per stage whose median is one observation.
constexpr std::size_t k_recent_samples = 8;
} // namespace

AutoPlacer::AutoPlacer(Runtime& runtime, CostModel& model, AutoOptions options)
    : m_runtime(&runtime), m_model(&model), m_options(options), m_placer(model, options.placement) {
    // What the runtime's transfer link for each worker will negotiate (the same function).
    for (const DeviceInfo& w : runtime.worker_devices()) {
        try {
            m_paths[w.index] =
                negotiate_path(query_pair_info(w, runtime.primary_device()), options.forced_path);
        } catch (const Error&) {
            // The pair does not allow the forced path: the cost model reports it unmeasured.
        }
    }
}

std::size_t AutoPlacer::add(const AutoTask& task) {
    PlacementTask check;
    check.name = task.desc.name;
    check.shape = task.shape;
    check.rate_hz = task.rate_hz;
    check_placement_task(check);
    for (const Entry& e : m_tasks) {
        if (e.spec.desc.name == task.desc.name) {
            throw Error("Two tasks are named \"" + task.desc.name + "\"",
                        "Give every task its own name");
        }
    }
    Entry entry;
    entry.spec = task;
    if (!task.automatic) {
        const TaskId id = m_runtime->register_task(task.desc);
        entry.regs.push_back({m_runtime->task_device(id).index, id});
        entry.active = 0;
    }
    m_tasks.push_back(std::move(entry));
    return m_tasks.size() - 1;
}

std::size_t AutoPlacer::ensure_registered(Entry& entry, std::uint32_t device, bool wait) {
    for (std::size_t i = 0; i < entry.regs.size(); ++i) {
        if (entry.regs[i].device == device) {
            return i;
        }
    }
    TaskDesc desc = entry.spec.desc;
    desc.placement =
        device == m_runtime->primary_device().index ? "primary" : std::to_string(device);
    // Throws Error.
    const TaskId id = wait ? m_runtime->register_task(desc) : m_runtime->register_task_async(desc);
    entry.regs.push_back({device, id});
    return entry.regs.size() - 1;
}

void AutoPlacer::refuse_device(Entry& entry, std::uint32_t device, const std::string& reason) {
    const std::string why = "task \"" + entry.spec.desc.name +
                            "\" could not be registered on adapter " + std::to_string(device) +
                            ": " + reason;
    spdlog::error("{}", why);
    m_failures.push_back(why);
    if (device != m_runtime->primary_device().index &&
        std::find(m_lost.begin(), m_lost.end(), device) == m_lost.end()) {
        m_lost.push_back(device); // not chosen again
    }
}

void AutoPlacer::settle_pending(Entry& entry) {
    if (!entry.pending) {
        return;
    }
    Registration& r = entry.regs[*entry.pending];
    const TaskPulse p = m_runtime->impl().pulse(r.id, 0);
    if (p.counters.preparing) {
        return;
    }
    const std::size_t reg = *entry.pending;
    entry.pending.reset();
    if (!p.counters.preparation_error.empty()) {
        refuse_device(entry, r.device, p.counters.preparation_error);
        return;
    }
    r.activated_after = p.counters.newest_generation;
    entry.active = reg;
    m_changed = true;
}

void AutoPlacer::observe_execute(std::size_t task, std::uint32_t device, double ms) {
    Entry& entry = m_tasks.at(task);
    entry.external_execute = true;
    (void)m_model->observe(entry.spec.desc.name, device, Stage::Execute, ms);
}

void AutoPlacer::observe_runtime() {
    const std::uint32_t primary = m_runtime->primary_device().index;
    for (Entry& entry : m_tasks) {
        for (Registration& reg : entry.regs) {
            const TaskPulse p = m_runtime->impl().pulse(reg.id, k_recent_samples);
            const TaskStats& s = p.counters;
            if (s.worker_lost && reg.device != primary &&
                std::find(m_lost.begin(), m_lost.end(), reg.device) == m_lost.end()) {
                m_lost.push_back(reg.device);
            }
            if (s.ready == reg.ready_seen) {
                continue;
            }
            reg.ready_seen = s.ready;
            if (s.ready <= k_warm_up_outputs) {
                continue; // first uploads, pipeline caches: not what the task costs later
            }
            // One observation per frame in which new outputs arrived: the medians of each
            // stage's newest samples (all timed from the request).
            const double done_ms = (p.worker_done_us - p.worker_submit_us) / 1000.0;
            const double delivery_ms = (p.ready_us - p.worker_done_us) / 1000.0;
            if (!entry.external_execute && done_ms >= 0.0 && s.worker_done.count > 0) {
                (void)m_model->observe(entry.spec.desc.name, reg.device, Stage::Execute, done_ms);
            }
            if (reg.device != primary && delivery_ms >= 0.0 && s.ready_observed.count > 0) {
                (void)m_model->observe(entry.spec.desc.name, reg.device, Stage::Delivery,
                                       delivery_ms);
            }
        }
    }
}

const PlacementPlan& AutoPlacer::decide() {
    observe_runtime();
    const std::uint32_t primary = m_runtime->primary_device().index;
    std::vector<PlacementTask> tasks;
    for (const Entry& entry : m_tasks) {
        PlacementTask t;
        t.name = entry.spec.desc.name;
        t.shape = entry.spec.shape;
        t.rate_hz = entry.spec.rate_hz;
        if (!entry.spec.automatic) {
            const std::uint32_t d = entry.regs[*entry.active].device;
            t.request.kind =
                d == primary ? PlacementRequest::Kind::Primary : PlacementRequest::Kind::Device;
            t.request.device = d;
        }
        tasks.push_back(std::move(t));
    }
    DeviceSet devices;
    devices.primary = primary;
    for (const DeviceInfo& w : m_runtime->worker_devices()) {
        devices.workers.push_back(w.index);
    }
    devices.lost = m_lost;
    devices.forced_path = m_options.forced_path;
    devices.worker_paths = m_paths;
    const bool first = m_plan.decision == 0;
    m_plan = m_placer.decide(tasks, devices);
    m_changed = first || m_plan.moves() > 0;

    for (Entry& entry : m_tasks) {
        if (!entry.spec.automatic) {
            continue;
        }
        const auto chosen = m_plan.device_of(entry.spec.desc.name);
        if (!chosen || (entry.active && entry.regs[*entry.active].device == *chosen)) {
            entry.pending.reset(); // staying (or back) where it runs
            continue;
        }
        if (entry.pending && entry.regs[*entry.pending].device == *chosen) {
            settle_pending(entry);
            continue;
        }
        std::size_t reg = 0;
        try {
            // The first placement is part of set-up: wait for it. A move prepares off the frame.
            reg = ensure_registered(entry, *chosen, first || !entry.active);
        } catch (const Error& e) {
            refuse_device(entry, *chosen, e.what());
            continue;
        }
        entry.pending = reg;
        settle_pending(entry);
    }
    return m_plan;
}

std::optional<std::uint32_t> AutoPlacer::device(std::size_t task) const {
    const Entry& e = m_tasks.at(task);
    if (!e.active) {
        return std::nullopt;
    }
    return e.regs[*e.active].device;
}

std::optional<TaskId> AutoPlacer::active_id(std::size_t task) const {
    const Entry& e = m_tasks.at(task);
    if (!e.active) {
        return std::nullopt;
    }
    return e.regs[*e.active].id;
}

std::vector<std::pair<std::uint32_t, TaskId>> AutoPlacer::registrations(std::size_t task) const {
    std::vector<std::pair<std::uint32_t, TaskId>> out;
    for (const Registration& r : m_tasks.at(task).regs) {
        out.emplace_back(r.device, r.id);
    }
    return out;
}

SubmitResult AutoPlacer::submit(std::size_t task, std::span<const std::byte> snapshot) {
    const Entry& e = m_tasks.at(task);
    if (!e.active) {
        SubmitResult r;
        r.status = e.pending ? SubmitStatus::Preparing : SubmitStatus::Failed;
        r.reason = e.pending ? "the task is being prepared on its first device"
                             : "the task has no device yet: call decide() first";
        return r;
    }
    return m_runtime->submit(e.regs[*e.active].id, snapshot);
}

std::optional<Lease> AutoPlacer::acquire(std::size_t task) {
    Entry& e = m_tasks.at(task);
    if (!e.active) {
        return std::nullopt;
    }
    const Registration& active = e.regs[*e.active];
    if (auto lease = m_runtime->acquire(active.id)) {
        // An output from before the task (last) moved here is older than what was shown since.
        if (lease->generation > active.activated_after || !e.shown || *e.shown == active.id) {
            e.shown = active.id;
            return lease;
        }
        m_runtime->release(*lease, 0);
    }
    if (e.shown && *e.shown != active.id) {
        return m_runtime->acquire(*e.shown);
    }
    return std::nullopt;
}

void AutoPlacer::release(const Lease& lease, std::uint64_t primary_value) {
    m_runtime->release(lease, primary_value);
}

} // namespace tandem::detail
