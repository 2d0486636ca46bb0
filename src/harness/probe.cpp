#include "harness/probe.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/capabilities.hpp"
#include "core/device.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "harness/device_session_state.hpp"
#include "sync/host_bridge.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"

namespace tandem::harness {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

detail::QueueRole queue_role(ProbeQueue queue) {
    switch (queue) {
    case ProbeQueue::Graphics:
        return detail::QueueRole::Main;
    case ProbeQueue::Compute:
        return detail::QueueRole::Compute;
    case ProbeQueue::Transfer:
        break;
    }
    return detail::QueueRole::Transfer;
}

// A bridge stops on a failed Vulkan wait or submit, a timeout, or its pair's device lost. It
// keeps a sentence, not the VkResult, so the device lost is the one case told apart.
ErrorCategory bridge_failure(const detail::HostBridge& bridge) {
    const bool lost = bridge.pair() && !bridge.pair()->device_failure().empty();
    return lost ? ErrorCategory::DeviceLost : ErrorCategory::Vulkan;
}

// One side (worker or primary) of the probe: a command buffer per in-flight slot, recorded once.
struct Side {
    std::unique_ptr<detail::Device> device;
    detail::CommandPool pool;
    std::vector<VkCommandBuffer> commands;
    detail::Buffer src;
    detail::Buffer dst;
};

void prepare_side(Side& side, ProbeMode mode, detail::QueueRole role, std::uint32_t slots) {
    const auto& device = *side.device;
    const auto& queue = device.queue(role);
    side.pool = detail::CommandPool(device, queue.family(), device.label() + " probe pool");
    if (mode == ProbeMode::Signal) {
        return;
    }
    if (mode == ProbeMode::Copy) {
        const VkBufferUsageFlags usage =
            VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        side.src =
            detail::create_buffer(device, {256, usage, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                           device.label() + " probe src"});
        side.dst =
            detail::create_buffer(device, {256, usage, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                           device.label() + " probe dst"});
    }
    for (std::uint32_t i = 0; i < slots; ++i) {
        VkCommandBuffer cmd =
            side.pool.allocate(device.label() + " probe job " + std::to_string(i));
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        detail::vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer probe");
        if (mode == ProbeMode::Copy) {
            // Order this copy after the previous job's copy into the same buffer.
            detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT,
                                   VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                                   VK_ACCESS_2_TRANSFER_WRITE_BIT);
            VkBufferCopy region{0, 0, 256};
            vkCmdCopyBuffer(cmd, side.src.get(), side.dst.get(), 1, &region);
        }
        detail::vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer probe");
        side.commands.push_back(cmd);
    }
}

VkResult submit_job(const detail::Queue& queue, const Side& side, std::uint32_t slot,
                    const VkSemaphoreSubmitInfo* wait, const VkSemaphoreSubmitInfo& signal) {
    VkCommandBufferSubmitInfo cmd{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    if (!side.commands.empty()) {
        cmd.commandBuffer = side.commands[slot];
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &cmd;
    }
    if (wait != nullptr) {
        submit.waitSemaphoreInfoCount = 1;
        submit.pWaitSemaphoreInfos = wait;
    }
    submit.signalSemaphoreInfoCount = 1;
    submit.pSignalSemaphoreInfos = &signal;
    return queue.submit({&submit, 1});
}

struct JobTimes {
    Clock::time_point request, submitted, worker_done, bridged, primary_done;
    bool has_worker_done = false, has_bridged = false, done = false;
};

double micros(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

// The adapters the probe measures: the session's first worker against its primary.
struct ProbeAdapters {
    std::uint32_t worker_index = 0;
    const detail::Adapter* worker = nullptr;
    const detail::Adapter* primary = nullptr;
};

ProbeAdapters pick_adapters(const DeviceSession::State& s) {
    if (s.selection.workers.empty()) {
        throw Error(ErrorCategory::InvalidArgument, "The probe needs a worker adapter",
                    "Pass --workers or leave it on auto");
    }
    const std::uint32_t worker_index = s.selection.workers.front();
    if (worker_index == s.selection.primary) {
        throw Error(ErrorCategory::InvalidArgument,
                    "The probe's worker and primary are the same adapter",
                    "Pick a different worker, or --virtual-devices 2 to open one GPU twice");
    }
    return {worker_index, &s.adapters.at(worker_index), &s.adapters.at(s.selection.primary)};
}

// Both sides, opened and recorded, and what carries a job from the worker to the primary: the
// worker's timeline, imported on the primary (GPU-side) or waited on by the host bridge. Not
// movable: the bridge keeps a reference to the worker's timeline.
struct ProbeLink {
    ProbeLink(const DeviceSession::State& s, const ProbeAdapters& adapters, const ProbeRequest& o,
              detail::QueueRole role, bool gpu_side_sync);
    ProbeLink(const ProbeLink&) = delete;
    ProbeLink& operator=(const ProbeLink&) = delete;

    Side worker;
    Side primary;
    const detail::Queue* worker_queue = nullptr;
    const detail::Queue* primary_queue = nullptr;
    bool gpu_side = false;
    std::optional<detail::TimelineSemaphore> worker_timeline;
    std::optional<detail::TimelineSemaphore> primary_wait; // the worker's, imported
    std::optional<detail::TimelineSemaphore> primary_done;
    std::unique_ptr<detail::HostBridge> bridge; // without GPU-side synchronisation only
};

ProbeLink::ProbeLink(const DeviceSession::State& s, const ProbeAdapters& adapters,
                     const ProbeRequest& o, detail::QueueRole role, bool gpu_side_sync)
    : gpu_side(gpu_side_sync) {
    worker.device = std::make_unique<detail::Device>(*s.instance, *adapters.worker,
                                                     detail::DeviceOptions{true, "worker"});
    primary.device = std::make_unique<detail::Device>(*s.instance, *adapters.primary,
                                                      detail::DeviceOptions{true, "primary"});
    prepare_side(worker, o.mode, role, o.in_flight);
    prepare_side(primary, o.mode, role, o.in_flight);
    worker_queue = &worker.device->queue(role);
    primary_queue = &primary.device->queue(role);

    worker_timeline.emplace(*worker.device, "probe worker done", 0, gpu_side);
    if (gpu_side) {
        primary_wait.emplace(detail::TimelineSemaphore::import_from(
            *primary.device, *worker_timeline, "probe shared"));
    }
    primary_done.emplace(*primary.device, "probe primary done");
    if (!gpu_side) {
        bridge = std::make_unique<detail::HostBridge>(
            *worker_timeline,
            detail::HostBridge::Options{
                "probe bridge", std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000)),
                o.in_flight + 1});
    }
}

// The probe's counts and its clock while it runs; jobs[j] holds the times of job j (from 1).
struct ProbeProgress {
    std::vector<JobTimes> jobs;
    std::uint64_t ticks = 0, busy = 0, accepted = 0, completed = 0, worker_seen = 0;
    Clock::time_point next_tick;
    Clock::time_point last_progress;
};

// Submits job j on both sides (the primary's part ahead, GPU-side, or forwarded to the bridge).
void submit_probe_job(ProbeLink& link, ProbeProgress& progress, std::uint64_t j,
                      std::uint32_t slot) {
    const auto done = link.primary_done->submit_info(j, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    if (link.gpu_side) {
        // Submitted ahead: the primary waits GPU-side on the worker's timeline.
        const auto wait = link.primary_wait->submit_info(j, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        detail::vk_check(submit_job(*link.primary_queue, link.primary, slot, &wait, done),
                         "probe primary submit");
    }
    detail::vk_check(
        submit_job(*link.worker_queue, link.worker, slot, nullptr,
                   link.worker_timeline->submit_info(j, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)),
        "probe worker submit");
    progress.jobs[j].submitted = Clock::now();
    if (!link.gpu_side) {
        // The bridge submits the primary's part once the worker is done. Forwarded only now: the
        // worker may finish before its submit returns, and the bridge thread takes the job
        // (under the bridge's lock) after `submitted` is set, so the worker done it records
        // cannot come before it.
        auto* times = &progress.jobs[j];
        const Side* side = &link.primary;
        const detail::Queue* queue = link.primary_queue;
        if (!link.bridge->try_forward(j, [times, side, queue, slot, done] {
                times->worker_done = Clock::now();
                times->has_worker_done = true;
                const VkResult result = submit_job(*queue, *side, slot, nullptr, done);
                times->bridged = Clock::now();
                times->has_bridged = true;
                return result;
            })) {
            throw Error(bridge_failure(*link.bridge), "The probe bridge refused job " +
                                                          std::to_string(j) + ": " +
                                                          link.bridge->error());
        }
    }
}

// One tick of the target rate, due at or before `now`: a new job unless in_flight are out.
void on_tick(ProbeLink& link, ProbeProgress& progress, const ProbeRequest& o, Clock::time_point now,
             Clock::duration period) {
    ++progress.ticks;
    if (progress.accepted - progress.completed < o.in_flight) {
        const std::uint64_t j = ++progress.accepted;
        const std::uint32_t slot = static_cast<std::uint32_t>(j % o.in_flight);
        progress.jobs[j].request = progress.next_tick;
        submit_probe_job(link, progress, j, slot);
    } else {
        ++progress.busy;
    }
    progress.next_tick += period;
    if (now - progress.next_tick > 1s) {
        progress.next_tick = now; // far behind (a stall): do not burst to catch up
    }
}

// Records the jobs the worker and the primary finished since the last look; throws when the
// bridge stopped or the oldest job outstanding took longer than the timeout.
void observe_completions(ProbeLink& link, ProbeProgress& progress, const ProbeRequest& o) {
    std::uint64_t value = 0;
    detail::vk_check(link.primary_done->value(value), "probe primary done value");
    if (link.bridge) {
        // The primary can finish a job before the bridge's submit of it returns. A job counts
        // as done once its forward has returned too: forwarded() (acquire) makes the bridge's
        // times of those jobs visible, and `seen` is taken after it, so it is the later time.
        value = std::min(value, link.bridge->forwarded());
    }
    const auto seen = Clock::now();
    auto& jobs = progress.jobs;
    if (!link.bridge) {
        std::uint64_t w = 0;
        detail::vk_check(link.worker_timeline->value(w), "probe worker value");
        for (; progress.worker_seen < std::min<std::uint64_t>(w, progress.accepted);
             ++progress.worker_seen) {
            jobs[progress.worker_seen + 1].worker_done = seen;
            jobs[progress.worker_seen + 1].has_worker_done = true;
        }
    } else {
        if (link.bridge->state() != detail::HostBridge::State::Running) {
            throw Error(bridge_failure(*link.bridge),
                        "The probe bridge stopped: " + link.bridge->error());
        }
    }
    for (; progress.completed < std::min<std::uint64_t>(value, progress.accepted);
         ++progress.completed) {
        jobs[progress.completed + 1].primary_done = seen;
        jobs[progress.completed + 1].done = true;
        progress.last_progress = seen;
    }
    const auto timeout = std::chrono::duration<double>(o.timeout_s);
    if (progress.accepted > progress.completed && seen - progress.last_progress > timeout &&
        seen - jobs[progress.completed + 1].submitted > timeout) {
        throw Error(VK_TIMEOUT,
                    "Probe job " + std::to_string(progress.completed + 1) +
                        " did not complete within " + std::to_string(o.timeout_s) + " s",
                    "The device may be hung or far slower than expected; raise --timeout");
    }
}

// The per-stage summaries of jobs 1..count into `out`.
void summarise_stages(const std::vector<JobTimes>& jobs, std::uint32_t count, ProbeResult& out) {
    // Each stage ends at a time taken after the one it starts from, on one clock: by the same
    // thread later, or by another thread after it saw that time published (the bridge's queue,
    // forwarded()). So no stage can be negative.
    std::vector<double> submit_us, worker_us, bridge_us, primary_us, total_us;
    for (std::uint64_t j = 1; j <= count; ++j) {
        const auto& t = jobs[j];
        submit_us.push_back(micros(t.request, t.submitted));
        total_us.push_back(micros(t.request, t.primary_done));
        if (t.has_worker_done) {
            worker_us.push_back(micros(t.submitted, t.worker_done));
            const auto after_worker = t.has_bridged ? t.bridged : t.worker_done;
            if (t.has_bridged) {
                bridge_us.push_back(micros(t.worker_done, t.bridged));
            }
            primary_us.push_back(micros(after_worker, t.primary_done));
        }
    }
    out.submit = summarise(std::move(submit_us));
    out.worker_done = summarise(std::move(worker_us));
    out.bridge = summarise(std::move(bridge_us));
    out.primary_done = summarise(std::move(primary_us));
    out.total = summarise(std::move(total_us));
}

} // namespace

ProbeMode parse_probe_mode(const std::string& text) {
    if (text == "signal") {
        return ProbeMode::Signal;
    }
    if (text == "empty") {
        return ProbeMode::Empty;
    }
    if (text == "copy") {
        return ProbeMode::Copy;
    }
    throw Error(ErrorCategory::InvalidArgument, "Probe mode '" + text + "' is not known",
                "Use signal, empty or copy");
}

ProbeQueue parse_probe_queue(const std::string& text) {
    if (text == "graphics") {
        return ProbeQueue::Graphics;
    }
    if (text == "compute") {
        return ProbeQueue::Compute;
    }
    if (text == "transfer") {
        return ProbeQueue::Transfer;
    }
    throw Error(ErrorCategory::InvalidArgument, "Queue '" + text + "' is not known",
                "Use graphics, compute or transfer");
}

ProbeResult run_probe(const DeviceSession& session, const ProbeRequest& o,
                      const std::function<void(const ProbeSetup&)>& on_start) {
    const detail::QueueRole role = queue_role(o.queue);
    const DeviceSession::State& s = session.state();
    const ProbeAdapters adapters = pick_adapters(s);
    const PairInfo pair = detail::query_pair_info(adapters.worker->info, adapters.primary->info);
    // Before the link: on an exception the link's bridge thread, which writes into `jobs`, stops
    // with the link before they go.
    ProbeProgress progress;
    progress.jobs.resize(o.jobs + 1);
    ProbeLink link(s, adapters, o, role, pair.gpu_side_sync);

    const auto period =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / o.rate_hz));
    const auto start = Clock::now();
    progress.next_tick = start;
    progress.last_progress = start;
    ProbeResult out;
    out.setup = {link.gpu_side, adapters.worker_index, adapters.worker->info.name,
                 s.selection.primary, adapters.primary->info.name};
    if (on_start) {
        on_start(out.setup);
    }
    while (progress.completed < o.jobs) {
        const auto now = Clock::now();
        if (progress.accepted < o.jobs && now >= progress.next_tick) {
            on_tick(link, progress, o, now, period);
        }
        observe_completions(link, progress, o);
        std::this_thread::yield();
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (link.bridge) {
        // Joins the bridge thread: its writes to `jobs` are visible from here on.
        link.bridge->stop();
    }
    out.ticks = progress.ticks;
    out.accepted = progress.accepted;
    out.busy = progress.busy;
    out.completed = progress.completed;
    out.elapsed_s = elapsed;
    out.ready_rate_hz = static_cast<double>(progress.completed) / elapsed;
    summarise_stages(progress.jobs, o.jobs, out);
    return out;
}

} // namespace tandem::harness
