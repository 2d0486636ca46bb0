// Task chains (tandem/input.hpp, Chains): an input that is another task's output, read in place
// on the device both tasks run on, never copied; or, for a consumer on the primary whose producer
// runs on a worker, read where the producer's hand-off delivered it (ChainedRead::delivered).
//
//   check_chain     registration and reconfigure (the runtime's chain lock held): each chained
//                   input names a live task of this runtime whose output has its format and
//                   size, and no chain leads back to the task; sizes of 0 become the producer's.
//                   A matching consumer is registered before its producer's first submit.
//   hold_chained    the consumer's submit, before it takes its own task's mutex: for each
//                   chained input the producer's slot holding the generation asked for is held
//                   (SlotRecord::chain_reads: neither taken nor recycled while held).
//   read_chained    the consumer's job thread: the held images as JobInputs, and the waits its
//                   batch needs: the producer's hand-off's worker side (after which the image
//                   sits in SlotResources::chain_layout until the slot is written again).
//   release_chained the completion pass, once the consumer's job completed (or never ran): the
//                   holds go, and the producer's next job in the slot waits GPU-side for the
//                   consumer's work value (the two share the device's work timeline).
//
// Lock order: a consumer's instance mutex may be followed by one of its producers' instance
// mutexes (chains have no cycles, so never the other way round); a producer's task mutex is
// taken only with no other task's held.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "runtime/task.hpp"
#include "runtime/task_table.hpp"
#include "tandem/input.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

// Whether `desc` has a chained input; how many of its inputs are the application's.
[[nodiscard]] bool has_chain(const TaskDesc& desc) noexcept;
[[nodiscard]] std::size_t application_inputs(const TaskDesc& desc) noexcept;

// Checks `desc`'s chained inputs and resolves their sizes (0: the producer's), returning the
// producers in input order. `self`: the task being reconfigured (a chain leading back to it is
// a cycle); none at registration. Caller holds the runtime's chain lock and no task's mutex.
// Throws Error with a sentence.
[[nodiscard]] std::vector<std::shared_ptr<Task>> check_chain(const TaskTable& tasks, TaskDesc& desc,
                                                             TaskId self);

// What hold_chained answered.
struct ChainHold {
    enum class Status { Held, Busy, Preparing, Broken };
    Status status = Status::Held;
    std::string reason; // Busy, Preparing, Broken: a sentence
};

// Holds, for a job of generation `generation` of the task named `consumer` whose inputs are
// `inputs` (its active instance's), running on `worker`, each chained input's producer slot
// (appended to `out`). Anything but Held takes nothing. A consumer that `follows` its producer
// (TaskLinks::leader: a chain moving as a unit) answers Preparing while the two are on different
// devices: one of them got to the new device first, or the scheduler sends the consumer after
// its producer at its next decision. Caller holds no task's
// mutex. Never throws.
[[nodiscard]] ChainHold hold_chained(const TaskTable& tasks, const std::string& consumer,
                                     std::span<const TaskInputDesc> inputs, const Worker* worker,
                                     bool follows, std::uint64_t generation,
                                     std::vector<ChainedRead>& out) noexcept;

// Lets the holds in `reads` go (cleared); `done`: the consumer job's work value on the shared
// work timeline (0: it never ran). Caller holds at most the consumer's task and instance mutex.
void release_chained(std::vector<ChainedRead>& reads, std::uint64_t done) noexcept;

// The job thread's part: each held image as a JobInput at its input's index in `inputs`, and
// the waits for it appended to `waits`. VK_SUCCESS; VK_NOT_READY while a producer's hand-off is
// not submitted yet (ask again); VK_ERROR_UNKNOWN with `why` when a producer's job failed or
// was queued behind this one.
[[nodiscard]] VkResult read_chained(const std::vector<ChainedRead>& reads,
                                    std::vector<JobInput>& inputs,
                                    std::vector<VkSemaphoreSubmitInfo>& waits,
                                    std::string& why) noexcept;

} // namespace tandem::detail
