// TaskPreparer: the runtime's preparation thread. It builds each instance's device objects
// (the workload, with its pipelines, shader compilation and uploads; the transport to the
// primary; the command pool; the job timer; the slot images and command buffers) off the
// application's thread, FIFO, and then publishes the instance's phase (Ready or Failed, with the
// sentence and the exception a blocking registration rethrows). It owns the queue of instances
// waiting to be prepared and the thread; the instances belong to their tasks.
//
// Threads: enqueue(), cancel() and wait_prepared() on any thread (cancel() and enqueue() with
// the instance's task's mutex held is fine); prepare() on the preparation thread only; stop() at
// shutdown (a preparation in progress finishes, queued ones fail). Lock order: m_mutex is taken
// after a task's mutex or with nothing held, and never held while preparing; the phase is stored
// under it so that a waiter cannot miss the notification. Memory order: the phase is stored
// with release after everything prepare() built, and read with acquire
// (TaskInstance::prepared()).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "core/instance.hpp"
#include "runtime/device_pairs.hpp"
#include "runtime/slot_transport.hpp"
#include "runtime/task_instance.hpp"
#include "runtime/trace_log.hpp"
#include "tandem/runtime.hpp"

namespace tandem::detail {

class TaskPreparer {
public:
    // `poll`: the transports' threads may poll before sleeping (core/cpu.hpp may_poll).
    // `pairs`: where every cross-device transport is opened, as a stream on its pair.
    // `retire`: where self-tests and links leave what they made.
    TaskPreparer(const Instance& instance, const Device& primary, const RuntimeOptions& options,
                 bool poll, DevicePairs& pairs, RetireList& retire, TraceLog& trace);
    ~TaskPreparer();
    TaskPreparer(const TaskPreparer&) = delete;
    TaskPreparer& operator=(const TaskPreparer&) = delete;

    // Starts the preparation thread.
    void start();
    // Queues an instance; it answers Preparing until its preparation ended.
    void enqueue(TaskInstance& instance);
    // An instance still queued leaves the queue and fails ("no longer needed"); true then. One
    // being prepared finishes its preparation (false).
    bool cancel(TaskInstance& instance) noexcept;
    // Waits until `instance` is prepared; rethrows what its preparation threw.
    void wait_prepared(const TaskInstance& instance);
    // Stops the thread (joins it); tasks still queued fail. Idempotent.
    void stop() noexcept;

private:
    void run() noexcept;
    // Builds the instance's workload, transport, timer and slot resources. Throws.
    void prepare(TaskInstance& instance);
    // The instance's transport and the images of each of its slots. A path whose slot images
    // are its own shared memory (zero-copy) and cannot be made (an import that failed, not a lost
    // device) is dropped for the pair, as a link that cannot be set up is, and the next path
    // tried. Throws.
    [[nodiscard]] std::vector<SlotImages> make_transport_and_images(TaskInstance& instance,
                                                                    TransferDesc& td);
    // The link that carries `input` from the primary to `device` (the pair's best path in that
    // direction, self-tested; `output`'s settings otherwise). Throws.
    [[nodiscard]] std::unique_ptr<SlotTransport>
    make_input_link(const Device& device, const TaskInputDesc& input, const TransferDesc& output);
    // The instance's feeds to the workers its chains' consumers run on (OutputFeeds::make), each
    // link like the task's own (`output`) but from its device to that worker, with the paths
    // they drop reported as events. A feed that cannot be made keeps its reason
    // (ChainFeed::error); the instance is prepared all the same.
    void prepare_feeds(TaskInstance& task, const TransferDesc& output);
    // Publishes the end of a preparation (Ready or Failed). Caller holds m_mutex.
    void finish(TaskInstance& instance, InstancePhase phase) noexcept;

    const Instance& m_instance;
    const Device& m_primary;
    RuntimeOptions m_options;
    bool m_poll;
    DevicePairs& m_pairs;
    RetireList& m_retire;
    TraceLog& m_trace;

    // Tasks waiting for the preparation thread, FIFO; m_prepared_cv tells blocking
    // registrations that a preparation ended.
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::condition_variable m_prepared_cv;
    std::deque<TaskInstance*> m_queue;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace tandem::detail
