#include "runtime/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/capabilities.hpp"
#include "runtime/runtime_impl.hpp"
#include "tandem/error.hpp"
#if TANDEM_HAVE_TRANSFER
#include "transfer/path_health.hpp"
#include "transfer/transfer_path.hpp"
#endif

namespace tandem::detail {

namespace {

// Outputs of a registration whose timings are not observed (uploads, pipeline warm-up).
constexpr std::uint64_t k_warm_up_outputs = 2;

// What one job of a registration costs its device, in ms: the GPU time of the commands its
// workload recorded where its jobs are timed (as a calibration profile measures it), once the
// first jobs (pipeline creation, first-use shader compilation) are behind; else the time from
// the job's submission to its completion being seen, which also holds the queue's wait.
double execute_of(const TaskPulse& pulse) {
    const TaskStats& s = pulse.counters;
    if (s.gpu_timed && s.gpu_us.count > k_warm_up_outputs) {
        return pulse.gpu_us / 1000.0;
    }
    return (pulse.worker_done_us - pulse.worker_submit_us) / 1000.0;
}

// Samples per stage whose median is one observation of an active registration.
constexpr std::size_t k_recent_samples = 8;

void check_options(const SchedulerOptions& o) {
    if (!std::isfinite(o.capacity) || o.capacity <= 0.0 || o.capacity > 1.0) {
        throw Error("The scheduler's capacity " + std::to_string(o.capacity) +
                        " is not a fraction of a second",
                    "Use a capacity above 0 and at most 1 (0.9 is the default)");
    }
    if (!std::isfinite(o.margin_ms) || o.margin_ms < 0.0 || !std::isfinite(o.margin_fraction) ||
        o.margin_fraction < 0.0) {
        throw Error("The scheduler's margin is negative or not a number",
                    "Use margin_ms >= 0 and margin_fraction >= 0");
    }
    if (!std::isfinite(o.primary_frame_rate_hz) || o.primary_frame_rate_hz <= 0.0) {
        throw Error("The scheduler's primary frame rate is not a positive number",
                    "Give the application's frame rate in Hz (60 is the default)");
    }
    if (o.decision_interval.count() < 0) {
        throw Error("The scheduler's decision interval is negative", "Use 0 ms or more");
    }
}

std::vector<DeviceInfo> runtime_devices(const RuntimeImpl& runtime) {
    std::vector<DeviceInfo> devices{runtime.primary().info()};
    for (const Worker* w : runtime.workers()) {
        devices.push_back(w->device().info());
    }
    return devices;
}

} // namespace

Scheduler::Scheduler(RuntimeImpl& runtime, const SchedulerOptions& options,
                     std::optional<TransferPath> forced_path)
    : m_runtime(&runtime), m_options(options), m_forced_path(forced_path) {
    check_options(options);
    const std::vector<DeviceInfo> devices = runtime_devices(runtime);
    m_model_note = "measured timings only (no profile)";
    if (!options.profile.empty()) {
        try {
            m_model = std::make_unique<CostModel>(load_profile(options.profile), devices);
            m_model_note = "profile " + options.profile + " refined by measured timings";
        } catch (const Error& e) {
            if (!options.profile_optional) {
                throw; // names the file, or every way it differs from the adapters
            }
            m_model_note = std::string("measured timings only: ") + e.what();
        }
    }
    if (!m_model) {
        m_model = std::make_unique<CostModel>(profile_skeleton(devices), devices);
    }
    PlacementOptions placement;
    placement.capacity = options.capacity;
    placement.margin_ms = options.margin_ms;
    placement.margin_fraction = options.margin_fraction;
    placement.primary_frame_rate_hz = options.primary_frame_rate_hz;
    m_placer = std::make_unique<Placer>(*m_model, placement);
#if TANDEM_HAVE_TRANSFER
    for (std::size_t i = 1; i < devices.size(); ++i) {
        m_pairs.push_back(query_pair_info(devices[i], devices[0]));
    }
#endif
    refresh_paths();
}

void Scheduler::refresh_paths() {
#if TANDEM_HAVE_TRANSFER
    // What the transfer link of each worker negotiates (the same function, past the paths
    // dropped for the pair), looked at again only when a path was dropped.
    const PathHealth* health = m_runtime->path_health();
    const std::uint64_t drops = health != nullptr ? health->drops() : 0;
    if (!m_pairs_priced || drops != m_drops_priced) {
        m_pairs_priced = true;
        m_drops_priced = drops;
        for (const PairInfo& pair : m_pairs) {
            try {
                m_paths[pair.worker] = negotiate_path(
                    health != nullptr ? health->restrict(pair) : pair, m_forced_path);
            } catch (const Error&) {
                // Not allowed (forced) or none left: its moves are priced as unmeasured.
                m_paths.erase(pair.worker);
            }
        }
    }
#endif
}

std::uint32_t Scheduler::primary() const {
    return m_runtime->primary().info().index;
}

std::optional<TransferPath> Scheduler::path_of(std::uint32_t worker) const {
    const auto it = m_paths.find(worker);
    return it != m_paths.end() ? std::optional(it->second) : m_forced_path;
}

Scheduler::Devices Scheduler::scan_devices() {
    Devices out;
    out.live.push_back(primary());
    for (const Worker* w : m_runtime->workers()) {
        const std::uint32_t index = w->device().info().index;
        out.workers.push_back(index);
        if (std::find(m_lost.begin(), m_lost.end(), index) != m_lost.end()) {
            continue; // lost or refused before
        }
        if (w->lost()) {
            m_lost.push_back(index);
        } else {
            out.live.push_back(index);
        }
    }
    return out;
}

DeviceSet Scheduler::device_set() {
    DeviceSet set;
    set.primary = primary();
    set.workers = scan_devices().workers;
    set.lost = m_lost;
    set.forced_path = m_forced_path;
    set.worker_paths = m_paths;
    set.identify(runtime_devices(*m_runtime));
    set.openings_are_separate = m_options.openings_are_separate;
    return set;
}

std::vector<PlacementTask> Scheduler::placement_tasks(const std::vector<LogicalTask*>& tasks,
                                                      const LogicalTask* extra) const {
    std::vector<PlacementTask> out;
    auto add = [&](const LogicalTask& task) {
        PlacementTask t;
        t.name = task.key;
        t.shape = task.shape;
        t.rate_hz = task.desc.rate_hz;
        if (!task.automatic && !task.regs.empty()) {
            const std::uint32_t d = task.regs[task.active].device;
            t.request = d == primary() ? Placement::on_primary() : Placement::on_adapter(d);
        }
        out.push_back(std::move(t));
    };
    for (const LogicalTask* task : tasks) {
        add(*task);
    }
    if (extra != nullptr) {
        add(*extra);
    }
    return out;
}

std::uint32_t Scheduler::place_new(std::vector<LogicalTask*> tasks, LogicalTask& task) {
    refresh_paths();
    m_plan = m_placer->decide(placement_tasks(tasks, &task), device_set());
    m_decisions.store(m_plan.decision, std::memory_order_relaxed);
    m_last_decision = std::chrono::steady_clock::now();
    for (LogicalTask* t : tasks) {
        if (t->automatic) {
            if (const auto chosen = m_plan.device_of(t->key)) {
                apply(*t, *chosen);
            }
        }
    }
    return m_plan.device_of(task.key).value_or(primary());
}

std::size_t Scheduler::ensure_registered(LogicalTask& task, std::uint32_t device) {
    if (const auto existing = task.on(device)) {
        return *existing;
    }
    const TaskId id = m_runtime->register_instance(task.desc, device, task.generations);
    std::lock_guard lock(task.mutex);
    Registration reg;
    reg.device = device;
    reg.id = id;
    task.regs.push_back(reg);
    return task.regs.size() - 1;
}

void Scheduler::refuse(LogicalTask& task, std::size_t reg, const std::string& reason) {
    Registration& r = task.regs[reg];
    if (r.unusable) {
        return;
    }
    r.unusable = true;
    const std::string why = "task \"" + task.desc.name + "\" could not run on adapter " +
                            std::to_string(r.device) + ": " + reason;
    spdlog::error("{}", why);
    m_failures.push_back(why);
    if (r.device != primary() &&
        std::find(m_lost.begin(), m_lost.end(), r.device) == m_lost.end()) {
        m_lost.push_back(r.device); // not chosen again
    }
}

void Scheduler::settle(LogicalTask& task) {
    if (!task.pending) {
        return;
    }
    const std::size_t reg = *task.pending;
    const TaskPulse p = m_runtime->pulse(task.regs[reg].id, 0);
    if (p.counters.preparing) {
        return;
    }
    const std::string& error = !p.counters.preparation_error.empty() ? p.counters.preparation_error
                                                                     : p.counters.workload_error;
    if (!error.empty()) {
        refuse(task, reg, error);
        std::lock_guard lock(task.mutex);
        task.pending.reset();
        return;
    }
    std::lock_guard lock(task.mutex);
    Registration& r = task.regs[reg];
    r.activated_after = p.counters.newest_generation;
    r.trial = false;
    task.active = reg;
    task.pending.reset();
    ++task.moves;
}

void Scheduler::apply(LogicalTask& task, std::uint32_t chosen) {
    if (task.regs.empty()) {
        return; // being registered: place_new's caller registers it
    }
    if (task.regs[task.active].device == chosen) {
        std::lock_guard lock(task.mutex);
        task.pending.reset(); // staying (or back) where it runs
        return;
    }
    if (task.pending && task.regs[*task.pending].device == chosen) {
        settle(task);
        return;
    }
    std::size_t reg = 0;
    try {
        reg = ensure_registered(task, chosen);
    } catch (const Error& e) {
        const std::string why = "task \"" + task.desc.name +
                                "\" could not be registered on adapter " + std::to_string(chosen) +
                                ": " + e.what();
        spdlog::error("{}", why);
        m_failures.push_back(why);
        if (chosen != primary()) {
            m_lost.push_back(chosen);
        }
        return;
    }
    {
        std::lock_guard lock(task.mutex);
        task.pending = reg;
    }
    settle(task);
}

void Scheduler::step(const std::vector<LogicalTask*>& tasks,
                     std::chrono::steady_clock::time_point now) {
    bool any_auto = false;
    bool lost_now = false;
    for (LogicalTask* task : tasks) {
        if (!task->automatic || task->regs.empty()) {
            continue;
        }
        any_auto = true;
        settle(*task);
        if (!task->pending && m_runtime->task_worker(task->regs[task->active].id).lost()) {
            lost_now = true; // moved in this very pump
        }
    }
    if (!any_auto || (!lost_now && now - m_last_decision < m_options.decision_interval)) {
        return;
    }
    m_last_decision = now;
    refresh_paths();
    observe(tasks);
    run_trials(tasks);
    decide(tasks);
}

void Scheduler::refresh(const std::vector<LogicalTask*>& tasks) {
    m_last_decision = std::chrono::steady_clock::now();
    refresh_paths();
    decide(tasks);
}

void Scheduler::observe(const std::vector<LogicalTask*>& tasks) {
    const std::uint32_t p = primary();
    for (LogicalTask* task : tasks) {
        for (Registration& reg : task->regs) {
            const TaskPulse pulse = m_runtime->pulse(reg.id, reg.trial ? 1 : k_recent_samples);
            const TaskStats& s = pulse.counters;
            if (s.ready == reg.ready_seen) {
                continue;
            }
            reg.ready_seen = s.ready;
            if (s.ready <= k_warm_up_outputs) {
                continue;
            }
            // One observation per decision in which new outputs arrived: the medians of each
            // stage's newest samples (a trial's: its newest job), all timed from the request.
            const double execute_ms = execute_of(pulse);
            const double delivery_ms = (pulse.ready_us - pulse.worker_done_us) / 1000.0;
            if (!task->external_execute && execute_ms >= 0.0 && s.worker_done.count > 0) {
                (void)m_model->observe(task->key, reg.device, Stage::Execute, execute_ms);
            }
            if (reg.device != p && delivery_ms >= 0.0 && s.ready_observed.count > 0) {
                (void)m_model->observe(task->key, reg.device, Stage::Delivery, delivery_ms);
            }
        }
    }
}

bool Scheduler::needs_measuring(const LogicalTask& task, std::uint32_t device) const {
    if (!m_model->execute(task.key, task.shape, device)) {
        return true;
    }
    return device != primary() &&
           !m_model->move(task.key, task.shape, device, primary(), path_of(device));
}

void Scheduler::run_trials(const std::vector<LogicalTask*>& tasks) {
    if (!m_options.background_calibration) {
        return;
    }
    const std::vector<std::uint32_t> devices = scan_devices().live;
    for (LogicalTask* task : tasks) {
        if (!task->automatic || task->regs.empty()) {
            continue;
        }
        bool wanted = false;
        for (const std::uint32_t d : devices) {
            if (d == task->regs[task->active].device || !needs_measuring(*task, d)) {
                continue; // the application's own submits measure the active device
            }
            const auto existing = task->on(d);
            if (existing && (task->regs[*existing].unusable ||
                             task->regs[*existing].trial_jobs >= m_options.trial_jobs)) {
                continue;
            }
            wanted = true;
            std::vector<std::byte> snapshot;
            {
                std::lock_guard lock(task->mutex);
                if (!task->has_snapshot) {
                    continue; // trial jobs run the application's own latest snapshot
                }
                snapshot = task->snapshot;
            }
            std::size_t reg = 0;
            try {
                reg = ensure_registered(*task, d);
            } catch (const Error& e) {
                if (d != primary()) {
                    m_lost.push_back(d);
                }
                m_failures.push_back(e.what());
                continue;
            }
            const TaskPulse p = m_runtime->pulse(task->regs[reg].id, 0);
            if (p.counters.preparing) {
                continue;
            }
            if (!p.counters.preparation_error.empty() || !p.counters.workload_error.empty()) {
                refuse(*task, reg, p.counters.preparation_error + p.counters.workload_error);
                continue;
            }
            if (p.counters.in_flight > 0) {
                continue; // one trial at a time, so each is timed alone
            }
            const SubmitResult r = m_runtime->submit(task->regs[reg].id, snapshot);
            if (r.accepted()) {
                ++task->regs[reg].trial_jobs;
            } else if (r.status == SubmitStatus::Failed) {
                refuse(*task, reg, r.reason);
            }
        }
        task->keep_snapshot.store(wanted, std::memory_order_relaxed);
    }
}

void Scheduler::decide(const std::vector<LogicalTask*>& tasks) {
    m_plan = m_placer->decide(placement_tasks(tasks, nullptr), device_set());
    m_decisions.store(m_plan.decision, std::memory_order_relaxed);
    for (LogicalTask* task : tasks) {
        if (!task->automatic) {
            continue;
        }
        if (const auto chosen = m_plan.device_of(task->key)) {
            apply(*task, *chosen);
        }
    }
}

std::vector<DeviceCost> Scheduler::calibrate(const std::vector<LogicalTask*>& tasks,
                                             LogicalTask& task, std::span<const std::byte> snapshot,
                                             std::uint32_t jobs) {
    if (jobs < k_warm_up_outputs + RobustEstimate::k_min_samples) {
        throw Error(
            "Calibrating task '" + task.desc.name + "' with " + std::to_string(jobs) + " jobs",
            "Use at least " + std::to_string(k_warm_up_outputs + RobustEstimate::k_min_samples) +
                " jobs: the first two warm up, the cost is the median of the rest");
    }
    const std::vector<std::uint32_t> devices = scan_devices().live;
    const auto timeout = 2 * m_runtime->worker_timeout();
    std::size_t measured = 0;
    for (const std::uint32_t d : devices) {
        std::size_t reg = 0;
        try {
            reg = ensure_registered(task, d);
            m_runtime->wait_prepared(task.regs[reg].id);
        } catch (const Error& e) {
            if (const auto r = task.on(d)) {
                refuse(task, *r, e.what());
            }
            continue;
        }
        const TaskId id = task.regs[reg].id;
        bool failed = false;
        for (std::uint32_t j = 0; j < jobs && !failed; ++j) {
            const std::uint64_t ready_before = m_runtime->pulse(id, 0).counters.ready;
            const auto deadline = std::chrono::steady_clock::now() + timeout;
            SubmitResult r;
            while (!(r = m_runtime->submit(id, snapshot)).accepted()) {
                if (r.status == SubmitStatus::Failed ||
                    std::chrono::steady_clock::now() > deadline) {
                    refuse(task, reg, r.reason.empty() ? "its jobs did not start" : r.reason);
                    failed = true;
                    break;
                }
                m_runtime->pump();
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            while (!failed) {
                m_runtime->pump();
                const TaskPulse p = m_runtime->pulse(id, 1);
                if (p.counters.ready + p.counters.superseded > ready_before) {
                    if (j >= k_warm_up_outputs) {
                        const double execute = execute_of(p);
                        const double delivery = (p.ready_us - p.worker_done_us) / 1000.0;
                        (void)m_model->observe(task.key, d, Stage::Execute, execute);
                        if (d != primary()) {
                            (void)m_model->observe(task.key, d, Stage::Delivery, delivery);
                        }
                    }
                    task.regs[reg].ready_seen = p.counters.ready;
                    break;
                }
                if (p.counters.worker_lost || !p.counters.workload_error.empty() ||
                    std::chrono::steady_clock::now() > deadline) {
                    refuse(task, reg,
                           p.counters.worker_lost ? p.counters.worker_lost_reason
                           : !p.counters.workload_error.empty()
                               ? p.counters.workload_error
                               : "a job did not complete within " +
                                     std::to_string(timeout.count()) + " ms");
                    failed = true;
                    break;
                }
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
        }
        measured += failed ? 0 : 1;
    }
    if (measured == 0) {
        throw Error("Task '" + task.desc.name + "' could not be measured on any device",
                    "See the runtime's log and placement().failures for why");
    }
    // Calibration's outputs are measurements, not the application's frames: never shown.
    for (Registration& r : task.regs) {
        const std::uint64_t newest = m_runtime->pulse(r.id, 0).counters.newest_generation;
        std::lock_guard lock(task.mutex);
        r.activated_after = std::max(r.activated_after, newest);
    }
    m_last_decision = {}; // the next pump decides with what was measured
    (void)tasks;
    return costs(task);
}

void Scheduler::observe_execute(LogicalTask& task, std::uint32_t device, double ms) {
    task.external_execute = true;
    (void)m_model->observe(task.key, device, Stage::Execute, ms);
}

std::vector<DeviceCost> Scheduler::costs(const LogicalTask& task) const {
    std::vector<DeviceCost> out;
    for (const DeviceInfo& d : runtime_devices(*m_runtime)) {
        DeviceCost c;
        c.device = d.index;
        c.primary = d.index == primary();
        if (const auto e = m_model->execute(task.key, task.shape, d.index)) {
            c.execute_ms = e->ms;
            c.source = to_string(e->source);
        }
        if (!c.primary) {
            if (const auto m =
                    m_model->move(task.key, task.shape, d.index, primary(), path_of(d.index))) {
                c.move_ms = m->total_ms();
            }
        }
        out.push_back(std::move(c));
    }
    return out;
}

PlacementReport Scheduler::report(const std::vector<LogicalTask*>& tasks) const {
    PlacementReport out;
    out.decision = m_plan.decision;
    out.failures = m_failures;
    out.model = m_model_note;
    out.moves = m_plan.moves();
    if (m_plan.decision == 0) {
        out.text = "no decision yet\n";
        out.json = "{}";
        return out;
    }
    for (const Explanation& e : m_plan.tasks) {
        TaskPlacement t;
        t.name = e.task;
        for (const LogicalTask* task : tasks) {
            if (task->key == e.task) {
                t.task = task->id;
                t.name = task->desc.name;
                t.automatic = task->automatic;
            }
        }
        t.device = e.chosen;
        t.moved = e.moved;
        t.reason = e.reason;
        out.tasks.push_back(std::move(t));
    }
    out.text = to_text(m_plan);
    out.json = to_json(m_plan).dump(2);
    return out;
}

} // namespace tandem::detail
