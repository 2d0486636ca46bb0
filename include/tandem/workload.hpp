// Workload: the application's own work for a task, run wherever Tandem places the task. Give a
// factory in TaskDesc::factory; Tandem calls it once per device the task is prepared on (on a
// Tandem thread, never the application's frame) with that device's Vulkan objects, so the
// workload can build its pipelines there, and then records each job into the slot's image.
//
// clang-format off
//     struct Fill final : tandem::Workload {
//         VkImageUsageFlags target_usage() const override {
//             return VK_IMAGE_USAGE_TRANSFER_DST_BIT;
//         }
//         tandem::WorkloadOutput output() const override {
//             return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
//                     VK_ACCESS_2_TRANSFER_WRITE_BIT};
//         }
//         std::string check(std::span<const std::byte> bytes) const override {
//             return bytes.size() == 16 ? "" : "a fill job takes 16 bytes (an RGBA float colour)";
//         }
//         void record(const tandem::RecordContext& job) override { /* barrier, clear */ }
//     };
//     desc.factory = [](const tandem::WorkerContext&) { return std::make_unique<Fill>(); };
// clang-format on
//
// Threads: the factory runs on Tandem's preparation thread; check() on the application's thread
// that submits (concurrently with record() of other jobs); record() on the worker's submission
// thread, one call at a time per object; completed() on the worker's completion watcher.
// Errors: a factory that throws fails the task's preparation (TaskStats::preparation_error;
// register_task rethrows). A job whose bytes check() refuses is never accepted: submit answers
// Failed (TaskError::BadBytes) with the sentence and nothing changes. A record() that throws
// fails its job alone: the job produces nothing, its slot is reused, TaskStats::failed_jobs and
// workload_error say so, and the next job runs; only RuntimeOptions::max_consecutive_failures
// failures in a row stop the task.
// GPU time: Tandem writes a timestamp just before and just after the commands record() writes
// and reports each job's time (TaskStats::gpu_us; on a CPU device, a job each
// RuntimeOptions::cpu_device_timing_period); a workload need not time itself.
// In flight at record(): Tandem records slot s again only once every command buffer recorded
// for it before has completed on the device (or was never submitted: a record() that threw), so
// record() may rewrite on the host, without waiting, what only slot s's jobs use (its descriptor
// set, buffers it maps, its own images). completed() of that earlier job may still be on its way
// (a job is sometimes seen complete through its transfer first): never wait for it. Jobs of the
// other slots (up to slots - 1) may still run: what slots share is rewritten only by commands,
// never by the host in record(); a task's jobs on one device go to one queue in the order
// recorded, so a barrier at the start of the commands orders them after the earlier jobs'. The
// slot's image may still be read by the transfer of its previous output; the job waits for that
// on the GPU before its commands start.
// Freeing: what slot s alone uses may be freed or replaced in record() for slot s; what slots
// share, in the destructor. completed() runs on another thread, maybe after the slot's next
// record(): free nothing there that record() uses.
// Lifetime: a workload is destroyed on a Tandem thread once every command buffer it recorded
// has completed (or its device was lost), before the device it was made for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/device_info.hpp"
#include "tandem/export.hpp"
#include "tandem/input.hpp"

namespace tandem {

// The device a workload is made for, and the task's output.
struct WorkerContext {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    // record()'s command buffers run on a queue of this family (graphics, compute, transfer).
    std::uint32_t queue_family = 0;
    DeviceInfo device_info;
    std::string task_name;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    std::uint32_t slots = 3; // record() is given slot 0 .. slots-1
    // The task's inputs (TaskDesc::inputs) with their sizes resolved (0 became the task's).
    std::vector<TaskInputDesc> inputs;
    // Names a Vulkan object of `device` for debuggers (VK_EXT_debug_utils; a no-op without it).
    std::function<void(VkObjectType type, std::uint64_t handle, const std::string& name)> set_name;
    // A memory type among `type_bits` with every `required` flag, and `preferred` ones where
    // possible; nullopt when there is none.
    std::function<std::optional<std::uint32_t>(
        std::uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred)>
        find_memory_type;
};

// One job: write generation `generation` of the task into `image`.
struct RecordContext {
    VkCommandBuffer cmd = VK_NULL_HANDLE; // begun; Tandem ends and submits it
    std::uint32_t slot = 0;
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE; // a 2D colour view of the whole image
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    VkExtent2D extent{};
    // The layout the image is in when the commands start (UNDEFINED: the contents may be
    // discarded). Earlier reads of the image (the transfer's copy) completed before they start.
    VkImageLayout initial_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    std::uint64_t generation = 0;
    std::span<const std::byte> bytes; // what the application submitted; valid during record()
    // The job's inputs (TaskDesc::inputs, tandem/input.hpp), in their declared order, arrived on
    // this device; valid during record(), the images for as long as the job's commands run.
    std::span<const JobInput> inputs;
};

// Where the recorded commands leave the image: its layout and the stage and access of the
// writes, which Tandem's transfer waits for.
struct WorkloadOutput {
    VkImageLayout layout = VK_IMAGE_LAYOUT_GENERAL;
    VkPipelineStageFlags2 stage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
    VkAccessFlags2 access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
};

class TANDEM_API Workload {
public:
    Workload() = default;
    virtual ~Workload() = default;
    Workload(const Workload&) = delete;
    Workload& operator=(const Workload&) = delete;

    // Image usage the slot images need for record() (STORAGE, COLOR_ATTACHMENT, TRANSFER_DST...).
    [[nodiscard]] virtual VkImageUsageFlags target_usage() const = 0;
    [[nodiscard]] virtual WorkloadOutput output() const = 0;
    // A sentence saying why a job with these bytes cannot run (a wrong size, an id the workload
    // does not know: anything it can tell without the GPU); empty when it can. Called by submit()
    // on the application's thread before anything changes, so it must be cheap, must not block
    // and must be safe beside record(). The default accepts every job.
    [[nodiscard]] virtual std::string check(std::span<const std::byte> /*bytes*/) const {
        return {};
    }
    // Records the job's commands into job.cmd. Throw to fail the job (see above).
    virtual void record(const RecordContext& job) = 0;
    // The job of `generation` in `slot` was seen complete on the device: the place to read what
    // it measured, without waiting. Once per recorded generation, in order; must not block.
    virtual void completed(std::uint32_t /*slot*/, std::uint64_t /*generation*/) noexcept {}
};

using WorkloadFactory = std::function<std::unique_ptr<Workload>(const WorkerContext& context)>;

} // namespace tandem
