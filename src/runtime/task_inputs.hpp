// Task inputs (tandem/input.hpp): the application's images on the primary that a task's jobs
// read, wherever the task runs. Three steps, each on the thread that already owns the slot:
//
//   prepare_inputs   preparation thread: per input a link from the primary to the instance's
//                    device (SlotTransport with the roles swapped, the pair's best path in that
//                    direction, self-tested like outputs), per slot Tandem's copy of each input
//                    on the primary and where it arrives, and the copies' command buffers.
//   InputCopier      application's thread, in submit (task's mutex held, slot Recording): one
//                    batch on the primary's main queue waits for the application's writes,
//                    copies each image into the slot's copy (the copy command, or a compute
//                    dispatch for an 8-bit input the application declared sampleable:
//                    compute_copy.hpp) and signals the runtime's input
//                    timeline (SubmitResult::inputs_released). When that queue is Tandem's
//                    alone (embedded with no EmbedInfo::queue_mutex), submit only takes the
//                    value and queues the batch: the copier's own thread records and submits
//                    the batches in the order of their values, and nothing waits for a value
//                    before its batch was submitted (CopiedInput answers NotYet until
//                    then), so no wait precedes its signal on that queue. With every input lent the
//                    batch only changes layouts: recorded once per slot and submitted again while
//                    the application leaves the images in the same layouts (RecordedBatch). With
//                    every input lent and named with the slot's loan semaphore, which the
//                    application signals itself (LoanSignal), there is no batch at all.
//   CopiedInput      the worker's job thread, before the job's work (each input's source,
//                    input_sources.hpp): the input's link carries the slot's copy to the device,
//                    waiting on the input timeline (or the loan semaphore) GPU-side or through
//                    the pair's bridge; the job's batch waits for every arrival. On the primary
//                    there is nothing to send: the job waits for the copy (or the application's
//                    signal) itself. Before waiting for them, the job thread also sends the inputs
//                    of the jobs queued behind (their slots are Recording for them), so the next
//                    download is already in flight.
//
// Ordering: a slot's copy is rewritten only once the slot is Free again (its job completed,
// which waited for its inputs' arrival, which waited for their download), and the next copy
// also waits GPU-side for the link's last read of it. The input timeline's values are taken
// and submitted under one lock, so they grow in submission order.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/fixed_list.hpp"
#include "runtime/input_sources.hpp"
#include "runtime/slot_transport.hpp"
#include "runtime/task_instance.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/input.hpp"

namespace tandem::detail {

// The inputs of `desc` with their sizes resolved (0 is the task's). Throws Error with a
// sentence for an input Tandem cannot carry: more than k_max_inputs, a format it does not move,
// a size out of range, a name given twice.
inline constexpr std::size_t k_max_inputs = 8;
[[nodiscard]] std::vector<TaskInputDesc> resolved_inputs(const TaskDesc& desc);

// The RGBA8 image a buffer input of `size` bytes travels in between devices: k_carrier_width
// texels wide (narrower for a small buffer), as many rows as the bytes need, the last one
// filled from its start.
inline constexpr std::uint32_t k_carrier_width = 4096;
[[nodiscard]] VkExtent2D buffer_carrier(VkDeviceSize size) noexcept;

// Makes `instance`'s inputs (InstanceInputs) from the application's among `inputs`
// (resolved_inputs of its desc; chained ones are read in place, runtime/task_chains.hpp): on
// the primary one image per input and slot; elsewhere a link per input from `primary` to the
// instance's device made by `make_link` (the preparer's: negotiation, self-test and the pair's
// bridge for that direction) and each slot's two images from it. With `compute_copies`, an
// input the application declared sampleable is copied at submit by a compute dispatch where the
// primary allows it (runtime/compute_copy.hpp). Preparation thread; throws Error.
using InputLinkFactory = std::function<std::unique_ptr<SlotTransport>(const TaskInputDesc& input)>;
void prepare_inputs(TaskInstance& instance, const Device& primary,
                    std::span<const TaskInputDesc> inputs, bool compute_copies,
                    const InputLinkFactory& make_link);

class InputCopier {
public:
    // `deferred`: the primary's main queue is Tandem's alone, so the batches are recorded and
    // submitted on the copier's own thread (see above), not on the application's.
    InputCopier(const Device& primary, bool deferred);
    ~InputCopier();
    InputCopier(const InputCopier&) = delete;
    InputCopier& operator=(const InputCopier&) = delete;

    // Submits every batch queued and stops the copier's thread; later batches are submitted
    // on the caller's thread. First at shutdown, before the instances the batches use go.
    void stop() noexcept;
    [[nodiscard]] bool deferred() const noexcept { return m_deferred; }

    // The timeline the copies signal (Runtime::input_timeline).
    [[nodiscard]] const TimelineSemaphore& timeline() const noexcept { return m_timeline; }

    // A sentence when `inputs` do not fit `instance`'s application inputs (their number, an
    // image missing); empty when they do. Application's thread; never throws but for
    // std::bad_alloc.
    [[nodiscard]] static std::string check(const TaskInstance& instance,
                                           std::span<const InputImage> inputs);
    // False while the copy of `slot`'s last submit may still run (its command buffer is then
    // not recorded again: the submit answers Busy). Non-blocking.
    [[nodiscard]] bool slot_ready(const TaskInstance& instance, std::uint32_t slot) const noexcept;
    // Records and submits the copies of `inputs` into `slot` of `instance` on the primary's main
    // queue (deferred: queues them, and the caller calls wake_owed() once it released the task's
    // mutex); on success `value` is the input timeline value they signal (also in
    // instance.inputs.copied[slot]). Input i with bit i of `lent` set is the slot's own image,
    // lent to the application (lend): only its layout changes. Caller holds the instance's
    // task's mutex and owns the slot. Never throws; a failure's VkResult (the primary's device)
    // comes back, nothing submitted.
    [[nodiscard]] VkResult copy(TaskInstance& instance, std::uint32_t slot,
                                std::span<const InputImage> inputs, std::uint32_t lent,
                                std::uint64_t& value) noexcept;
    // Wakes the copier's thread for the batches copy() queued, if it was not woken since. The
    // caller of copy(), once it holds no task's mutex. Never blocks.
    void wake_owed() noexcept;
    // Lends `slot` of `instance` (Lent, taken by the caller, its last copy ran): `value`
    // is an input timeline value after the slot's last reads of its input images (its last
    // job's, `last_work` on the instance's work timeline, on the primary; the links' downloads
    // elsewhere), from which the application may write them. When those reads are seen done
    // already (the usual case) it is a value reached already and nothing is submitted; else one
    // empty batch on the primary's main queue waits for them and signals it.
    [[nodiscard]] VkResult lend(TaskInstance& instance, std::uint32_t slot, std::uint64_t last_work,
                                std::uint64_t& value) noexcept;
    // Where `slot`'s last copy (copy()'s value) stands, for the job thread: VK_SUCCESS once
    // its batch was submitted (or nothing was), VK_NOT_READY while it waits on the copier's
    // thread, else the result that failed it (`why` says so).
    [[nodiscard]] VkResult copy_submitted(const TaskInstance& instance, std::uint32_t slot,
                                          std::string& why) const noexcept;
    // True while `slot`'s last copy is queued for the copier's thread, which wakes the
    // instance's worker once it has submitted the batch (Worker::enqueue's `woken_later`).
    // Any thread; the slot's owner's copy() happened before.
    [[nodiscard]] bool copy_queued(const TaskInstance& instance, std::uint32_t slot) const noexcept;
    // One empty batch on the primary's main queue, after everything the application submitted
    // there so far (its writes of lent images): the instance is not freed before it passed
    // (a loan ended without a submit). Caller holds the instance's task's mutex.
    [[nodiscard]] VkResult fence(TaskInstance& instance) noexcept;

private:
    // A batch's semaphore waits: at most two per input (the application's writes and the
    // link's last read of the slot's copy), kept in place so that a submit allocates nothing.
    using BatchWaits = FixedList<VkSemaphoreSubmitInfo, 2 * k_max_inputs>;
    // A batch the copier's thread records (instance set: copy()'s) and submits.
    struct Pending {
        TaskInstance* instance = nullptr; // null: an empty batch (lend, fence)
        std::uint32_t slot = 0;
        FixedList<InputImage, k_max_inputs> inputs;
        std::uint32_t lent = 0;
        BatchWaits waits;
        std::uint64_t value = 0;
    };

    // Records `slot`'s copies of `inputs` (copy()'s) into its command buffer, for one submit
    // (`once`) or for as many as stay alike.
    [[nodiscard]] VkResult record(TaskInstance& instance, std::uint32_t slot,
                                  std::span<const InputImage> inputs, std::uint32_t lent,
                                  bool once) noexcept;
    // Records them unless the slot's command buffer holds the same layout changes already.
    [[nodiscard]] VkResult prepare_commands(TaskInstance& instance, std::uint32_t slot,
                                            std::span<const InputImage> inputs,
                                            std::uint32_t lent) noexcept;
    // Submits `cmd` (or nothing) on the main queue after `pending.waits`, signalling the next
    // value; deferred, queues the batch (`pending`'s instance, slot, inputs and lent) for the
    // copier's thread and takes the value it will signal, waking the thread now (`wake_now`)
    // or leaving the wake-up to wake_owed().
    [[nodiscard]] VkResult submit_batch(VkCommandBuffer cmd, std::uint64_t& value,
                                        const Pending& pending, bool wake_now) noexcept;
    // The copier's queue, a ring that grows and never shrinks: queueing a batch allocates
    // only when more are queued than ever before. Under m_mutex.
    [[nodiscard]] bool push_pending(const Pending& batch) noexcept;
    [[nodiscard]] Pending pop_pending() noexcept;
    void run() noexcept; // the copier's thread
    void submit_pending(Pending& batch) noexcept;

    const Device& m_primary;
    TimelineSemaphore m_timeline;
    bool m_deferred = false;
    std::mutex m_mutex; // takes a value and submits (or queues) it: values grow in queue order
    std::uint64_t m_value = 0; // the last value submitted (deferred: queued)
    std::vector<Pending> m_ring;
    std::size_t m_ring_head = 0;
    std::size_t m_ring_count = 0;
    // The highest value of m_timeline seen reached: values only grow, so a slot whose copy is
    // older is ready without asking the driver (slot_ready, on the application's thread).
    mutable std::atomic<std::uint64_t> m_seen_reached{0};
    std::atomic<bool> m_wake_owed{false}; // copy() queued a batch and woke no one
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::atomic<std::uint64_t> m_submitted{0}; // deferred: the last value whose batch was submitted
    std::thread m_thread;
};

// One of the application's inputs (the `index`-th of InstanceInputs, TaskDesc::inputs'
// `declared`-th) as the job thread reads it (input_sources.hpp). What it waits for: Tandem's
// copy at submit, or the application's signal of the slot's loan semaphore when its submit
// submitted nothing (then from the layout it named). On the task's device the job reads the
// slot's copy (or the lent image) itself; elsewhere the input's link carries it there, each
// job's once (InputSlot::to_send), and the job reads it where it arrived.
class CopiedInput final : public InputSource {
public:
    CopiedInput(const TaskInstance& instance, std::size_t declared, std::size_t index);
    [[nodiscard]] TaskError failure() const noexcept override { return TaskError::TransferFailed; }
    [[nodiscard]] SlotTransport* link() const noexcept override { return m_link; }
    // NotYet while the slot's copy is still queued on the copier's thread (nothing may wait for
    // its value before its batch is on the queue) or, on a host-bridged link, until the bridge
    // queued the arrival (SlotTransport::may_wait_for: the job's wait never precedes its
    // signal); LinkBusy while the link cannot take it yet.
    [[nodiscard]] Gathered gather(TaskInstance& instance, std::uint32_t slot,
                                  const InputCopier& copies, JobInput& input,
                                  std::vector<VkSemaphoreSubmitInfo>& waits,
                                  std::string& why) noexcept override;
    // Hands it to its link when it is still to be sent, counted in TaskStats::input_sends_early
    // too.
    [[nodiscard]] Gathered send_ahead(TaskInstance& instance, std::uint32_t slot,
                                      const InputCopier& copies) noexcept override;

private:
    // Hands the slot's copy to the link (`ahead`: for a job queued behind the one the job
    // thread holds).
    [[nodiscard]] Gathered send(TaskInstance& instance, std::uint32_t slot,
                                const InputCopier& copies, std::string& why, bool ahead) noexcept;

    std::size_t m_index;
    SlotTransport* m_link; // null on the primary: nothing to send
};

// True while some of `slot`'s inputs are still to be handed to their links for its job. The job
// thread.
[[nodiscard]] bool inputs_to_send(const TaskInstance& instance, std::uint32_t slot) noexcept;

// True when the job thread may send `slot`'s inputs before the job's turn (its job queued,
// the slot Recording for it): some are still to be sent over a link, and they wait for
// Tandem's copy at submit, which is submitted already, not for the application's signal of a
// loan semaphore, which may come only later. The job thread.
[[nodiscard]] bool inputs_to_send_ahead(const TaskInstance& instance, std::uint32_t slot) noexcept;

// Records, first in the job's commands, what its inputs need before the workload reads them:
// on another device, the copy of each buffer input that arrived in its carrier image into the
// slot's buffer (the workload reads the buffer); on the primary, where the submit's copy wrote
// the buffer itself, the layout change of lent images whose submit submitted nothing (their
// application's layout to SHADER_READ_ONLY_OPTIMAL). The job thread.
void record_input_prelude(const TaskInstance& instance, std::uint32_t slot,
                          VkCommandBuffer cmd) noexcept;

} // namespace tandem::detail
