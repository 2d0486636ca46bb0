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
//                   (SlotReaders::holds: neither taken nor recycled while held).
//   ChainedInput    the consumer instance's source of each chained input (input_sources.hpp):
//                   the slot takes the submit's hold; the job thread reads the held image with
//                   the wait its batch needs; the completion pass, once the consumer's job
//                   completed (or never ran), lets the hold go, and the producer's next job in
//                   the slot waits GPU-side for the consumer's work value (the two share the
//                   device's work timeline).
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

#include "runtime/input_sources.hpp"
#include "runtime/task.hpp"
#include "runtime/task_table.hpp"
#include "tandem/input.hpp"
#include "tandem/task.hpp"

namespace tandem::detail {

// One chained input of one consumer job (runtime/task_chains.hpp): the producer's instance and
// slot it holds (SlotReaders::holds) and the generation in it.
struct ChainedRead {
    std::size_t input = 0; // its index in the consumer's TaskDesc::inputs
    TaskInstance* producer = nullptr;
    std::uint32_t slot = 0;
    std::uint64_t generation = 0;
    // The producer runs on another device and the consumer on the primary: the job reads the
    // slot's primary image, where the producer's hand-off delivered the output.
    bool delivered = false;
    // The producer runs on another device and the consumer on a worker: the job reads the
    // slot's image where the producer's feed to that worker delivered it (ChainFeed).
    ChainFeed* feed = nullptr;
    // Whether the producer's next job in the slot waits on the consumer's device's work
    // timeline for this read (both on one device); else the completion pass saw it end.
    [[nodiscard]] bool in_place() const noexcept { return !delivered && feed == nullptr; }
};

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
// (A submit's holds no slot took; ChainedInput::release for a slot's.)
void release_chained(std::vector<ChainedRead>& reads, std::uint64_t done) noexcept;

// The holds a consumer's submit takes on its producers' slots before it takes its own task's
// mutex (never two tasks' mutexes at once), for the generation it would get on its active
// instance. Those no slot took over are let go when it goes.
class SubmitHolds {
public:
    SubmitHolds() = default;
    ~SubmitHolds() { release_chained(m_reads, 0); }
    SubmitHolds(const SubmitHolds&) = delete;
    SubmitHolds& operator=(const SubmitHolds&) = delete;

    // Looks at `task`'s active instance under its mutex, then holds (hold_chained) with no
    // mutex held. Held also for a task that reads no other task's output; anything else took
    // nothing, and Broken has stopped the task's reading in step (its producers keep nothing
    // more for it). Caller holds no task's mutex. Throws std::bad_alloc.
    [[nodiscard]] ChainHold take(const TaskTable& tasks, Task& task);
    // True when they fit `instance`'s next job (its task at `generations`): taken for it, or
    // it reads no other task's output. False when another thread's submit or a new shape came
    // between (the submit answers Busy). Caller holds the task's mutex.
    [[nodiscard]] bool fit(const TaskInstance& instance, std::uint64_t generations) const noexcept;
    // What the job's slot takes over (InputSources::hold).
    [[nodiscard]] std::vector<ChainedRead>& reads() noexcept { return m_reads; }

private:
    bool m_chained = false;
    const Worker* m_worker = nullptr;
    std::uint64_t m_generation = 0;
    std::vector<ChainedRead> m_reads;
};

// A chained input of a consumer's instance (input_sources.hpp): per slot, the hold its job's
// submit took on a producer's slot, read by the job thread where the producer's output is, and
// let go by the completion pass.
class ChainedInput final : public InputSource {
public:
    ChainedInput(std::size_t declared, std::uint32_t slots)
        : InputSource(declared), m_reads(slots) {}
    [[nodiscard]] TaskError failure() const noexcept override { return TaskError::ChainBroken; }
    // The held image, and the wait for it: in place, the producer's hand-off's worker side
    // (after which the image sits in SlotResources::handed_off_layout until the slot is written
    // again); delivered, the hand-off's primary side; fed, the feed's link on this worker.
    // NotYet while that is not submitted yet; Failed when the producer's job failed or was
    // queued behind this one. Nothing held (a trial job): Ready, `input` left empty.
    [[nodiscard]] Gathered gather(TaskInstance& instance, std::uint32_t slot,
                                  const InputCopier& copies, JobInput& input,
                                  std::vector<VkSemaphoreSubmitInfo>& waits,
                                  std::string& why) noexcept override;
    [[nodiscard]] bool hold(std::uint32_t slot, const ChainedRead& read) noexcept override;
    void release(std::uint32_t slot, std::uint64_t done) noexcept override;
    [[nodiscard]] bool holding(std::uint32_t slot) const noexcept override {
        return slot < m_reads.size() && m_reads[slot].producer != nullptr;
    }

private:
    std::vector<ChainedRead> m_reads; // per slot; a null producer holds nothing
};

} // namespace tandem::detail
