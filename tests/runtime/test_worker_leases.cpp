// Leases on the worker (Runtime::acquire_on_worker): the output a task's job wrote, read on the
// worker where it was made, for an application that uses it there (a display the worker drives,
// its own pass on the worker). The pixels are the job's, exactly, and the same as the primary's
// copy; the slot is never written again until the lease is released and the worker's reads
// timeline (DeviceVulkan::reads_timeline) passed the release value, signalled from the host or
// by the application's own batch on the worker's queue; thousands of such cycles leave no ticket
// held; a lease outlives its task, whose objects wait for the worker's reads; a task on the
// primary answers primary leases; bad adapters and a readback on the wrong device are refused
// with a sentence.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.hpp"
#include "tandem/readback.hpp"

namespace tandem {

// A TaskError by name in a failure message (found by argument-dependent lookup).
inline void PrintTo(TaskError error, std::ostream* out) {
    *out << to_string(error);
}

namespace test {
namespace {

using detail::SlotState;

class WorkerLeases : public RuntimeTest {
protected:
    // Thousands of cycles of: a lease on the worker, the application's batch on the worker's
    // queue that waits for it and signals the reads timeline, the release at that value; a newer
    // output every tenth cycle. Generations never go back, every 200th output is exact, nothing
    // stays held.
    void churn_on_worker(Runtime& runtime, TaskId task);

    // A 64x64 pattern task with three slots, on `placement`.
    static TaskDesc task_on(const std::string& placement) {
        TaskDesc d = pattern_task(placement, 64, 64);
        d.slots = 3;
        return d;
    }

    // Submits one job and pumps until it is the task's newest output; its generation.
    static std::uint64_t run_job(Runtime& runtime, TaskId task) {
        SubmitResult r;
        EXPECT_TRUE(pump_until(runtime, [&] {
            r = runtime.submit(task);
            return r.accepted();
        })) << r.reason;
        EXPECT_TRUE(pump_until(
            runtime, [&] { return runtime.stats(task).newest_generation >= r.generation; }));
        return r.generation;
    }

    static SlotState slot_state(Runtime& runtime, TaskId task, std::uint32_t slot) {
        auto& impl = detail::RuntimeAccess::impl(runtime);
        return detail::RuntimeProbe(impl).slot_states(task).at(slot);
    }

    // Signals `timeline` (a semaphore of `device`) to `value` from the host.
    static void host_signal(const DeviceVulkan& device, VkSemaphore timeline, std::uint64_t value) {
        VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        info.semaphore = timeline;
        info.value = value;
        ASSERT_EQ(vkSignalSemaphore(device.device, &info), VK_SUCCESS);
    }

    // The application's own batch on the worker's queue: waits for the lease as its reads
    // would, and signals the worker's reads timeline to `value` once past that point.
    static void signal_after_lease(const DeviceVulkan& device, const Lease& lease,
                                   std::uint64_t value) {
        VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait.semaphore = lease.wait_semaphore;
        wait.value = lease.wait_value;
        wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = device.reads_timeline;
        signal.value = value;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSubmitInfo2 batch{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        batch.waitSemaphoreInfoCount = 1;
        batch.pWaitSemaphoreInfos = &wait;
        batch.signalSemaphoreInfoCount = 1;
        batch.pSignalSemaphoreInfos = &signal;
        std::lock_guard lock(*device.queue_mutex);
        ASSERT_EQ(device.queue_submit2(device.queue, 1, &batch, VK_NULL_HANDLE), VK_SUCCESS);
    }
};

TEST_F(WorkerLeases, ALeaseOnTheWorkerHoldsTheImageItsJobWroteThere) {
    auto runtime = make_runtime("1");
    const TaskId task = runtime->register_task(task_on("worker"));
    const std::uint64_t generation = run_job(*runtime, task);
    const std::uint32_t worker = runtime->stats(task).device;
    ASSERT_NE(worker, runtime->primary_device().index) << "the task runs on the worker";

    const AcquireResult on_worker = runtime->acquire_on_worker(task);
    ASSERT_TRUE(on_worker) << on_worker.reason;
    const AcquireResult on_primary = runtime->acquire(task);
    ASSERT_TRUE(on_primary);
    EXPECT_TRUE(on_worker->on_worker);
    EXPECT_FALSE(on_primary->on_worker);
    EXPECT_EQ(on_worker->generation, generation);
    EXPECT_EQ(on_worker->generation, on_primary->generation) << "the same output";
    EXPECT_EQ(on_worker->device, worker);
    EXPECT_NE(on_worker->ticket, on_primary->ticket);
    EXPECT_NE(on_worker->image, on_primary->image);

    const std::optional<DeviceVulkan> device = runtime->device_vulkan(worker);
    ASSERT_TRUE(device);
    EXPECT_EQ(device->adapter, worker);
    EXPECT_EQ(on_worker->queue_family, device->queue_family);
    EXPECT_NE(device->device, runtime->primary_vulkan().device);
    EXPECT_NE(device->reads_timeline, VK_NULL_HANDLE);
    EXPECT_NE(device->reads_timeline, runtime->primary_timeline());

    LeaseReadback on_its_worker(*runtime, worker);
    LeaseReadback primary(*runtime);
    const ReadbackImage there = on_its_worker.read(*on_worker);
    const ReadbackImage here = primary.read(*on_primary);
    ASSERT_EQ(there.bytes.size(), 64u * 64u * 4u);
    EXPECT_EQ(detail::pattern_mismatch(there.bytes.data(), generation, 64, 64), -1);
    EXPECT_EQ(there.bytes, here.bytes) << "the worker's image is what reached the primary";

    // Each image is read on its own device, with a sentence otherwise.
    EXPECT_THROW((void)primary.read(*on_worker), Error);
    EXPECT_THROW((void)on_its_worker.read(*on_primary), Error);

    // A ticket ends once, and only as what it was issued for.
    Lease as_primary = *on_worker;
    as_primary.on_worker = false;
    EXPECT_EQ(runtime->release(as_primary, 0), TaskError::LeaseNotHeld);
    EXPECT_EQ(runtime->release(*on_worker, 0), TaskError::None);
    EXPECT_EQ(runtime->release(*on_worker, 0), TaskError::LeaseNotHeld);
    EXPECT_EQ(runtime->release(*on_primary, 0), TaskError::None);
    EXPECT_EQ(runtime->stats(task).leases_held, 0u);
}

// The slot behind a lease on the worker is written again only once the worker's reads timeline
// passed the value it was released with: the jobs meanwhile take the other two slots.
TEST_F(WorkerLeases, ItsSlotWaitsForTheWorkersReadsTimelineToPassTheReleaseValue) {
    auto runtime = make_runtime("1");
    const TaskId task = runtime->register_task(task_on("worker"));
    run_job(*runtime, task);
    const AcquireResult lease = runtime->acquire_on_worker(task);
    ASSERT_TRUE(lease);
    ASSERT_TRUE(lease->on_worker);
    const DeviceVulkan device = runtime->device_vulkan(lease->device).value();
    LeaseReadback readback(*runtime, lease->device);
    const std::vector<std::uint8_t> before = readback.read(*lease).bytes;
    EXPECT_EQ(detail::pattern_mismatch(before.data(), lease->generation, 64, 64), -1);

    EXPECT_EQ(runtime->release(*lease, 5), TaskError::None);
    for (int job = 0; job < 6; ++job) {
        run_job(*runtime, task);
        EXPECT_EQ(slot_state(*runtime, task, lease->slot), SlotState::Leased)
            << "job " << job << ": the reads timeline is still at 0";
    }
    EXPECT_GE(runtime->stats(task).newest_generation, lease->generation + 6);
    // Still the lease's pixels (read without a lease: nothing rewrote the slot).
    EXPECT_EQ(readback.read(*lease).bytes, before);

    host_signal(device, device.reads_timeline, 5);
    ASSERT_TRUE(pump_until(
        *runtime, [&] { return slot_state(*runtime, task, lease->slot) != SlotState::Leased; }));
    // The slot is in use again, and each newer output is exact.
    for (int job = 0; job < 4; ++job) {
        const std::uint64_t generation = run_job(*runtime, task);
        const AcquireResult newer = runtime->acquire_on_worker(task);
        ASSERT_TRUE(newer);
        EXPECT_EQ(newer->generation, generation);
        const ReadbackImage image = readback.read(*newer);
        EXPECT_EQ(detail::pattern_mismatch(image.bytes.data(), generation, 64, 64), -1);
        EXPECT_EQ(runtime->release(*newer, 0), TaskError::None);
    }
}

// 2,000 cycles while jobs run: each lease on the worker released with a value its own batch on
// the worker's queue signals. Generations never go back, every 200th is read exact, and nothing
// is left held.
TEST_F(WorkerLeases, ThousandsOfCyclesSignalledOnTheWorkersQueueLeaveNothingHeld) {
    auto runtime = make_runtime("1");
    const TaskId task = runtime->register_task(task_on("worker"));
    churn_on_worker(*runtime, task);
}

void WorkerLeases::churn_on_worker(Runtime& runtime_ref, TaskId task) {
    Runtime* const runtime = &runtime_ref;
    WorkerLeases::run_job(*runtime, task);
    const std::uint32_t worker = runtime->stats(task).device;
    const DeviceVulkan device = runtime->device_vulkan(worker).value();
    LeaseReadback readback(*runtime, worker);
    std::uint64_t value = 0;
    std::uint64_t newest = 0;
    std::uint32_t checked = 0;
    for (int cycle = 0; cycle < 2000; ++cycle) {
        if (cycle % 10 == 0) {
            WorkerLeases::run_job(*runtime, task); // a newer output every tenth cycle
        }
        runtime->pump();
        const AcquireResult lease = runtime->acquire_on_worker(task);
        ASSERT_TRUE(lease) << "cycle " << cycle << ": " << lease.reason;
        ASSERT_TRUE(lease->on_worker);
        EXPECT_GE(lease->generation, newest) << "cycle " << cycle;
        newest = lease->generation;
        if (cycle % 200 == 0) {
            const ReadbackImage image = readback.read(*lease);
            EXPECT_EQ(detail::pattern_mismatch(image.bytes.data(), lease->generation, 64, 64), -1)
                << "cycle " << cycle;
            ++checked;
        }
        WorkerLeases::signal_after_lease(device, *lease, ++value);
        ASSERT_EQ(runtime->release(*lease, value), TaskError::None);
    }
    EXPECT_EQ(checked, 10u);
    EXPECT_GT(newest, 200u) << "jobs ran throughout";
    EXPECT_EQ(runtime->stats(task).leases_held, 0u);
    ASSERT_TRUE(WorkerLeases::pump_until(*runtime, [&] {
        for (const SlotState s :
             detail::RuntimeProbe(detail::RuntimeAccess::impl(*runtime)).slot_states(task)) {
            if (s == SlotState::Leased) {
                return false;
            }
        }
        return true;
    })) << "a slot was left leased";
    runtime->unregister_task(task);
}

// TaskDesc::keep_output_on_worker: a task on a worker publishes each output once its work
// completed, with no hand-off to the primary (nothing queued for it); the lease on the worker
// holds the job's exact pixels, waiting on the worker's work; acquire() says where to lease it.
TEST_F(WorkerLeases, AnOutputKeptOnItsWorkerIsPublishedThereAndNeverHandedOff) {
    auto runtime = make_runtime("1");
    TaskDesc d = task_on("worker");
    d.keep_output_on_worker = true;
    const TaskId task = runtime->register_task(d);
    std::uint64_t generation = 0;
    for (int i = 0; i < 5; ++i) {
        generation = run_job(*runtime, task);
    }
    const TaskStats stats = runtime->stats(task);
    EXPECT_TRUE(stats.outputs_kept_on_worker);
    EXPECT_EQ(stats.transfer_queued.count, 0u) << "an output was handed to the primary";
    EXPECT_EQ(stats.ready + stats.superseded, stats.accepted);

    const AcquireResult on_primary = runtime->acquire(task);
    EXPECT_FALSE(on_primary);
    EXPECT_EQ(on_primary.error, TaskError::BadArgument);
    EXPECT_NE(on_primary.reason.find("acquire_on_worker"), std::string::npos) << on_primary.reason;

    const AcquireResult lease = runtime->acquire_on_worker(task);
    ASSERT_TRUE(lease) << lease.reason;
    EXPECT_TRUE(lease->on_worker);
    EXPECT_EQ(lease->generation, generation);
    EXPECT_EQ(lease->device, stats.device);
    const DeviceVulkan device = runtime->device_vulkan(lease->device).value();
    EXPECT_NE(lease->wait_semaphore, VK_NULL_HANDLE);
    LeaseReadback readback(*runtime, lease->device);
    const ReadbackImage image = readback.read(*lease);
    EXPECT_EQ(detail::pattern_mismatch(image.bytes.data(), generation, 64, 64), -1);
    host_signal(device, device.reads_timeline, 1);
    EXPECT_EQ(runtime->release(*lease, 1), TaskError::None);
}

TEST_F(WorkerLeases, ThousandsOfCyclesOfAnOutputKeptOnItsWorkerLeaveNothingHeld) {
    auto runtime = make_runtime("1");
    TaskDesc d = task_on("worker");
    d.keep_output_on_worker = true;
    const TaskId task = runtime->register_task(d);
    churn_on_worker(*runtime, task);
    EXPECT_EQ(runtime->stats(task).transfer_queued.count, 0u);
}

// A consumer may chain from an output kept on its worker (test_task_chains.cpp reads it there),
// and a producer with consumers may be made to keep its outputs. On the primary the setting
// changes nothing.
TEST_F(WorkerLeases, AnOutputKeptOnItsWorkerMayHaveConsumersAndOnThePrimaryItChangesNothing) {
    auto runtime = make_runtime("1");
    TaskDesc kept = task_on("worker");
    kept.name = "kept";
    kept.keep_output_on_worker = true;
    const TaskId producer = runtime->register_task(kept);
    TaskDesc consumer = task_on("worker");
    consumer.name = "consumer";
    consumer.inputs = {{"in", VK_FORMAT_R8G8B8A8_UNORM, 0, 0}};
    consumer.inputs[0].producer = producer;
    const TaskId of_kept = runtime->register_task(consumer);
    TaskDesc plain = task_on("worker");
    plain.name = "plain";
    const TaskId reaches = runtime->register_task(plain);
    consumer.inputs[0].producer = reaches;
    const TaskId reader = runtime->register_task(consumer);
    plain.keep_output_on_worker = true;
    EXPECT_EQ(runtime->reconfigure(reaches, plain), TaskError::None);
    runtime->unregister_task(reader);
    runtime->unregister_task(reaches);
    runtime->unregister_task(of_kept);
    runtime->unregister_task(producer);

    TaskDesc on_primary = task_on("primary");
    on_primary.keep_output_on_worker = true;
    const TaskId here = runtime->register_task(on_primary);
    const std::uint64_t generation = run_job(*runtime, here);
    EXPECT_FALSE(runtime->stats(here).outputs_kept_on_worker);
    const AcquireResult lease = runtime->acquire(here);
    ASSERT_TRUE(lease) << lease.reason;
    EXPECT_EQ(lease->generation, generation);
    EXPECT_EQ(runtime->release(*lease, 0), TaskError::None);
}

// A lease on the worker outlives its task: the image stays valid and exact after
// unregister_task, and the task's objects are freed only once the worker's reads timeline passed
// the release value.
TEST_F(WorkerLeases, ItOutlivesItsTaskWhoseObjectsWaitForTheWorkersReads) {
    auto runtime = make_runtime("1");
    const RuntimeResources before = runtime->resources();
    const TaskId task = runtime->register_task(task_on("worker"));
    run_job(*runtime, task);
    const AcquireResult lease = runtime->acquire_on_worker(task);
    ASSERT_TRUE(lease);
    ASSERT_TRUE(lease->on_worker);
    const DeviceVulkan device = runtime->device_vulkan(lease->device).value();
    LeaseReadback readback(*runtime, lease->device);

    runtime->unregister_task(task);
    for (int i = 0; i < 20; ++i) {
        runtime->pump();
    }
    const ReadbackImage image = readback.read(*lease);
    EXPECT_EQ(detail::pattern_mismatch(image.bytes.data(), lease->generation, 64, 64), -1)
        << "the leased image after unregister_task";
    EXPECT_EQ(runtime->release(*lease, 3), TaskError::None) << "released after unregister too";
    for (int i = 0; i < 50; ++i) {
        runtime->pump();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_GT(runtime->resources().retiring + runtime->resources().instances, 0u)
        << "freed before the worker's reads timeline reached the release value";

    host_signal(device, device.reads_timeline, 3);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const RuntimeResources now = runtime->resources();
        return now.retiring == 0 && now.instances == before.instances;
    })) << "the task's objects were never freed";
    EXPECT_EQ(runtime->resources().tasks, before.tasks);
}

// On the primary there is one image: the lease is the primary's.
TEST_F(WorkerLeases, ATaskOnThePrimaryAnswersAPrimaryLease) {
    auto runtime = make_runtime("1");
    const TaskId task = runtime->register_task(task_on("primary"));
    const std::uint64_t generation = run_job(*runtime, task);
    const AcquireResult lease = runtime->acquire_on_worker(task);
    ASSERT_TRUE(lease);
    EXPECT_FALSE(lease->on_worker);
    EXPECT_EQ(lease->device, runtime->primary_device().index);
    LeaseReadback readback(*runtime);
    const ReadbackImage image = readback.read(*lease);
    EXPECT_EQ(detail::pattern_mismatch(image.bytes.data(), generation, 64, 64), -1);
    EXPECT_EQ(runtime->release(*lease, 0), TaskError::None);
}

TEST_F(WorkerLeases, DeviceVulkanNamesEachAdapterAndNoOther) {
    auto runtime = make_runtime("1");
    const PrimaryVulkan primary = runtime->primary_vulkan();
    EXPECT_EQ(primary.reads_timeline, runtime->primary_timeline());
    const std::optional<DeviceVulkan> same = runtime->device_vulkan(primary.adapter);
    ASSERT_TRUE(same);
    EXPECT_EQ(same->device, primary.device);
    const std::vector<DeviceInfo> workers = runtime->worker_devices();
    ASSERT_EQ(workers.size(), 1u);
    const std::optional<DeviceVulkan> worker = runtime->device_vulkan(workers[0].index);
    ASSERT_TRUE(worker);
    EXPECT_NE(worker->queue_mutex, nullptr);
    EXPECT_NE(worker->queue_submit2, nullptr);
    EXPECT_FALSE(runtime->device_vulkan(1000).has_value());
    EXPECT_THROW(LeaseReadback(*runtime, 1000), Error);
}

} // namespace
} // namespace test
} // namespace tandem
