// CaptureTasks: a RunScene's capture tasks as a Runtime runs them. desc() gives each task's
// TaskDesc: its name, size, rate and placement, the public capture workload
// (tandem::capture_workload) drawing the scene's tandem::Scene, and the cost the scheduler
// prices it by. The GPU time of each update is the runtime's own (TaskStats::gpu_us, per device),
// which the scheduler also prices the task's execution by; gpu_by_task() and gpu_by_device()
// are what a report shows of it.
// Threads: the application thread. Lifetime: keep it while the tasks are registered from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>

#include "harness/run_scene.hpp"
#include "tandem/runtime.hpp"
#include "tandem/task.hpp"

namespace tandem::harness {

// GPU time of one task's updates on one device, from timestamps (nullopt without them). The
// first update on a device pays for pipeline creation and shader compilation.
struct CaptureGpuTime {
    std::optional<double> per_update_ms;       // mean over every update
    std::optional<double> first_update_ms;     // the first update's
    std::optional<double> per_later_update_ms; // mean over the others
};

// The GPU time of one task's jobs on one device (TaskStats::devices[i]).
[[nodiscard]] CaptureGpuTime capture_gpu_time(const TaskDeviceStats& device);

// GPU time of every capture on one device: the sum, or unknown when the device has no
// timestamps.
struct DeviceCaptureTime {
    bool timed = true;
    double busy_ms = 0;
};

class CaptureTasks {
public:
    // `scene` must outlive the tasks registered from desc().
    explicit CaptureTasks(const RunScene& scene);

    // The TaskDesc of the scene's task `task` with `slots` slots.
    [[nodiscard]] TaskDesc desc(std::size_t task, std::uint32_t slots) const;

    // The GPU time the tasks `ids` took on each device they ran on (adapter index).
    [[nodiscard]] static std::map<std::uint32_t, DeviceCaptureTime>
    gpu_by_device(const Runtime& runtime, std::span<const TaskId> ids);

private:
    const RunScene& m_scene;
    WorkloadFactory m_factory; // one for every task: the scene is uploaded once per device
};

} // namespace tandem::harness
