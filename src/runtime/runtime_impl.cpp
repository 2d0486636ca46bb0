#include "runtime/runtime_impl.hpp"

#include "core/log.hpp"

#include <algorithm>
#include <cmath>

#include "core/capabilities.hpp"
#include "core/cpu.hpp"
#include "core/image_cache.hpp"
#include "core/memory_pool.hpp"
#include "core/pipeline_shelf.hpp"
#include "core/vk_check.hpp"
#include "runtime/scheduler.hpp"
#include "tandem/error.hpp"
#include "workloads/workload.hpp"
#if TANDEM_HAVE_TRANSFER
#include "transfer/transfer_path.hpp"
#endif

namespace tandem::detail {
namespace {

Validation pick_validation(const RuntimeOptions& options) {
    if (options.validation.empty()) {
        return validation_from_env(Validation::Off);
    }
    auto parsed = parse_validation(options.validation);
    if (!parsed) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Validation '" + options.validation + "' is not understood",
                    "Use off, core or sync");
    }
    return *parsed;
}

std::uint32_t pick_virtual_devices(const RuntimeOptions& options) {
    return options.virtual_devices != 0 ? options.virtual_devices : virtual_devices_from_env(1);
}

std::optional<TransferPath> forced_path(const RuntimeOptions& options) {
#if TANDEM_HAVE_TRANSFER
    if (!options.transfer_path.empty()) {
        return parse_transfer_path(options.transfer_path);
    }
#else
    (void)options;
#endif
    return std::nullopt;
}

} // namespace

RuntimeImpl::RuntimeImpl(const RuntimeOptions& options)
    : m_logger(Logger::create(options.log_level, options.log)), m_options(options),
      m_events(options.max_events), m_timeout_ms(options.worker_timeout.count()),
      m_trace(options.trace) {
    const LogScope scope(*m_logger); // the threads started below inherit it
    inject_vk_faults_from_env();
    InstanceOptions instance_options;
    instance_options.validation = pick_validation(options);
    m_instance = std::make_unique<Instance>(instance_options);
    m_adapters = discover_adapters(*m_instance, pick_virtual_devices(options));
    const Selection selection = select_adapters(m_adapters, options.primary, options.workers);
    DeviceOptions primary_options;
    primary_options.label = "primary";
    primary_options.name_objects = options.name_objects;
    m_primary =
        std::make_unique<Device>(*m_instance, m_adapters[selection.primary], primary_options);
    open_workers(selection.workers);
}

RuntimeImpl::RuntimeImpl(const EmbedInfo& embed, const RuntimeOptions& options)
    : m_logger(Logger::create(options.log_level, options.log)), m_options(options),
      m_events(options.max_events), m_timeout_ms(options.worker_timeout.count()),
      m_trace(options.trace) {
    const LogScope scope(*m_logger); // the threads started below inherit it
    inject_vk_faults_from_env();
    m_instance = std::make_unique<Instance>(embed.instance, embed.debug_utils);
    // The application decides what opens: no environment variable adds openings here.
    m_adapters = discover_adapters(*m_instance, std::max(options.virtual_devices, 1u));
    std::optional<std::uint32_t> primary_index;
    for (const auto& a : m_adapters) {
        if (a.physical == embed.physical_device && !primary_index) {
            primary_index = a.info.index;
        }
    }
    if (!primary_index) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The application's physical device is not one of its instance's devices",
                    "Pass the VkPhysicalDevice the VkDevice was created from");
    }
    const std::vector<std::uint32_t> workers = select_embedded_workers(
        m_adapters, *primary_index, options.workers, options.embedded_cpu_workers);
    AdoptedDevice adopted;
    adopted.device = embed.device;
    adopted.queue_family = embed.queue_family;
    adopted.queue_index = embed.queue_index;
    adopted.queue_lock = embed.queue_mutex;
    m_own_main_queue = !embed.queue_mutex;
    adopted.enabled_extensions = embed.enabled_extensions;
    adopted.enabled_features = embed.enabled_features;
    adopted.get_instance_proc_addr = embed.get_instance_proc_addr;
    adopted.get_device_proc_addr = embed.get_device_proc_addr;
    DeviceOptions primary_options;
    primary_options.label = "primary";
    primary_options.name_objects = options.name_objects;
    m_primary =
        std::make_unique<Device>(*m_instance, m_adapters[*primary_index], adopted, primary_options);
    open_workers(workers);
}

void RuntimeImpl::open_workers(const std::vector<std::uint32_t>& worker_adapters) {
    if (m_options.max_consecutive_failures == 0) {
        throw Error(ErrorCategory::InvalidArgument, "RuntimeOptions::max_consecutive_failures is 0",
                    "Use 1 or more: how many jobs of a task may fail in a row before it stops");
    }
    if (m_options.cpu_device_timing_period.count() < 0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "RuntimeOptions::cpu_device_timing_period is negative (" +
                        std::to_string(m_options.cpu_device_timing_period.count()) + " ms)",
                    "Use 0 to time every job on a CPU device, or the time between timed jobs");
    }
    for (std::uint32_t index : worker_adapters) {
        DeviceOptions o;
        o.label = "worker" + std::to_string(m_worker_devices.size() + 1);
        o.name_objects = m_options.name_objects;
        m_worker_devices.push_back(std::make_unique<Device>(*m_instance, m_adapters[index], o));
    }
    m_reads = std::make_unique<TimelineSemaphore>(*m_primary, "tandem primary timeline");
    m_input_copies = std::make_unique<InputCopier>(*m_primary, m_own_main_queue);
    bool cpu_device = m_primary->info().type == "cpu";
    std::vector<const Device*> devices{m_primary.get()};
    for (const auto& device : m_worker_devices) {
        cpu_device = cpu_device || device->info().type == "cpu";
        devices.push_back(device.get());
    }
    m_poll = may_poll(cpu_device);

    m_retire = std::make_unique<RetireList>(devices);
    m_leases = std::make_unique<LeaseTable>(m_primary->queue(QueueRole::Main).family());
    m_pairs = std::make_unique<DevicePairs>(&m_trace);
    m_links = std::make_unique<LinkFailures>(*m_primary, *m_pairs, m_timeout_ms,
                                             m_options.first_job_timeout);
    m_preparer = std::make_unique<TaskPreparer>(*m_instance, *m_primary, m_options, m_poll,
                                                *m_pairs, *m_retire, m_trace);
    m_completion = std::make_unique<CompletionTracker>(
        m_tasks, *m_leases, *m_links, *m_preparer, *m_retire, *m_primary, *m_reads,
        m_input_copies->timeline(), m_trace, m_timeout_ms, m_options.first_job_timeout, m_events);
    m_jobs =
        std::make_unique<JobPipeline>(*m_completion, *m_links, *m_reads, *m_input_copies, m_trace,
                                      m_timeout_ms, m_options.max_consecutive_failures);
    m_loans = std::make_unique<InputLoans>(m_tasks, *m_jobs, *m_input_copies,
                                           m_options.max_consecutive_failures);

    JobPipeline* jobs = m_jobs.get();
    CompletionTracker* completion = m_completion.get();
    auto on_job = [jobs](Worker& w, const WorkerJob& job) { jobs->process_job(w, job); };
    auto on_drop = [jobs](Worker&, const WorkerJob& job) { jobs->drop_job(job); };
    auto on_complete = [completion](Worker&, const WorkerJob& job) {
        completion->job_completed(job);
    };
    m_workers.add(std::make_unique<Worker>(*m_primary, 0, on_job, on_drop, on_complete, m_poll));
    for (std::size_t i = 0; i < m_worker_devices.size(); ++i) {
        m_workers.add(std::make_unique<Worker>(*m_worker_devices[i],
                                               static_cast<std::uint32_t>(i + 1), on_job, on_drop,
                                               on_complete, m_poll));
    }
    m_scheduler = std::make_unique<Scheduler>(*this, m_options.scheduler, forced_path(m_options));
    m_completion->start(m_poll);
    m_preparer->start();
}

RuntimeImpl::~RuntimeImpl() {
    const LogScope scope(*m_logger);
    // Stop the threads first, then wait, bounded, for GPU work in flight (one bound for the
    // whole shutdown, however many tasks there are), then destroy tasks before the devices they
    // use.
    stop(std::chrono::steady_clock::now() + worker_timeout(), false);
    m_scheduler.reset();
    m_tasks.clear();
    m_retire->clear();
    m_workers.clear();
    m_loans.reset();
    m_jobs.reset();
    m_completion.reset();
    m_preparer.reset();
    m_links.reset();
    m_pairs.reset();
    m_leases.reset();
    m_retire.reset();
    m_input_copies.reset();
    m_reads.reset();
    m_worker_devices.clear();
    m_primary.reset();
    m_instance.reset();
}

void RuntimeImpl::stop(std::chrono::steady_clock::time_point deadline, bool halt_bridges) noexcept {
    // Queued jobs are dropped (their slots retire, no GPU work). A preparation in progress
    // finishes first; queued ones fail. The inputs' copies queued on their thread are submitted
    // before anything waits for the work in flight.
    if (m_input_copies) {
        m_input_copies->stop();
    }
    m_preparer->stop();
    m_completion->stop();
    for (auto& w : m_workers) {
        w->stop();
    }
    for (auto& w : m_workers) {
        w->observe_completions(); // what completed after the watchers stopped
    }
    if (!m_completion->drain(deadline)) {
        log_warn("runtime", "work still in flight when the runtime stopped: a device did not "
                            "finish in time");
    }
    // The last values reached (or some never will: a lost worker's failed submit); the batches
    // before them may still be finishing in the driver (lavapipe releases a batch's wait
    // semaphores after signalling, and a worker reported lost may still be running what it was
    // given). Nothing is destroyed before every queue is past them, within what is left of the
    // bound.
    auto settle = [&](const Device& device) {
        const auto left = std::max(std::chrono::steady_clock::duration::zero(),
                                   deadline - std::chrono::steady_clock::now());
        if (device.settle(std::chrono::duration_cast<std::chrono::nanoseconds>(left)) ==
            VK_TIMEOUT) {
            log_warn("runtime", "{}: work still in flight when the runtime stopped",
                     device.label());
        }
    };
    settle(*m_primary);
    for (const auto& device : m_worker_devices) {
        settle(*device);
    }
    // The bridges' threads carried the completions waited for; the destructor ends them with
    // the links.
    if (halt_bridges) {
        m_pairs->halt_bridges();
    }
}

void RuntimeImpl::leave_devices_open() noexcept {
    if (m_primary->owned()) {
        return; // standalone: every device is Tandem's own, destroyed with its instance
    }
    for (const auto& device : m_worker_devices) {
        device->leave_open();
    }
}

WorkloadFactory RuntimeImpl::check_description(const TaskDesc& desc) const {
    if (desc.slots < 2 || desc.slots > 16) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Task '" + desc.name + "' asks for " + std::to_string(desc.slots) + " slots",
                    "Use 2 to 16 slots (3 is the default)");
    }
    if (desc.width == 0 || desc.height == 0 || desc.width > 16384 || desc.height > 16384) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Task '" + desc.name + "' has size " + std::to_string(desc.width) + "x" +
                        std::to_string(desc.height),
                    "Use a width and height from 1 to 16384");
    }
    if (!std::isfinite(desc.rate_hz) || desc.rate_hz <= 0.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Task '" + desc.name + "' has an update rate of " +
                        std::to_string(desc.rate_hz) + " Hz",
                    "Give rate_hz as a positive number of updates per second (30 by default)");
    }
    if (!m_options.transfer_path.empty() && !parse_transfer_path(m_options.transfer_path)) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Transfer path '" + m_options.transfer_path + "' is not known",
                    "Use " + transfer_path_names());
    }
    if (desc.placement.kind != PlacementKind::Auto) {
        (void)place(desc); // a manual placement that names no device is refused now
    }
    (void)resolved_inputs(desc); // an input Tandem cannot carry is refused now
    // An unknown name is refused now, not when the task is prepared.
    return desc.factory ? WorkloadFactory{} : m_workloads.find(desc.workload);
}

TaskInstance& RuntimeImpl::add_instance(Task& task, const TaskDesc& desc,
                                        std::optional<std::uint32_t> device) {
    WorkloadFactory named = desc.factory ? WorkloadFactory{} : m_workloads.find(desc.workload);
    Worker* worker = device ? m_workers.of(*device) : &place(desc);
    if (worker == nullptr) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Adapter " + std::to_string(*device) + " is not a device of this runtime",
                    "Place the task on the primary or one of the runtime's workers");
    }
    const std::uint64_t serial = m_serials.fetch_add(1, std::memory_order_relaxed) + 1;
    auto owned = std::make_unique<TaskInstance>(serial, task, desc, *worker);
    owned->named_workload = std::move(named);
    // Feeds to the workers where its chains' consumers run on another device (chain_feeds.hpp).
    std::vector<Worker*> feed_to;
    for (const auto& [adapter, consumers] : task.links.feed_counts) {
        Worker* to = m_workers.of(adapter);
        if (consumers > 0 && to != nullptr && to != worker && to != &m_workers.primary()) {
            feed_to.push_back(to);
        }
    }
    owned->feeds.send_to(std::move(feed_to));
    TaskInstance& instance = *owned;
    task.instances.push_back(std::move(owned));
    worker->task_count.fetch_add(1, std::memory_order_relaxed);
    m_preparer->enqueue(instance);
    return instance;
}

static_assert(ImageCache::k_idle_kept == DeviceResources::k_cached_bound &&
              ImageCache::k_idle_bytes == DeviceResources::k_cached_bytes_bound);

RuntimeResources RuntimeImpl::resources() const {
    RuntimeResources out;
    auto device = [&](const Device& d) {
        // Read the cache first: an image taken from it meanwhile is then counted in use.
        const ImageCache::Held held = d.image_cache().held();
        const std::uint64_t idle = held.images + held.pairs + held.partner_halves;
        const std::uint64_t idle_bytes = held.bytes + held.partner_bytes;
        DeviceResources r;
        r.device = d.info().index;
        r.idle_images = static_cast<std::uint32_t>(idle);
        r.idle_image_bytes = idle_bytes;
        r.cached_images = static_cast<std::uint32_t>(held.images);
        r.cached_pairs = static_cast<std::uint32_t>(held.pairs);
        r.partner_halves = static_cast<std::uint32_t>(held.partner_halves);
        r.allocations = d.live_allocations() - std::min<std::uint64_t>(idle, d.live_allocations());
        r.bytes = d.live_bytes() - std::min(idle_bytes, d.live_bytes());
        r.pool_blocks = d.memory_pool().blocks();
        r.pool_bytes = d.memory_pool().block_bytes();
        r.pipelines = static_cast<std::uint32_t>(d.pipelines().size());
        out.devices.push_back(r);
    };
    device(*m_primary);
    for (const auto& d : m_worker_devices) {
        device(*d);
    }
    // Each worker's job, transfer and watcher threads, the completion and preparation threads,
    // and the pair bridges running now.
    out.threads = static_cast<std::uint32_t>(3 * m_workers.size() + 2 + m_pairs->bridge_threads());
    std::vector<std::shared_ptr<Task>> tasks;
    m_tasks.snapshot(tasks);
    for (const auto& task : tasks) {
        std::lock_guard lock(task->mutex);
        out.tasks += task->live ? 1u : 0u;
        out.instances += static_cast<std::uint32_t>(task->instances.size());
        out.retiring += static_cast<std::uint32_t>(task->retiring.size());
    }
    out.retiring += static_cast<std::uint32_t>(m_retire->pending());
    return out;
}

} // namespace tandem::detail
