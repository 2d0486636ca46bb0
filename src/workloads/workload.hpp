// Workload: what a worker can run for a task. A workload records commands on a device's main queue
// that write one generation of a task's output into the slot's image, from a plain-data
// snapshot. One Workload object exists per (task, device): its pipelines and descriptor sets
// belong to that device. A runtime makes the workload a task names (TaskDesc::workload) from its
// own WorkloadTable: "pattern" is built in; Tandem's tests add theirs to one runtime's table.
// The application's workloads (TaskDesc::factory) come through ApplicationWorkload instead.
//
// Threads: a factory runs when the task is prepared, on the runtime's preparation thread (set-up:
// may throw tandem::Error). record() runs on the worker's submission thread only, one call at a
// time per object; completed() on the worker's completion watcher; neither throws, and neither
// is ever called on the application's thread.
// Lifetime: the runtime destroys a workload only after every command buffer it recorded has
// completed (or its device was lost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "tandem/workload.hpp"

namespace tandem::detail {

// The slot image a workload writes.
struct WorkloadTarget {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkFormat format = VK_FORMAT_UNDEFINED;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    // Layout the image is in when the commands start (UNDEFINED: contents may be discarded).
    // Earlier reads of the image (the transfer's copy) have completed before they start.
    VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED;
    // The job's inputs on this device (TaskDesc::inputs), arrived before the commands start.
    std::span<const JobInput> inputs;
};

// Where the recorded commands leave the target: its layout and the stage/access of the writes,
// which the runtime passes on to the transfer as the source scope (the public type).
using WorkloadOutput = tandem::WorkloadOutput;

struct WorkloadParams {
    std::string task_name;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    std::uint32_t slots = 3;
    std::vector<TaskInputDesc> inputs; // sizes resolved: 0 is the task's
};

class Workload {
public:
    virtual ~Workload() = default;
    Workload() = default;
    Workload(const Workload&) = delete;
    Workload& operator=(const Workload&) = delete;

    // Image usage the target needs for record() (e.g. STORAGE, COLOR_ATTACHMENT).
    [[nodiscard]] virtual VkImageUsageFlags target_usage() const noexcept = 0;
    [[nodiscard]] virtual WorkloadOutput output() const noexcept = 0;

    // A sentence saying why a job of `snapshot` cannot run (tandem::Workload::check); empty when
    // it can. Called by submit() on the application's thread; cheap, never blocks, never throws.
    [[nodiscard]] virtual std::string check(std::span<const std::byte> /*snapshot*/) const {
        return {};
    }

    // Records the commands that write `generation` of the task into `target` (slot `slot`).
    // `snapshot` is the plain data the application passed to submit(); its bytes are valid
    // only during the call. Returns VK_SUCCESS or the failure; never throws.
    [[nodiscard]] virtual VkResult record(VkCommandBuffer cmd, std::uint32_t slot,
                                          const WorkloadTarget& target, std::uint64_t generation,
                                          std::span<const std::byte> snapshot) noexcept = 0;

    // The GPU work recorded for `generation` into slot `slot` was observed complete on the
    // worker's device: the place to read what it measured (timestamps) without waiting. Called
    // once per submitted generation, in submit order, on the worker's watcher thread; it may
    // run concurrently with record() of another slot, and after the slot was recorded again (a
    // generation's results must be told apart). Must be cheap and must not block.
    virtual void completed(std::uint32_t /*slot*/, std::uint64_t /*generation*/) noexcept {}

    // A sentence when the last failed record() failed in the application's own code (the task
    // stops; the worker is fine); empty when a failure is the device's (the worker is lost).
    [[nodiscard]] virtual std::string failure() const { return {}; }
};

using WorkloadFactory =
    std::function<std::unique_ptr<Workload>(const Device& device, const WorkloadParams& params)>;

// The workloads one runtime knows by name. Thread-safe.
class WorkloadTable {
public:
    WorkloadTable(); // the built-in ones ("pattern")
    // Adds (or replaces) the workload `name` for tasks registered afterwards.
    void add(const std::string& name, WorkloadFactory factory);
    // Every name, sorted.
    [[nodiscard]] std::vector<std::string> names() const;
    // The factory of `name`. Throws Error naming the known workloads when unknown.
    [[nodiscard]] WorkloadFactory find(std::string_view name) const;

private:
    mutable std::mutex m_mutex;
    std::map<std::string, WorkloadFactory, std::less<>> m_factories;
};

} // namespace tandem::detail
