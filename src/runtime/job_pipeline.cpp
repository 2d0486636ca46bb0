#include "runtime/job_pipeline.hpp"

#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/vk_check.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

SubmitResult JobPipeline::submit(TaskId id, std::span<const std::byte> snapshot) noexcept {
    SubmitResult out;
    Task* task = m_tasks.find(id);
    if (task == nullptr) {
        out.reason = "Task " + std::to_string(id) + " is not registered";
        return out;
    }
    const auto now = Clock::now();
    WorkerJob job;
    {
        std::lock_guard lock(task->mutex);
        switch (task->phase.load(std::memory_order_acquire)) {
        case TaskPhase::Preparing:
            ++task->busy;
            out.status = SubmitStatus::Preparing;
            out.reason = "task '" + task->desc.name + "' is still being prepared on " +
                         task->worker->label();
            return out;
        case TaskPhase::Failed:
            ++task->failed;
            out.reason = task->preparation_error;
            return out;
        case TaskPhase::Ready:
            break;
        }
        if (task->stopped) {
            ++task->failed;
            out.reason = "task '" + task->desc.name + "' stopped: " + task->workload_error;
            return out;
        }
        if (task->worker->lost()) {
            ++task->failed;
            out.reason = task->worker->label() + " is lost: " + task->worker->lost_reason();
            return out;
        }
        if (task->link_failed.load(std::memory_order_relaxed)) { // mutex held: link_error set
            ++task->failed;
            out.reason = task->link_error;
            return out;
        }
        auto slot = task->ring.try_take_free();
        if (!slot) {
            ++task->busy;
            out.status = SubmitStatus::Busy;
            return out;
        }
        SlotRecord& s = task->ring[*slot];
        s.generation = task->generations->fetch_add(1, std::memory_order_relaxed) + 1;
        s.worker_done_seen = false;
        s.published = false;
        s.times = SlotTimes{};
        s.times.request = now;
        try {
            task->slots[*slot].snapshot.assign(snapshot.begin(), snapshot.end());
        } catch (...) {
            (void)task->ring.apply(*slot, SlotEvent::Fail);
            ++task->failed;
            out.reason = "Out of memory copying the snapshot";
            return out;
        }
        ++task->accepted;
        out.status = SubmitStatus::Accepted;
        out.generation = s.generation;
        job = WorkerJob{task, *slot, s.generation};
    }
    task->worker->enqueue(job);
    return out;
}

void JobPipeline::drop_job(const WorkerJob& job) noexcept {
    std::lock_guard lock(job.task->mutex);
    SlotRecord& s = job.task->ring[job.slot];
    if (s.state == SlotState::Recording && s.generation == job.generation) {
        (void)job.task->ring.apply(job.slot, SlotEvent::Fail);
    }
}

void JobPipeline::fail_job(Worker& worker, const WorkerJob& job,
                           const std::string& reason) noexcept {
    m_completion.lose_worker(worker, reason);
    std::lock_guard lock(job.task->mutex);
    (void)job.task->ring.apply(job.slot, SlotEvent::Fail);
}

void JobPipeline::process_job(Worker& worker, const WorkerJob& job) noexcept {
    Task& task = *job.task;
    const auto t0 = Clock::now();
    worker.set_activity(Worker::Thread::Jobs, "recording", job.generation);
    // The slot's previous job completed before its slot was taken again: its GPU time, unless
    // the watcher counted it already. Read before the task's mutex (the timer's lock is never
    // held under it).
    const std::optional<JobTime> previous =
        task.timer ? task.timer->reuse(job.slot) : std::optional<JobTime>();
    std::uint64_t wait_worker = 0;
    std::uint64_t wait_reads = 0;
    {
        std::lock_guard lock(task.mutex);
        if (previous) {
            task.gpu.add(*previous);
        }
        const SlotRecord& s = task.ring[job.slot];
        if (s.state != SlotState::Recording || s.generation != job.generation) {
            return; // retired meanwhile
        }
        wait_worker = s.worker_value;
        wait_reads = s.release_value;
    }
    SlotResources& res = task.slots[job.slot];
    auto fail = [&](const std::string& reason) { fail_job(worker, job, reason); };
    if (worker.lost()) {
        fail(worker.lost_reason());
        return;
    }

    const Image& target_image = res.written();
    VkCommandBuffer cmd = res.cmd;
    VkResult r = vk_status(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer worker");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (r == VK_SUCCESS) {
        r = vk_status(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer worker");
    }
    if (r == VK_SUCCESS) {
        WorkloadTarget target;
        target.image = target_image.get();
        target.view = target_image.view.get();
        target.format = target_image.format;
        target.width = target_image.extent.width;
        target.height = target_image.extent.height;
        target.layout = VK_IMAGE_LAYOUT_UNDEFINED;
        worker.device().begin_label(cmd, task.desc.name.c_str());
        // The job's GPU time brackets the workload's own commands only.
        if (task.timer) {
            task.timer->begin(cmd, job.slot);
        }
        r = task.workload->record(cmd, job.slot, target, job.generation, res.snapshot);
        if (r == VK_SUCCESS && task.timer) {
            task.timer->end(cmd, job.slot);
        }
        if (r == VK_SUCCESS && !task.transport->shares_images()) {
            // The transfer copies from it next: TRANSFER_SRC_OPTIMAL is the layout copies want.
            // The signal below makes the writes available to the transfer's wait.
            const WorkloadOutput out = task.workload->output();
            image_barrier(cmd, target.image, out.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          out.stage, out.access, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                          VK_ACCESS_2_NONE);
        }
        worker.device().end_label(cmd);
    }
    if (r == VK_SUCCESS) {
        r = vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer worker");
    }
    if (r != VK_SUCCESS) {
        if (std::string why = task.workload->failure(); !why.empty()) {
            // The application's code failed, not the device: the task stops, the worker goes on.
            spdlog::error("task '{}' stopped: {}", task.desc.name, why);
            std::lock_guard lock(task.mutex);
            if (!task.stopped) {
                task.stopped = true;
                task.workload_error = std::move(why);
            }
            (void)task.ring.apply(job.slot, SlotEvent::Fail);
            return;
        }
        fail("recording " + task.desc.name + " failed (" + tandem::to_string(r) + ")");
        return;
    }

    // Waits: the transport finished reading the worker image of this slot's previous round;
    // on one device the image is also the primary image, so the application's reads of it
    // (primary timeline) must have finished too.
    VkSemaphoreSubmitInfo waits[2];
    std::uint32_t wait_count = 0;
    if (wait_worker > 0) {
        waits[wait_count] = VkSemaphoreSubmitInfo{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        waits[wait_count].semaphore = task.transport->worker_semaphore();
        waits[wait_count].value = wait_worker;
        waits[wait_count].stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        ++wait_count;
    }
    if (task.same_device && wait_reads > 0) {
        waits[wait_count] = m_reads.submit_info(wait_reads, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        ++wait_count;
    }
    worker.set_activity(Worker::Thread::Jobs, "submitting the work", job.generation);
    const std::uint64_t work_value = worker.next_work_value();
    VkSemaphoreSubmitInfo signal =
        worker.work_timeline().submit_info(work_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    r = vk_status(
        worker.device().queue(QueueRole::Main).submit_one(cmd, {waits, wait_count}, {&signal, 1}),
        worker_submit_context(worker));
    if (r != VK_SUCCESS) {
        fail("its submit failed (" + std::string(tandem::to_string(r)) + ")");
        return;
    }
    const auto t_submit = Clock::now();
    if (task.timer) {
        task.timer->submitted(job.slot, job.generation); // before the watcher can report it
    }
    worker.note_submitted(job, work_value);

    // The transfer is submitted by the worker's transfer thread, so this thread can record and
    // submit the next job meanwhile. The slot stays Recording (owned by this job) until then.
    const VkImage worker_image = target_image.get();
    worker.enqueue_transfer(
        job, [this, &worker, job, t0, t_submit, work_value, signal, worker_image] {
            submit_transfer(worker, job, t0, t_submit, work_value, signal, worker_image);
        });
}

void JobPipeline::submit_transfer(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                                  Clock::time_point t_submit, std::uint64_t work_value,
                                  VkSemaphoreSubmitInfo signal, VkImage worker_image) noexcept {
    Task& task = *job.task;
    SlotResources& res = task.slots[job.slot];
    auto fail = [&](const std::string& reason) { fail_job(worker, job, reason); };
    if (worker.lost()) {
        fail(worker.lost_reason());
        return;
    }
    using Thread = Worker::Thread;
    worker.set_activity(Thread::Transfers, "submitting the transfer", job.generation);
    SlotTicket ticket;
    const VkImageLayout written_layout = task.transport->shares_images()
                                             ? task.workload->output().layout
                                             : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkResult r = task.transport->submit(job.slot, worker_image, written_layout, signal,
                                        res.primary_image.get(), res.primary_layout, ticket);
    // VK_NOT_READY: the transfer's queue to the primary is full for now; the worker work is
    // already submitted, so retry until it takes it (bounded by the worker timeout).
    const auto give_up = t_submit + std::chrono::milliseconds(m_timeout_ms.load());
    if (r == VK_NOT_READY) {
        worker.set_activity(Thread::Transfers, "retrying the transfer (not ready)", job.generation);
    }
    while (r == VK_NOT_READY && Clock::now() < give_up && !worker.lost()) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        r = task.transport->submit(job.slot, worker_image, written_layout, signal,
                                   res.primary_image.get(), res.primary_layout, ticket);
    }
    const auto t_queued = Clock::now();
    if (r != VK_SUCCESS && task.transport->failed() && m_links.retire(task, false)) {
        return; // the path failed, not the device: the slot retired with the task's link
    }
    if (r != VK_SUCCESS) {
        const std::string why =
            task.transport->failed() ? task.transport->error() : std::string(tandem::to_string(r));
        fail("the transfer of " + task.desc.name + " failed (" + why + ")");
        return;
    }
    res.primary_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    worker.set_activity(Thread::Transfers, "publishing the submit", job.generation);
    {
        std::lock_guard lock(task.mutex);
        SlotRecord& s = task.ring[job.slot];
        s.work_value = work_value;
        s.worker_value = ticket.worker_value;
        s.primary_value = ticket.primary_value;
        s.times.worker_submit = t_submit;
        s.times.transfer_queued = t_queued;
        task.worker_submit_us.add(micros(s.times.request, t_submit));
        task.transfer_queued_us.add(micros(s.times.request, t_queued));
        (void)task.ring.apply(job.slot, SlotEvent::Submitted); // stays Retired if lost meanwhile
    }
    if (m_trace.enabled()) {
        m_trace.span(m_trace.track(worker.label() + " submit thread"),
                     "record+submit " + task.desc.name, t0, t_queued, job.generation,
                     task.desc.name);
    }
}

} // namespace tandem::detail
