#include "runtime/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <unordered_set>

#include "core/log.hpp"

#include "runtime/link_fallback.hpp"
#include "runtime/runtime_impl.hpp"
#include "runtime/task_stats.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

// Outputs of an instance whose timings are not observed (uploads, pipeline warm-up).
constexpr std::uint64_t k_warm_up_outputs = 2;
// Failures the report keeps (the newest).
constexpr std::size_t k_max_failures = 64;

// What one job of an instance costs its device, in ms: the GPU time of the commands its
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

// Samples per stage whose median is one observation of an active instance.
constexpr std::size_t k_recent_samples = 8;

void check_options(const SchedulerOptions& o) {
    if (!std::isfinite(o.capacity) || o.capacity <= 0.0 || o.capacity > 1.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The scheduler's capacity " + std::to_string(o.capacity) +
                        " is not a fraction of a second",
                    "Use a capacity above 0 and at most 1 (0.9 is the default)");
    }
    if (!std::isfinite(o.margin_ms) || o.margin_ms < 0.0 || !std::isfinite(o.margin_fraction) ||
        o.margin_fraction < 0.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The scheduler's margin is negative or not a number",
                    "Use margin_ms >= 0 and margin_fraction >= 0");
    }
    if (!std::isfinite(o.primary_frame_rate_hz) || o.primary_frame_rate_hz <= 0.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The scheduler's primary frame rate is not a positive number",
                    "Give the application's frame rate in Hz (60 is the default)");
    }
    if (o.decision_interval.count() < 0) {
        throw Error(ErrorCategory::InvalidArgument, "The scheduler's decision interval is negative",
                    "Use 0 ms or more");
    }
}

// Releases a held lock for its scope and takes it again (calibrate's trial jobs).
class Unlocked {
public:
    explicit Unlocked(std::mutex& held) : m_held(held) { m_held.unlock(); }
    ~Unlocked() { m_held.lock(); }
    Unlocked(const Unlocked&) = delete;
    Unlocked& operator=(const Unlocked&) = delete;

private:
    std::mutex& m_held;
};

std::vector<DeviceInfo> runtime_devices(const RuntimeImpl& runtime) {
    std::vector<DeviceInfo> devices{runtime.primary().info()};
    for (const Worker* w : runtime.workers().workers()) {
        devices.push_back(w->device().info());
    }
    return devices;
}

} // namespace

Scheduler::Scheduler(RuntimeImpl& runtime, const SchedulerOptions& options,
                     std::optional<TransferPath> forced_path)
    : m_runtime(&runtime), m_fallback(std::make_unique<LinkFallback>(runtime)), m_options(options),
      m_forced_path(forced_path) {
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
    refresh_paths();
}

void Scheduler::refresh_paths() {
    // The path a stream of each worker's output would take on its pair now, looked at again
    // only when a path was dropped.
    DevicePairs& pairs = m_runtime->pairs();
    const std::uint64_t drops = pairs.drops();
    if (m_pairs_priced && drops == m_drops_priced) {
        return;
    }
    m_pairs_priced = true;
    m_drops_priced = drops;
    const Device& primary = m_runtime->primary();
    for (const Worker* w : m_runtime->workers().workers()) {
        const Device& worker = w->device();
        if (const auto path = pairs.pair(worker, primary).path(worker, m_forced_path)) {
            m_paths[worker.info().index] = *path;
        } else {
            m_paths.erase(worker.info().index); // none left: its moves are priced as unmeasured
        }
    }
}

const std::string& Scheduler::key_of(const Task& task) {
    if (const auto it = m_keys.find(task.id); it != m_keys.end()) {
        return it->second;
    }
    auto taken = [&](const std::string& key) {
        return std::any_of(m_keys.begin(), m_keys.end(),
                           [&](const auto& known) { return known.second == key; });
    };
    std::string key = task.key;
    if (taken(key)) {
        key = task.key + " (" + to_string(task.id) + ")"; // ids are never reused
    }
    while (taken(key)) {
        key += "'"; // an application's own name may look like that
    }
    return m_keys.emplace(task.id, std::move(key)).first->second;
}

const std::string& Scheduler::known_key(const Task& task) const {
    const auto it = m_keys.find(task.id);
    return it != m_keys.end() ? it->second : task.key;
}

void Scheduler::drop_unlisted(const TaskList& tasks) {
    std::unordered_set<TaskId> listed;
    for (const auto& task : tasks) {
        listed.insert(task->id);
    }
    for (auto it = m_keys.begin(); it != m_keys.end();) {
        if (listed.contains(it->first)) {
            ++it;
        } else {
            m_model->forget(it->second);
            it = m_keys.erase(it);
        }
    }
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
    for (const Worker* w : m_runtime->workers().workers()) {
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

std::vector<PlacementTask> Scheduler::placement_tasks(const TaskList& tasks,
                                                      const Task* extra) const {
    std::vector<PlacementTask> out;
    auto add = [&](const Task& task) {
        PlacementTask t;
        t.name = known_key(task);
        t.shape = task.shape;
        t.rate_hz = task.desc.rate_hz;
        if (task.links.leader != nullptr) {
            // Placed with it (the Placer ignores one not deciding).
            t.with = known_key(*task.links.leader);
        }
        // Placed by hand, or following a producer that was unregistered (its submits fail
        // wherever it runs, so a move would only cost a preparation): it stays where it is.
        if (task.links.leader != nullptr &&
            !task.links.leader->live.load(std::memory_order_acquire)) {
            t.held = "Its producer '" + known_key(*task.links.leader) +
                     "' was unregistered, so its submits fail wherever it runs.";
        }
        if ((!task.automatic || !t.held.empty()) && task.active != nullptr) {
            const std::uint32_t d = task.active->device();
            t.request = d == primary() ? Placement::on_primary() : Placement::on_adapter(d);
        }
        out.push_back(std::move(t));
    };
    for (const auto& task : tasks) {
        std::lock_guard lock(task->mutex);
        if (task->live) {
            add(*task);
        }
    }
    if (extra != nullptr) {
        std::lock_guard lock(extra->mutex);
        add(*extra);
    }
    return out;
}

Scheduler::~Scheduler() = default;

void Scheduler::pump() noexcept {
    std::unique_lock lock(m_schedule, std::try_to_lock);
    if (!lock.owns_lock()) {
        return; // a registration or calibration is running: decide in a later pump
    }
    try {
        for (auto it = m_tasks.begin(); it != m_tasks.end();) {
            bool gone = false;
            {
                std::lock_guard task_lock((*it)->mutex);
                gone = !(*it)->live;
            }
            if (gone) {
                forget((*it)->id); // its measurements go with it
                it = m_tasks.erase(it);
            } else {
                ++it;
            }
        }
        m_fallback->step(m_tasks);
        step(m_tasks, std::chrono::steady_clock::now());
    } catch (const std::exception& e) {
        log_error("runtime", "the scheduler's decision failed: {}", e.what());
    }
}

PlacementReport Scheduler::placement() const {
    std::lock_guard lock(m_schedule);
    return report(m_tasks);
}

CalibrationResult Scheduler::calibrate(TaskId id, std::span<const std::byte> bytes,
                                       std::uint32_t jobs) {
    std::lock_guard lock(m_schedule);
    const std::shared_ptr<Task> task = m_runtime->tasks().live(id);
    if (!task) {
        CalibrationResult out;
        out.error = TaskError::UnknownTask;
        out.reason = unknown_task(id);
        return out;
    }
    return calibrate_task(*task, bytes, jobs);
}

TaskError Scheduler::observe_execute(TaskId id, std::uint32_t device, double ms) noexcept {
    const std::shared_ptr<Task> task = m_runtime->tasks().live(id);
    if (!task) {
        return TaskError::UnknownTask;
    }
    if (m_runtime->workers().of(device) == nullptr || !std::isfinite(ms) || ms < 0.0) {
        return TaskError::BadArgument;
    }
    try {
        std::lock_guard lock(m_schedule);
        observe_task(*task, device, ms);
    } catch (...) {
        return TaskError::OutOfMemory; // the cost model could not record it
    }
    return TaskError::None;
}

bool Scheduler::key_taken(const std::string& key) const {
    bool taken = false;
    for (const auto& other : m_tasks) {
        std::lock_guard lock(other->mutex);
        taken = taken || (other->live && other->key == key);
    }
    return taken;
}

void Scheduler::admit(std::shared_ptr<Task> task, bool automatic) {
    m_tasks.push_back(std::move(task));
    if (!automatic) {
        refresh(m_tasks); // its load counts in the next decisions' explanation
    }
}

bool Scheduler::submit_trial(Task& task, TaskInstance& instance, std::span<const std::byte> bytes) {
    WorkerJob job;
    {
        std::lock_guard lock(task.mutex);
        // A task with inputs runs only the application's jobs: a trial has no inputs to read.
        if (!task.live || !instance.prepared() || instance.worker->lost() ||
            task.find(instance.serial) == nullptr || !instance.desc.inputs.empty()) {
            return false;
        }
        if (m_runtime->jobs().take(task, instance, bytes, true, job) !=
            JobPipeline::Take::Accepted) {
            return false;
        }
    }
    job.instance->worker->enqueue(job);
    return true;
}

std::uint32_t Scheduler::place_new(Task& task) {
    const TaskList& tasks = m_tasks;
    drop_unlisted(tasks);
    for (const auto& t : tasks) {
        (void)key_of(*t);
    }
    const std::string key = key_of(task);
    refresh_paths();
    m_plan = m_placer->decide(placement_tasks(tasks, &task), device_set());
    m_decisions.store(m_plan.decision, std::memory_order_relaxed);
    m_last_decision = std::chrono::steady_clock::now();
    for (const auto& t : tasks) {
        if (const auto chosen = m_plan.device_of(known_key(*t))) {
            apply(*t, *chosen);
        }
    }
    return m_plan.device_of(key).value_or(primary());
}

void Scheduler::note_failure(std::string why, std::optional<std::uint32_t> device) {
    log_error("scheduler", "{}", why);
    m_failures.push_back(std::move(why));
    if (m_failures.size() > k_max_failures) {
        m_failures.erase(m_failures.begin());
    }
    if (device && *device != primary() &&
        std::find(m_lost.begin(), m_lost.end(), *device) == m_lost.end()) {
        m_lost.push_back(*device); // not chosen again
    }
}

void Scheduler::collect_failures(const TaskList& tasks) {
    for (const auto& task : tasks) {
        std::vector<std::string> failures;
        std::vector<std::uint32_t> refused;
        {
            std::lock_guard lock(task->mutex);
            failures.swap(task->preparation.move_failures);
            refused = task->preparation.refused;
        }
        for (std::size_t i = 0; i < failures.size(); ++i) {
            note_failure(std::move(failures[i]), std::nullopt);
        }
        for (const std::uint32_t d : refused) {
            if (d != primary() && std::find(m_lost.begin(), m_lost.end(), d) == m_lost.end()) {
                m_lost.push_back(d);
            }
        }
    }
}

void Scheduler::apply(Task& task, std::uint32_t chosen) {
    std::string failure;
    {
        std::lock_guard lock(task.mutex);
        if (!task.live || !task.automatic || task.active == nullptr) {
            return; // gone, manual, or being registered (place_new's caller makes its instance)
        }
        if (task.pending != nullptr && task.pending_kind != PendingKind::Move) {
            return; // a fallback or a reconfiguration goes first
        }
        if (task.active->device() == chosen) {
            task.pending = nullptr; // staying (or back) where it runs: the other stays idle
            return;
        }
        if (task.pending != nullptr && task.pending->device() == chosen) {
            return; // on its way there
        }
        if (std::find(task.preparation.refused.begin(), task.preparation.refused.end(), chosen) !=
            task.preparation.refused.end()) {
            return;
        }
        TaskInstance* instance = task.on(chosen);
        try {
            if (instance == nullptr) {
                instance = &m_runtime->add_instance(task, task.desc, chosen);
            }
        } catch (const Error& e) {
            task.preparation.refused.push_back(chosen);
            failure = "task \"" + task.desc.name + "\" could not be registered on adapter " +
                      std::to_string(chosen) + ": " + e.what();
        }
        if (failure.empty() &&
            instance->phase.load(std::memory_order_acquire) == InstancePhase::Failed) {
            task.preparation.refused.push_back(chosen);
            failure = "task \"" + task.desc.name + "\" could not run on adapter " +
                      std::to_string(chosen) + ": " + instance->preparation_error;
            task.retire(instance);
        }
        if (failure.empty()) {
            task.pending = instance;
            task.pending_kind = PendingKind::Move;
            return;
        }
    }
    note_failure(std::move(failure), chosen);
}

void Scheduler::step(const TaskList& tasks, std::chrono::steady_clock::time_point now) {
    drop_unlisted(tasks);
    for (const auto& task : tasks) {
        (void)key_of(*task);
    }
    collect_failures(tasks);
    bool any_auto = false;
    bool lost_now = false;
    for (const auto& task : tasks) {
        std::lock_guard lock(task->mutex);
        if (!task->live || !task->automatic || task->active == nullptr) {
            continue;
        }
        any_auto = true;
        if (task->pending == nullptr && task->active->worker->lost()) {
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

void Scheduler::refresh(const TaskList& tasks) {
    drop_unlisted(tasks);
    for (const auto& task : tasks) {
        (void)key_of(*task);
    }
    m_last_decision = std::chrono::steady_clock::now();
    refresh_paths();
    decide(tasks);
}

void Scheduler::forget(TaskId task) {
    if (const auto it = m_keys.find(task); it != m_keys.end()) {
        m_model->forget(it->second);
        m_keys.erase(it);
    }
}

void Scheduler::observe(const TaskList& tasks) {
    const std::uint32_t p = primary();
    for (const auto& task : tasks) {
        const std::string& key = known_key(*task);
        const bool calibrated = calibrating(*task);
        std::lock_guard lock(task->mutex);
        for (const auto& instance : task->instances) {
            if (calibrated && instance.get() != task->active) {
                continue; // calibrate() times its own trial jobs
            }
            const TaskPulse pulse =
                instance_pulse(*instance, instance->trial ? 1 : k_recent_samples);
            if (pulse.completed == instance->completed_seen) {
                continue;
            }
            instance->completed_seen = pulse.completed;
            if (pulse.completed <= k_warm_up_outputs) {
                continue;
            }
            // One observation per decision in which new jobs completed: the medians of each
            // stage's newest samples (a trial's: its newest job), all timed from the request.
            const TaskStats& s = pulse.counters;
            const double execute_ms = execute_of(pulse);
            const double delivery_ms = (pulse.ready_us - pulse.worker_done_us) / 1000.0;
            const std::uint32_t device = instance->device();
            if (!task->external_execute && execute_ms >= 0.0 && s.worker_done.count > 0) {
                (void)m_model->observe(key, device, Stage::Execute, execute_ms);
            }
            if (device != p && delivery_ms >= 0.0 && s.ready_observed.count > 0) {
                (void)m_model->observe(key, device, Stage::Delivery, delivery_ms);
            }
        }
    }
}

bool Scheduler::needs_measuring(const Task& task, std::uint32_t device) const {
    const std::string& key = known_key(task);
    if (!m_model->execute(key, task.shape, device)) {
        return true;
    }
    return device != primary() &&
           !m_model->move(key, task.shape, device, primary(), path_of(device));
}

void Scheduler::run_trials(const TaskList& tasks) {
    if (!m_options.background_calibration) {
        return;
    }
    // An opening of the primary's own device can never take an auto task (moving there frees
    // nothing), so nothing is measured there.
    const DeviceSet set = device_set();
    std::vector<std::uint32_t> devices = scan_devices().live;
    std::erase_if(devices, [&](std::uint32_t d) {
        return d != primary() && set.share_capacity(d, primary());
    });
    for (const auto& task : tasks) {
        if (calibrating(*task)) {
            continue; // calibrate() runs its trial jobs now
        }
        bool wanted = false;
        for (const std::uint32_t d : devices) {
            std::vector<std::byte> snapshot;
            TaskInstance* instance = nullptr;
            std::string failure;
            {
                std::lock_guard lock(task->mutex);
                // A task with inputs (a chain's consumer among them) runs only the
                // application's jobs: it is measured where it runs.
                if (!task->live || !task->automatic || task->active == nullptr ||
                    !task->desc.inputs.empty() ||
                    (task->pending != nullptr && task->pending_kind != PendingKind::Move)) {
                    break;
                }
                if (d == task->active->device() || !needs_measuring(*task, d) ||
                    std::find(task->preparation.refused.begin(), task->preparation.refused.end(),
                              d) != task->preparation.refused.end()) {
                    continue; // the application's own submits measure the active device
                }
                instance = task->on(d);
                if (instance != nullptr && instance->trials_submitted >= m_options.trial_jobs) {
                    continue;
                }
                wanted = true;
                if (!task->snapshot.held) {
                    continue; // trial jobs run the application's own latest snapshot
                }
                try {
                    if (instance == nullptr) {
                        (void)m_runtime->add_instance(*task, task->desc, d);
                        continue; // prepared off the thread; measured in a later step
                    }
                } catch (const Error& e) {
                    task->preparation.refused.push_back(d);
                    failure = e.what();
                }
                if (failure.empty()) {
                    if (instance->preparing()) {
                        continue;
                    }
                    if (!instance->prepared()) {
                        task->preparation.refused.push_back(d);
                        failure = "task \"" + task->desc.name + "\" could not run on adapter " +
                                  std::to_string(d) + ": " + instance->preparation_error;
                        task->retire(instance);
                    } else if (instance_pulse(*instance, 0).counters.in_flight > 0) {
                        continue; // one trial at a time, so each is timed alone
                    } else {
                        snapshot = task->snapshot.bytes;
                    }
                }
            }
            if (!failure.empty()) {
                note_failure(std::move(failure), d);
                continue;
            }
            if (submit_trial(*task, *instance, snapshot)) {
                std::lock_guard lock(task->mutex);
                if (task->find(instance->serial) == instance) {
                    ++instance->trials_submitted;
                }
            }
        }
        task->snapshot.keep.store(wanted, std::memory_order_relaxed);
    }
}

void Scheduler::decide(const TaskList& tasks) {
    m_plan = m_placer->decide(placement_tasks(tasks, nullptr), device_set());
    m_decisions.store(m_plan.decision, std::memory_order_relaxed);
    for (const auto& task : tasks) {
        if (const auto chosen = m_plan.device_of(known_key(*task))) {
            apply(*task, *chosen);
        }
    }
}

std::chrono::milliseconds Scheduler::calibration_step_timeout() const {
    return 2 * m_runtime->worker_timeout() + m_runtime->first_job_timeout();
}

bool Scheduler::wait_prepared(Task& task, std::uint64_t serial) {
    const auto deadline = std::chrono::steady_clock::now() + calibration_step_timeout();
    for (;;) {
        {
            std::lock_guard lock(task.mutex);
            TaskInstance* instance = task.find(serial);
            if (instance == nullptr || !task.live) {
                return false;
            }
            if (!instance->preparing()) {
                return instance->prepared();
            }
        }
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        m_runtime->pump_completions();
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

// calibrate_task's trial jobs, one device after another, without the schedule lock: what they
// measured and why any failed, for the cost model and the report under the lock again.
struct Scheduler::CalibrationRun {
    struct Timing {
        std::uint32_t device;
        Stage stage;
        double ms;
    };

    Scheduler& scheduler;
    Task& task;
    std::span<const std::byte> bytes;
    std::chrono::milliseconds timeout; // for each job: its start, and then its completion
    std::uint32_t primary;
    std::vector<Timing> timings;
    std::vector<std::pair<std::string, std::uint32_t>> failures; // why, the adapter

    // `f` of the instance `serial` while the task holds it (nullptr once it does not), under
    // the task's mutex.
    template <class F>
    auto with(std::uint64_t serial, F&& f) {
        std::lock_guard lock(task.mutex);
        return f(task.live ? task.find(serial) : nullptr);
    }

    // `jobs` trial jobs on the instance `serial` (adapter `device`), each once the one before
    // completed; false when the instance was not prepared, the task left, or a job did not run.
    bool on(std::uint32_t device, std::uint64_t serial, std::uint32_t jobs) {
        if (!scheduler.wait_prepared(task, serial)) {
            std::lock_guard lock(task.mutex);
            if (TaskInstance* instance = task.find(serial); instance != nullptr) {
                task.preparation.refused.push_back(device);
                failures.emplace_back(could_not_run(device, instance->preparation_error), device);
            }
            return false;
        }
        for (std::uint32_t j = 0; j < jobs; ++j) {
            const std::uint64_t before = with(serial, [](TaskInstance* i) {
                return i != nullptr ? instance_pulse(*i, 0).completed : 0;
            });
            const auto deadline = std::chrono::steady_clock::now() + timeout;
            if (!start(device, serial, deadline) || !finish(device, serial, j, before, deadline)) {
                return false;
            }
        }
        return true;
    }

    // Submits one trial job, pumping while it is not taken; false when the task left
    // meanwhile or the job did not start by `deadline`.
    bool start(std::uint32_t device, std::uint64_t serial,
               std::chrono::steady_clock::time_point deadline) {
        for (;;) {
            TaskInstance* instance = with(serial, [](TaskInstance* i) { return i; });
            if (instance == nullptr) {
                return false; // the task was unregistered meanwhile
            }
            if (scheduler.submit_trial(task, *instance, bytes)) {
                return true;
            }
            if (std::chrono::steady_clock::now() > deadline) {
                failures.emplace_back("task \"" + task.desc.name +
                                          "\": its trial jobs did not start on adapter " +
                                          std::to_string(device),
                                      device);
                return false;
            }
            scheduler.m_runtime->pump_completions();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }

    // Pumps until the job `j` (the instance's completions were `before` it) completed, and
    // keeps its timings past the warm-up; false when it failed or did not complete by
    // `deadline` (the adapter refused then).
    bool finish(std::uint32_t device, std::uint64_t serial, std::uint32_t j, std::uint64_t before,
                std::chrono::steady_clock::time_point deadline) {
        for (;;) {
            scheduler.m_runtime->pump_completions();
            std::string failure;
            const bool done = with(serial, [&](TaskInstance* i) {
                if (i == nullptr) {
                    failure = "the task was unregistered";
                    return false;
                }
                const TaskPulse pulse = instance_pulse(*i, 1);
                if (pulse.completed > before) {
                    if (j >= k_warm_up_outputs) {
                        timings.push_back({device, Stage::Execute, execute_of(pulse)});
                        if (device != primary) {
                            timings.push_back({device, Stage::Delivery,
                                               (pulse.ready_us - pulse.worker_done_us) / 1000.0});
                        }
                    }
                    i->completed_seen = pulse.completed;
                    return true;
                }
                if (pulse.counters.worker_lost) {
                    failure = pulse.counters.worker_lost_reason;
                } else if (pulse.counters.failed_jobs > 0 && task.failures.in_a_row > 0 &&
                           !task.failures.last.empty()) {
                    failure = task.failures.last;
                }
                return false;
            });
            if (done) {
                return true;
            }
            if (failure.empty() && std::chrono::steady_clock::now() > deadline) {
                failure =
                    "a job did not complete within " + std::to_string(timeout.count()) + " ms";
            }
            if (!failure.empty()) {
                std::lock_guard lock(task.mutex);
                task.preparation.refused.push_back(device);
                failures.emplace_back(could_not_run(device, failure), device);
                return false;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }

    [[nodiscard]] std::string could_not_run(std::uint32_t device, const std::string& why) const {
        return "task \"" + task.desc.name + "\" could not run on adapter " +
               std::to_string(device) + ": " + why;
    }
};

CalibrationResult Scheduler::calibrate_task(Task& task, std::span<const std::byte> bytes,
                                            std::uint32_t jobs) {
    if (jobs < k_warm_up_outputs + RobustEstimate::k_min_samples) {
        throw Error(
            ErrorCategory::InvalidArgument,
            "Calibrating task '" + task.desc.name + "' with " + std::to_string(jobs) + " jobs",
            "Use at least " + std::to_string(k_warm_up_outputs + RobustEstimate::k_min_samples) +
                " jobs: the first two warm up, the cost is the median of the rest");
    }
    CalibrationResult out;
    {
        std::lock_guard lock(task.mutex);
        if (!task.desc.inputs.empty()) {
            out.error = TaskError::NotMeasured;
            out.reason = "task '" + task.desc.name +
                         "' has inputs, which only the application's own submits carry: it is "
                         "measured where it runs";
            return out;
        }
    }
    const std::string key = key_of(task); // a copy: m_keys may change while unlocked
    const std::uint32_t p = primary();
    // Under the schedule lock: the task's instance on each device that may run it.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> trials; // device, instance serial
    for (const std::uint32_t d : scan_devices().live) {
        std::lock_guard lock(task.mutex);
        if (!task.live) {
            break;
        }
        try {
            TaskInstance* instance = task.on(d);
            if (instance == nullptr) {
                instance = &m_runtime->add_instance(task, task.desc, d);
            }
            trials.emplace_back(d, instance->serial);
        } catch (const Error& e) {
            task.preparation.refused.push_back(d);
            note_failure(e.what(), d);
        }
    }

    // Without it: the preparations and the trial jobs. What they measure and every failure are
    // kept in `run` and handed to the cost model and the report under the lock again.
    CalibrationRun run{*this, task, bytes, calibration_step_timeout(), p};
    std::size_t measured = 0;
    const auto calibrating_entry = m_calibrating.insert(task.id);
    try {
        const Unlocked unlocked(m_schedule);
        for (const auto& [d, serial] : trials) {
            measured += run.on(d, serial, jobs) ? 1 : 0;
        }
    } catch (...) {
        m_calibrating.erase(calibrating_entry);
        throw;
    }
    m_calibrating.erase(calibrating_entry);

    // Under the lock again. A task unregistered meanwhile keeps nothing (its measurements go
    // with it); the pump may have dropped it already.
    for (auto& [why, d] : run.failures) {
        note_failure(std::move(why), d);
    }
    bool live = false;
    {
        std::lock_guard lock(task.mutex);
        live = task.live;
    }
    if (const auto it = m_keys.find(task.id); live && it != m_keys.end() && it->second == key) {
        for (const CalibrationRun::Timing& t : run.timings) {
            (void)m_model->observe(key, t.device, t.stage, t.ms);
        }
    }
    out.costs = costs(task);
    if (measured == 0) {
        out.error = TaskError::NotMeasured;
        out.reason = "Task '" + task.desc.name + "' could not be measured on any device; see " +
                     "placement().failures for why";
    }
    m_last_decision = {}; // the next pump decides with what was measured
    return out;
}

void Scheduler::observe_task(Task& task, std::uint32_t device, double ms) {
    {
        std::lock_guard lock(task.mutex);
        task.external_execute = true;
    }
    (void)m_model->observe(key_of(task), device, Stage::Execute, ms);
}

std::vector<DeviceCost> Scheduler::costs(const Task& task) const {
    WorkloadShape shape;
    {
        std::lock_guard lock(task.mutex);
        shape = task.shape;
    }
    std::vector<DeviceCost> out;
    for (const DeviceInfo& d : runtime_devices(*m_runtime)) {
        DeviceCost c;
        c.device = d.index;
        c.primary = d.index == primary();
        if (const auto e = m_model->execute(known_key(task), shape, d.index)) {
            c.execute_ms = e->ms;
            c.source = to_string(e->source);
        }
        if (!c.primary) {
            if (const auto m =
                    m_model->move(known_key(task), shape, d.index, primary(), path_of(d.index))) {
                c.move_ms = m->total_ms();
            }
        }
        out.push_back(std::move(c));
    }
    return out;
}

PlacementReport Scheduler::report(const TaskList& tasks) const {
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
        for (const auto& task : tasks) {
            if (known_key(*task) == e.task) {
                std::lock_guard lock(task->mutex);
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
