// Input sources: one object per declared input of a task instance (TaskDesc::inputs, in that
// order), which the threads that own a slot walk alike, whatever carries the input:
//
//   CopiedInput    (task_inputs.hpp) an image or buffer of the application's: Tandem's copy at
//                  submit, or the slot's own image lent to the application and signalled by
//                  Tandem's batch or by the application itself; on another device the input's
//                  link carries it there.
//   ChainedInput   (task_chains.hpp) another task's output: read in place on the device both
//                  run on, where the producer's hand-off delivered it on the primary, or where its
//                  feed delivered it on this worker.
//
// The hooks, each on the thread that already owns the slot:
//   hold      the application's submit, under the instance's mutex, the slot taken for the
//             job: a chained input's hold on its producer's slot (hold_chained took it).
//   gather    the job thread, before the work: the input as the workload reads it (JobInput)
//             and the waits the job's batch needs. NotYet while what the batch would wait for is
//             not queued yet, LinkBusy while its link cannot take it yet: the job thread asks
//             again (nothing is sent twice).
//   send_ahead the job thread, for a job queued behind the one it holds: an input still to
//             cross a link is handed to it now, so the next download is in flight early.
//   release   the completion pass, once the slot's job completed or will not run (and the
//             submit that takes a slot whose earlier job never ran): the holds go, and `done`
//             (the job's work value) orders the producer's next write of its slot.
//   holding   whether the slot still holds another task's slot: its instance is not quiescent.
// The copies at submit are one batch for all the application's inputs of a slot (InputCopier,
// task_inputs.hpp): one submit on the primary per job, however many inputs it has.
//
// Threads: a source is made by the preparation thread before its instance is Ready and never
// changes after; its per-slot state belongs to whoever owns the slot (the submit, then the job
// thread, then the completion pass, each under or after the instance's mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "tandem/error.hpp"
#include "tandem/input.hpp"

namespace tandem::detail {

struct TaskInstance;
struct ChainedRead;
class InputCopier;
class SlotTransport;

// What a source answered the job thread.
enum class Gathered {
    Ready,    // `input` filled and its waits appended
    NotYet,   // what the job would wait for is not queued yet: ask again soon
    LinkBusy, // its link cannot take it yet: ask again a little later
    Failed,   // the job cannot read it: `why` says so
};

// Appends `wait` to a batch's `waits`, or raises the value of the wait on its semaphore that is
// there already (timelines: the greater value implies the lesser). Throws std::bad_alloc only.
void add_wait(std::vector<VkSemaphoreSubmitInfo>& waits, const VkSemaphoreSubmitInfo& wait);

class InputSource {
public:
    explicit InputSource(std::size_t declared) : m_declared(declared) {}
    virtual ~InputSource() = default;
    InputSource(const InputSource&) = delete;
    InputSource& operator=(const InputSource&) = delete;

    // Its index in TaskDesc::inputs (and in the job's JobInputs).
    [[nodiscard]] std::size_t declared() const noexcept { return m_declared; }
    // What a failure of gather costs the job (TransferFailed, ChainBroken).
    [[nodiscard]] virtual TaskError failure() const noexcept = 0;
    // The link that carries it to the task's device; null when none does.
    [[nodiscard]] virtual SlotTransport* link() const noexcept { return nullptr; }

    [[nodiscard]] virtual Gathered gather(TaskInstance& instance, std::uint32_t slot,
                                          const InputCopier& copies, JobInput& input,
                                          std::vector<VkSemaphoreSubmitInfo>& waits,
                                          std::string& why) noexcept = 0;
    // For a job queued behind the one the job thread holds: Ready once sent (or when there is
    // nothing to send early); anything else stops the sending ahead, and the job's own turn
    // asks again and reports a failure.
    [[nodiscard]] virtual Gathered send_ahead(TaskInstance& /*instance*/, std::uint32_t /*slot*/,
                                              const InputCopier& /*copies*/) noexcept {
        return Gathered::Ready;
    }
    // Takes `read` for `slot` when it is this input's; false when it is not a chained input.
    [[nodiscard]] virtual bool hold(std::uint32_t /*slot*/, const ChainedRead& /*read*/) noexcept {
        return false;
    }
    virtual void release(std::uint32_t /*slot*/, std::uint64_t /*done*/) noexcept {}
    [[nodiscard]] virtual bool holding(std::uint32_t /*slot*/) const noexcept { return false; }

private:
    std::size_t m_declared;
};

// An instance's sources, one per declared input, in TaskDesc::inputs order.
class InputSources {
public:
    // Preparation thread, before the instance is Ready. Throws std::bad_alloc.
    void add(std::unique_ptr<InputSource> source) { m_sources.push_back(std::move(source)); }
    [[nodiscard]] bool empty() const noexcept { return m_sources.empty(); }
    [[nodiscard]] std::span<const std::unique_ptr<InputSource>> all() const noexcept {
        return m_sources;
    }

    // The submit: each of `reads` its input's source takes for `slot` leaves `reads`; what no
    // source took stays (the caller lets it go). Caller holds the instance's mutex.
    void hold(std::uint32_t slot, std::vector<ChainedRead>& reads) noexcept;
    // The completion pass (and the submit taking `slot` again): every hold of `slot` goes.
    // Caller holds the instance's mutex.
    void release(std::uint32_t slot, std::uint64_t done) noexcept;
    [[nodiscard]] bool holding(std::uint32_t slot) const noexcept;

private:
    std::vector<std::unique_ptr<InputSource>> m_sources;
};

// Makes `instance`'s sources for `inputs` (resolved_inputs of its desc): a CopiedInput for each
// of the application's (prepare_inputs made their copies and links), a ChainedInput for each
// chained one. Preparation thread; throws std::bad_alloc.
void make_sources(TaskInstance& instance, std::span<const TaskInputDesc> inputs);

} // namespace tandem::detail
