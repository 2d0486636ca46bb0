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
    const ProbeMode mode = o.mode;
    const detail::QueueRole role = queue_role(o.queue);
    const double rate = o.rate_hz;
    const DeviceSession::State& s = session.state();
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
    const auto& worker_adapter = s.adapters.at(worker_index);
    const auto& primary_adapter = s.adapters.at(s.selection.primary);
    const PairInfo pair = detail::query_pair_info(worker_adapter.info, primary_adapter.info);

    Side worker;
    Side primary;
    worker.device = std::make_unique<detail::Device>(*s.instance, worker_adapter,
                                                     detail::DeviceOptions{true, "worker"});
    primary.device = std::make_unique<detail::Device>(*s.instance, primary_adapter,
                                                      detail::DeviceOptions{true, "primary"});
    prepare_side(worker, mode, role, o.in_flight);
    prepare_side(primary, mode, role, o.in_flight);
    const auto& worker_queue = worker.device->queue(role);
    const auto& primary_queue = primary.device->queue(role);

    const bool gpu_side = pair.gpu_side_sync;
    detail::TimelineSemaphore worker_timeline(*worker.device, "probe worker done", 0, gpu_side);
    std::optional<detail::TimelineSemaphore> primary_wait; // the worker's, imported
    if (gpu_side) {
        primary_wait.emplace(detail::TimelineSemaphore::import_from(
            *primary.device, worker_timeline, "probe shared"));
    }
    detail::TimelineSemaphore primary_done(*primary.device, "probe primary done");
    std::unique_ptr<detail::HostBridge> bridge;
    if (!gpu_side) {
        bridge = std::make_unique<detail::HostBridge>(
            worker_timeline,
            detail::HostBridge::Options{
                "probe bridge", std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000)),
                o.in_flight + 1});
    }

    std::vector<JobTimes> jobs(o.jobs + 1);
    std::uint64_t ticks = 0, busy = 0, accepted = 0, completed = 0, worker_seen = 0;
    const auto period =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
    const auto start = Clock::now();
    auto next_tick = start;
    auto last_progress = start;
    const auto timeout = std::chrono::duration<double>(o.timeout_s);
    ProbeResult out;
    out.setup = {gpu_side, worker_index, worker_adapter.info.name, s.selection.primary,
                 primary_adapter.info.name};
    if (on_start) {
        on_start(out.setup);
    }
    while (completed < o.jobs) {
        const auto now = Clock::now();
        if (accepted < o.jobs && now >= next_tick) {
            ++ticks;
            if (accepted - completed < o.in_flight) {
                const std::uint64_t j = ++accepted;
                const std::uint32_t slot = static_cast<std::uint32_t>(j % o.in_flight);
                jobs[j].request = next_tick;
                const auto done = primary_done.submit_info(j, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
                if (gpu_side) {
                    // Submitted ahead: the primary waits GPU-side on the worker's timeline.
                    const auto wait =
                        primary_wait->submit_info(j, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
                    detail::vk_check(submit_job(primary_queue, primary, slot, &wait, done),
                                     "probe primary submit");
                }
                detail::vk_check(submit_job(worker_queue, worker, slot, nullptr,
                                            worker_timeline.submit_info(
                                                j, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)),
                                 "probe worker submit");
                jobs[j].submitted = Clock::now();
                if (!gpu_side) {
                    // The bridge submits the primary's part once the worker is done. Forwarded
                    // only now: the worker may finish before its submit returns, and the bridge
                    // thread takes the job (under the bridge's lock) after `submitted` is set, so
                    // the worker done it records cannot come before it.
                    auto* times = &jobs[j];
                    const Side* side = &primary;
                    const detail::Queue* queue = &primary_queue;
                    if (!bridge->try_forward(j, [times, side, queue, slot, done] {
                            times->worker_done = Clock::now();
                            times->has_worker_done = true;
                            const VkResult result = submit_job(*queue, *side, slot, nullptr, done);
                            times->bridged = Clock::now();
                            times->has_bridged = true;
                            return result;
                        })) {
                        throw Error(bridge_failure(*bridge), "The probe bridge refused job " +
                                                                 std::to_string(j) + ": " +
                                                                 bridge->error());
                    }
                }
            } else {
                ++busy;
            }
            next_tick += period;
            if (now - next_tick > 1s) {
                next_tick = now; // far behind (a stall): do not burst to catch up
            }
        }
        std::uint64_t value = 0;
        detail::vk_check(primary_done.value(value), "probe primary done value");
        if (bridge) {
            // The primary can finish a job before the bridge's submit of it returns. A job counts
            // as done once its forward has returned too: forwarded() (acquire) makes the bridge's
            // times of those jobs visible, and `seen` is taken after it, so it is the later time.
            value = std::min(value, bridge->forwarded());
        }
        const auto seen = Clock::now();
        if (!bridge) {
            std::uint64_t w = 0;
            detail::vk_check(worker_timeline.value(w), "probe worker value");
            for (; worker_seen < std::min<std::uint64_t>(w, accepted); ++worker_seen) {
                jobs[worker_seen + 1].worker_done = seen;
                jobs[worker_seen + 1].has_worker_done = true;
            }
        } else {
            if (bridge->state() != detail::HostBridge::State::Running) {
                throw Error(bridge_failure(*bridge),
                            "The probe bridge stopped: " + bridge->error());
            }
        }
        for (; completed < std::min<std::uint64_t>(value, accepted); ++completed) {
            jobs[completed + 1].primary_done = seen;
            jobs[completed + 1].done = true;
            last_progress = seen;
        }
        if (accepted > completed && seen - last_progress > timeout &&
            seen - jobs[completed + 1].submitted > timeout) {
            throw Error(VK_TIMEOUT,
                        "Probe job " + std::to_string(completed + 1) + " did not complete within " +
                            std::to_string(o.timeout_s) + " s",
                        "The device may be hung or far slower than expected; raise --timeout");
        }
        std::this_thread::yield();
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (bridge) {
        bridge->stop(); // joins the bridge thread: its writes to `jobs` are visible from here on
    }

    // Each stage ends at a time taken after the one it starts from, on one clock: by the same
    // thread later, or by another thread after it saw that time published (the bridge's queue,
    // forwarded()). So no stage can be negative.
    std::vector<double> submit_us, worker_us, bridge_us, primary_us, total_us;
    for (std::uint64_t j = 1; j <= o.jobs; ++j) {
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
    out.ticks = ticks;
    out.accepted = accepted;
    out.busy = busy;
    out.completed = completed;
    out.elapsed_s = elapsed;
    out.ready_rate_hz = static_cast<double>(completed) / elapsed;
    out.submit = summarise(std::move(submit_us));
    out.worker_done = summarise(std::move(worker_us));
    out.bridge = summarise(std::move(bridge_us));
    out.primary_done = summarise(std::move(primary_us));
    out.total = summarise(std::move(total_us));
    return out;
}

} // namespace tandem::harness
