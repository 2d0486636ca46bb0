// CaptureTasks: a RunScene's capture tasks as a Runtime runs them, and the GPU time they took.
// desc() gives each task's TaskDesc (name, size, rate, placement, the capture workload of the
// scene, the cost the scheduler prices it by); the GPU time of each update comes from the
// workload's own timestamps, per task and device, where the device's queue has them.
// observe() feeds those times to the scheduler (Runtime::observe_execute); by_task() and
// by_device() are what a report shows. How the times are taken stays behind this header.
// Threads: the application thread; the sums are read from host memory only (never waiting for
// a worker device). Lifetime: create before registering the tasks, keep until the report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "harness/run_scene.hpp"
#include "tandem/runtime.hpp"
#include "tandem/task.hpp"

namespace tandem::harness {

// GPU time of one task's updates on one device, from timestamps (nullopt without them). The
// first update of each registration pays for pipeline creation and shader compilation.
struct CaptureGpuTime {
    std::optional<double> per_update_ms;       // mean over every update
    std::optional<double> first_update_ms;     // mean over the first updates
    std::optional<double> per_later_update_ms; // mean over the others
};

// GPU time of every capture on one device: the sum, or unknown when the device has no
// timestamps.
struct DeviceCaptureTime {
    bool timed = true;
    double busy_ms = 0;
};

class CaptureTasks {
public:
    // Makes the capture workload of `scene` (its assets) available to runtimes in this process;
    // `scene` must outlive the tasks registered from desc().
    explicit CaptureTasks(const RunScene& scene);
    ~CaptureTasks();
    CaptureTasks(const CaptureTasks&) = delete;
    CaptureTasks& operator=(const CaptureTasks&) = delete;

    // The TaskDesc of the scene's task `task` with `slots` slots.
    [[nodiscard]] TaskDesc desc(std::size_t task, std::uint32_t slots) const;

    // Feeds the GPU time since the last call to `runtime`'s scheduler, per task (ids[i] is the
    // scene's task i) and device, leaving out each registration's first update.
    void observe(Runtime& runtime, std::span<const TaskId> ids);

    // The sums of what completed so far, per (task name, adapter index) and per adapter.
    [[nodiscard]] std::map<std::pair<std::string, std::uint32_t>, CaptureGpuTime> by_task() const;
    [[nodiscard]] std::map<std::uint32_t, DeviceCaptureTime> by_device() const;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace tandem::harness
