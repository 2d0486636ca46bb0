#include "harness/capture_tasks.hpp"

#include "tandem/capture.hpp"

namespace tandem::harness {

CaptureGpuTime capture_gpu_time(const TaskDeviceStats& device) {
    CaptureGpuTime out;
    const GpuTimeStats& t = device.gpu_us;
    if (!device.gpu_timed || t.count == 0) {
        return out;
    }
    out.per_update_ms = t.total_us / static_cast<double>(t.count) / 1000.0;
    out.first_update_ms = t.first_us / 1000.0;
    if (t.count > 1) {
        out.per_later_update_ms =
            (t.total_us - t.first_us) / static_cast<double>(t.count - 1) / 1000.0;
    }
    return out;
}

CaptureTasks::CaptureTasks(const RunScene& scene)
    : m_scene(scene), m_factory(capture_workload(scene.capture_scene())) {}

TaskDesc CaptureTasks::desc(std::size_t task, std::uint32_t slots) const {
    const RunTaskInfo& info = m_scene.tasks().at(task);
    TaskDesc desc;
    desc.name = info.name;
    desc.factory = m_factory;
    desc.width = info.width;
    desc.height = info.height;
    desc.format = VK_FORMAT_R8G8B8A8_UNORM;
    desc.slots = slots;
    desc.placement = info.placement;
    desc.rate_hz = info.rate_hz;
    desc.cost = {"capture", m_scene.triangles(), info.content_key};
    return desc;
}

std::map<std::uint32_t, DeviceCaptureTime>
CaptureTasks::gpu_by_device(const Runtime& runtime, std::span<const TaskId> ids) {
    std::map<std::uint32_t, DeviceCaptureTime> out;
    for (const TaskId id : ids) {
        for (const TaskDeviceStats& d : runtime.stats(id).devices) {
            if (d.preparing) {
                continue; // not timed yet, nor untimed
            }
            DeviceCaptureTime& sum = out[d.device];
            sum.timed = sum.timed && d.gpu_timed;
            // On a CPU device some jobs are untimed: they count at the timed jobs' mean.
            const GpuTimeStats& t = d.gpu_us;
            if (t.count > 0) {
                sum.busy_ms += t.total_us / static_cast<double>(t.count) *
                               static_cast<double>(t.count + t.untimed) / 1000.0;
            }
        }
    }
    return out;
}

} // namespace tandem::harness
