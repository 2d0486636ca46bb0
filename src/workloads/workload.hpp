// Workload: what a worker can run for a task. A workload records commands on a device's main queue
// that write one generation of a task's output into the slot's image, from a plain-data
// snapshot. One Workload object exists per (task, device): its pipelines and descriptor sets
// belong to that device. Workloads are made by name through the registry here; the pattern
// workload is built in, other layers (scene capture) register theirs with register_workload().
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
#include <memory>
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

// Adds (or replaces) a workload under `name`. Thread-safe.
void register_workload(const std::string& name, WorkloadFactory factory);
// Every registered name, sorted ("pattern" always).
[[nodiscard]] std::vector<std::string> workload_names();
// The factory registered under `name` now. Throws Error naming the known workloads when unknown.
[[nodiscard]] WorkloadFactory find_workload(std::string_view name);
// Creates workload `name` for `device`. Throws Error naming the known workloads when unknown.
[[nodiscard]] std::unique_ptr<Workload> create_workload(std::string_view name, const Device& device,
                                                        const WorkloadParams& params);

} // namespace tandem::detail
