#include "runtime/job_pipeline.hpp"

#include <array>
#include <chrono>
#include <optional>
#include <vector>

#include "core/log.hpp"

#include "core/vk_check.hpp"
#include "runtime/chain_feeds.hpp"
#include "runtime/event_queue.hpp"
#include "runtime/input_sources.hpp"
#include "runtime/retry.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

std::optional<std::uint32_t> JobPipeline::take_free_slot(TaskInstance& instance) noexcept {
    const std::optional<std::uint32_t> slot = instance.ring.try_take_free();
    if (!slot) {
        return std::nullopt;
    }
    // Holds of an earlier job of the slot that failed before it ran (the completion pass had
    // not come by yet): that job never read them.
    instance.sources.release(*slot, 0);
    if (!instance.inputs.empty() && !m_inputs.slot_ready(instance, *slot)) {
        (void)instance.ring.apply(*slot, SlotEvent::Abort); // its last copy may still run
        return std::nullopt;
    }
    return slot;
}

JobPipeline::Take
JobPipeline::take(Task& task, TaskInstance& instance, std::span<const std::byte> bytes, bool trial,
                  WorkerJob& job, std::span<const InputImage> inputs,
                  std::uint64_t* inputs_released, std::vector<ChainedRead>* chained,
                  std::optional<std::uint32_t> lent_slot, std::uint32_t lent) noexcept {
    const auto now = Clock::now();
    std::lock_guard lock(instance.mutex);
    // A lent slot stays Lent (the application holds it) when the job is not taken.
    const auto abort = [&](std::uint32_t s) {
        if (!lent_slot) {
            (void)instance.ring.apply(s, SlotEvent::Abort);
        }
    };
    const std::optional<std::uint32_t> slot = lent_slot ? lent_slot : take_free_slot(instance);
    if (!slot) {
        return Take::Busy;
    }
    const bool with_inputs = !instance.inputs.empty();
    try {
        instance.slots[*slot].snapshot.assign(bytes.begin(), bytes.end());
    } catch (...) {
        abort(*slot);
        return Take::OutOfMemory;
    }
    if (with_inputs) {
        std::uint64_t value = 0;
        if (const VkResult r = m_inputs.copy(instance, *slot, inputs, lent, value);
            r != VK_SUCCESS) {
            abort(*slot);
            return r == VK_ERROR_DEVICE_LOST ? Take::PrimaryLost : Take::InputsFailed;
        }
        if (inputs_released != nullptr) {
            *inputs_released = value;
        }
    }
    SlotRecord& s = instance.ring[*slot];
    if (lent_slot) {
        (void)instance.ring.apply(*slot, SlotEvent::Accept); // Lent -> Recording: a job's now
    }
    if (chained != nullptr) {
        instance.sources.hold(*slot, *chained); // none held before: released above
    }
    s.generation = trial ? ++task.trial_generations : ++task.generations;
    s.trial = trial;
    s.work_submitted = false;
    s.worker_done_seen = false;
    s.published = false;
    s.times = SlotTimes{};
    s.times.request = now;
    if (trial) {
        ++instance.counts.trial_jobs;
    } else {
        ++instance.counts.accepted;
    }
    ++instance.host_jobs; // the worker's threads let it go (JobPipeline) under this mutex
    if (instance.first_job == 0) {
        instance.first_job = 1; // until a job completes, the worker's allowance is a first job's
        instance.worker->unmeasured.fetch_add(1, std::memory_order_relaxed);
    }
    job = WorkerJob{&instance, *slot, s.generation};
    return Take::Accepted;
}

void JobPipeline::drop_job(const WorkerJob& job) noexcept {
    std::lock_guard lock(job.instance->mutex);
    SlotRecord& s = job.instance->ring[job.slot];
    if (s.state == SlotState::Recording && s.generation == job.generation) {
        (void)job.instance->ring.apply(job.slot, SlotEvent::Fail);
    }
    --job.instance->host_jobs;
}

void JobPipeline::fail_job(Worker& worker, const WorkerJob& job,
                           const std::string& reason) noexcept {
    m_completion.lose_worker(worker, reason); // names the job when it loses the worker
    std::lock_guard lock(job.instance->mutex);
    const SlotRecord& s = job.instance->ring[job.slot];
    if (s.state == SlotState::Recording && s.generation == job.generation && !s.trial &&
        job.instance->owner->events != nullptr) {
        // Lost before by another thread: this job was not in flight then.
        job.instance->owner->events->post(
            RuntimeEventKind::JobFailed, job.instance->owner->id, worker.device().info().index,
            job.generation, TaskError::DeviceLost, "the job failed with its device: ", reason);
    }
    (void)job.instance->ring.apply(job.slot, SlotEvent::Fail);
    --job.instance->host_jobs;
}

void JobPipeline::workload_failed(const WorkerJob& job, const std::string& why,
                                  TaskError code) noexcept {
    TaskInstance& instance = *job.instance;
    // The task's mutex first (the lock order), while the slot is still Recording: the task and
    // the instance stay alive until the slot leaves it, so the events are posted before that.
    Task& task = *instance.owner;
    const std::uint32_t device = instance.worker->device().info().index;
    auto report = [&](bool stopped_now) noexcept {
        if (instance.ring[job.slot].trial || task.events == nullptr) {
            return; // a trial job is Tandem's own: no generation of the task's
        }
        task.events->post(RuntimeEventKind::JobFailed, task.id, device, job.generation, code,
                          "the job failed: ", why);
        if (stopped_now) {
            task.events->post(RuntimeEventKind::TaskStopped, task.id, device, job.generation,
                              TaskError::Stopped, "the task stopped: its last jobs failed: ", why);
        }
    };
    bool stopped_now = false;
    try {
        std::lock_guard task_lock(task.mutex);
        std::lock_guard lock(instance.mutex);
        ++instance.counts.failed_jobs;
        task.failures.last = why;
        if (!job.instance->ring[job.slot].trial && ++task.failures.in_a_row >= m_max_failures &&
            !task.failures.stopped) {
            task.failures.stopped = true;
            stopped_now = true;
        }
        report(stopped_now);
        (void)instance.ring.apply(job.slot, SlotEvent::Abort);
        --instance.host_jobs;
    } catch (...) {
        // Out of memory for the sentence: the slot is freed all the same below.
        std::lock_guard lock(instance.mutex);
        report(false);
        (void)instance.ring.apply(job.slot, SlotEvent::Abort);
        --instance.host_jobs;
    }
    if (stopped_now) {
        log_error("runtime", "task stopped after {} failed jobs in a row: {}", m_max_failures, why);
    }
}

void JobPipeline::send_ahead(Worker& worker) noexcept {
    if (worker.lost()) {
        return; // its jobs' slots retire
    }
    std::array<WorkerJob, k_jobs_sent_ahead> queued{};
    const std::size_t count = worker.queued_jobs(queued);
    for (std::size_t k = 0; k < count; ++k) {
        const WorkerJob& next = queued[k];
        TaskInstance& instance = *next.instance; // alive: its job holds it (host_jobs)
        if (instance.inputs.links.empty()) {
            continue; // nothing crosses a link
        }
        {
            std::lock_guard lock(instance.mutex);
            const SlotRecord& s = instance.ring[next.slot];
            // Retired meanwhile (its worker or its link failed): its turn lets the job go. Only
            // this thread takes a queued job's slot out of Recording otherwise.
            if (s.state != SlotState::Recording || s.generation != next.generation) {
                continue;
            }
        }
        if (!inputs_to_send_ahead(instance, next.slot)) {
            continue; // sent already, or waiting for the application's loan semaphore
        }
        const auto t0 = Clock::now();
        for (const auto& source : instance.sources.all()) {
            if (source->send_ahead(instance, next.slot, m_inputs) != Gathered::Ready) {
                return; // a link that cannot take it yet, or failed: the rest waits its turn
            }
        }
        if (m_trace.enabled()) {
            try {
                const std::uint32_t track = m_trace.track(worker.label() + " submit thread");
                const std::string& name = instance.desc.name;
                m_trace.span(track, "inputs sent early " + name, t0, Clock::now(), next.generation,
                             name);
            } catch (...) {
                // Out of memory: the trace misses one span.
            }
        }
    }
}

void JobPipeline::previous_readers(Worker& worker, const TaskInstance& instance,
                                   const SlotRecord& s,
                                   std::vector<VkSemaphoreSubmitInfo>& waits) const {
    constexpr VkPipelineStageFlags2 all = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    // The transport's read of the worker image of the slot's previous round.
    if (s.worker_value > 0) {
        waits.push_back(
            semaphore_submit_info(instance.transport->sender_semaphore(), s.worker_value, all));
    }
    // On one device the image is also the primary image: the application's reads of it.
    if (instance.same_device && s.readers.release_value > 0) {
        waits.push_back(m_reads.submit_info(s.readers.release_value, all));
    }
    // The application's reads of the image on this worker (reached already: the slot was not
    // free before; the wait orders its reads before this job's writes).
    if (s.readers.worker_release_value > 0 && worker.reads_timeline() != nullptr) {
        waits.push_back(worker.reads_timeline()->submit_info(s.readers.worker_release_value, all));
    }
    // The chain's consumers on this device that read it in place (their work values).
    if (s.readers.holds_done > 0) {
        waits.push_back(worker.work_timeline().submit_info(s.readers.holds_done, all));
    }
}

bool JobPipeline::start_job(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                            JobStart& start, std::vector<VkSemaphoreSubmitInfo>& waits) noexcept {
    TaskInstance& instance = *job.instance;
    // The slot's previous job completed before its slot was taken again: its GPU time, unless
    // the watcher counted it already. Read before the instance's mutex (the timer's lock is never
    // held under it).
    const std::optional<JobTime> previous =
        instance.timing.timer ? instance.timing.timer->reuse(job.slot) : std::optional<JobTime>();
    std::lock_guard lock(instance.mutex);
    if (previous) {
        instance.counts.gpu.add(*previous);
    }
    const SlotRecord& s = instance.ring[job.slot];
    if (s.state != SlotState::Recording || s.generation != job.generation) {
        --instance.host_jobs;
        return false; // retired meanwhile
    }
    try {
        // Every reader of the slot's previous output is done before the job rewrites it.
        previous_readers(worker, instance, s, waits);
        // Chains across workers: the feeds this job fills, once each link's last read of
        // the slot's sender image is over.
        start.feeds = instance.feeds.take(job.slot, job.generation, waits);
    } catch (...) {
        // Out of memory: the job fails, having read nothing.
        if (!s.trial && instance.owner->events != nullptr) {
            instance.owner->events->post(RuntimeEventKind::JobFailed, instance.owner->id,
                                         worker.device().info().index, job.generation,
                                         TaskError::OutOfMemory,
                                         "the job failed: out of memory listing what it waits for");
        }
        --instance.host_jobs;
        (void)instance.ring.apply(job.slot, SlotEvent::Abort);
        return false;
    }
    start.timed = instance.timing.time_next(s.trial, t0);
    if (!start.timed && instance.timing.timer) {
        ++instance.counts.gpu.untimed;
    }
    return true;
}

bool JobPipeline::gather_inputs(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                                std::vector<VkSemaphoreSubmitInfo>& waits,
                                std::vector<JobInput>& inputs) noexcept {
    TaskInstance& instance = *job.instance;
    const auto sources = instance.sources.all();
    try {
        inputs.assign(instance.desc.inputs.size(), JobInput{});
    } catch (...) {
        workload_failed(job, "out of memory listing the job's inputs", TaskError::OutOfMemory);
        return false;
    }
    // Each source is asked until it is ready (a bit each: at most k_max_inputs), all of them
    // in one poll: a link that cannot take its input yet is asked again a little later, what
    // waits for a bridge or a producer's hand-off soon (both come within microseconds).
    std::uint32_t ready = 0;
    const std::uint32_t all = (1u << sources.size()) - 1;
    const InputSource* failed = nullptr;
    std::string why;
    std::optional<Clock::time_point> t_sent;
    std::optional<std::uint64_t> posts;
    auto interval = k_hand_off_poll;
    const auto round = [&] {
        interval = k_hand_off_poll;
        for (std::size_t k = 0; k < sources.size(); ++k) {
            if ((ready & (1u << k)) != 0) {
                continue;
            }
            const InputSource& source = *sources[k];
            switch (sources[k]->gather(instance, job.slot, m_inputs, inputs[source.declared()],
                                       waits, why)) {
            case Gathered::Ready:
                ready |= 1u << k;
                break;
            case Gathered::NotYet:
                break;
            case Gathered::LinkBusy:
                interval = k_not_ready_poll;
                break;
            case Gathered::Failed:
                failed = &source;
                return VK_ERROR_UNKNOWN;
            }
        }
        if (!t_sent && !inputs_to_send(instance, job.slot)) {
            t_sent = Clock::now();
        }
        // This job's inputs on their links: the next jobs' downloads follow on the primary
        // (while it waits, and those of jobs queued meanwhile once the queue moved).
        if (t_sent && !instance.inputs.links.empty() && posts != worker.job_posts()) {
            posts = worker.job_posts();
            send_ahead(worker);
        }
        return ready == all ? VK_SUCCESS : VK_NOT_READY;
    };
    const VkResult r = retry_while_not_ready(
        round(), interval, [&worker] { return !worker.lost() && !worker.stopping(); }, round);
    if (r == VK_NOT_READY) {
        if (worker.lost()) { // its slots retire
            fail_job(worker, job, worker.lost_reason());
        } else {
            // The runtime stops: an input still on its way (a copy its thread dropped, a
            // producer that stopped first) never comes, and the job is dropped as queued ones are.
            drop_job(job);
        }
        return false;
    }
    if (failed != nullptr) {
        // A link that failed while its device works: its path is dropped for the pair and the
        // task prepared again with the next one, as for outputs (the slot retired with it).
        SlotTransport* link = failed->link();
        if (link != nullptr && link->failed() && m_links.retire_input(instance, *link)) {
            std::lock_guard lock(instance.mutex);
            --instance.host_jobs;
            return false;
        }
        workload_failed(job,
                        why.empty()
                            ? std::string("input '") +
                                  instance.desc.inputs[failed->declared()].name + "' cannot be read"
                            : why,
                        failed->failure());
        return false;
    }
    if (m_trace.enabled()) {
        // Within the job's record+submit span: until its inputs' links took them, and until
        // its batch may wait for all of them.
        const std::uint32_t track = m_trace.track(worker.label() + " submit thread");
        const std::string& name = instance.desc.name;
        const Clock::time_point sent = t_sent.value_or(t0);
        m_trace.span(track, "inputs sent " + name, t0, sent, job.generation, name);
        m_trace.span(track, "inputs queued " + name, sent, Clock::now(), job.generation, name);
    }
    return true;
}

bool JobPipeline::record_job(Worker& worker, const WorkerJob& job, const JobStart& start,
                             const Image& target_image, std::span<const JobInput> inputs,
                             VkImageLayout written_layout) noexcept {
    TaskInstance& instance = *job.instance;
    SlotResources& res = instance.slots[job.slot];
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
        target.inputs = inputs;
        worker.device().begin_label(cmd, instance.desc.name.c_str());
        // Buffer inputs out of their carrier images; lent images the application signalled.
        record_input_prelude(instance, job.slot, cmd);
        // The job's GPU time brackets the workload's own commands only.
        if (start.timed) {
            instance.timing.timer->begin(cmd, job.slot);
        }
        r = instance.workload->record(cmd, job.slot, target, job.generation, res.snapshot);
        if (r == VK_SUCCESS && start.timed) {
            instance.timing.timer->end(cmd, job.slot);
        }
        WorkloadOutput out = instance.workload->output();
        if (r == VK_SUCCESS && !start.feeds.empty()) {
            // Copied for the workers that read it (chain_feeds.hpp), before anyone else reads.
            instance.feeds.record(job.slot, start.feeds, cmd, target.image,
                                  {instance.desc.width, instance.desc.height}, out);
            out = {VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                   VK_ACCESS_2_NONE};
        }
        if (r == VK_SUCCESS &&
            (!instance.transport->shares_images() || instance.keeps_output_on_worker()) &&
            out.layout != written_layout) {
            // The transfer copies from it next: TRANSFER_SRC_OPTIMAL is the layout copies want;
            // SHADER_READ_ONLY_OPTIMAL when a chain's consumer samples it in place (the
            // transfer leaves it so: task_chains.hpp). The signal below makes the writes
            // available to the transfer's wait.
            image_barrier(cmd, target.image, out.layout, written_layout, out.stage, out.access,
                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
        }
        worker.device().end_label(cmd);
    }
    if (r == VK_SUCCESS) {
        r = vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer worker");
    }
    if (r == VK_SUCCESS) {
        return true;
    }
    if (std::string why = instance.workload->failure(); !why.empty()) {
        // The application's code failed, not the device: this job fails, the task goes on.
        // The command buffer is reset before its next use; nothing was submitted.
        if (vkResetCommandBuffer(cmd, 0) != VK_SUCCESS) {
            fail_job(worker, job, "resetting the command buffer of a failed job failed");
            return false;
        }
        workload_failed(job, why);
        return false;
    }
    fail_job(worker, job,
             "recording " + instance.desc.name + " failed (" + tandem::to_string(r) + ")");
    return false;
}

bool JobPipeline::submit_work(Worker& worker, const WorkerJob& job,
                              std::span<const VkSemaphoreSubmitInfo> waits,
                              std::uint64_t& work_value, VkSemaphoreSubmitInfo& signal) noexcept {
    TaskInstance& instance = *job.instance;
    worker.set_activity(Worker::Thread::Jobs, "submitting the work", job.generation);
    work_value = worker.next_work_value();
    signal = worker.work_timeline().submit_info(work_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    const VkResult r = vk_status(worker.device()
                                     .queue(QueueRole::Main)
                                     .submit_one(instance.slots[job.slot].cmd, waits, {&signal, 1}),
                                 worker_submit_context(worker));
    // Read once the instance is quiescent, through its mutex (the slot leaves Recording under it).
    // Set for a failed submit too: a submit reported as failed may still have reached the GPU
    // (a device reported lost may still be running it), so the instance's objects wait for this
    // value, or for the runtime's end, before they are freed.
    instance.last_work_value = work_value;
    if (r != VK_SUCCESS) {
        fail_job(worker, job, "its submit failed (" + std::string(tandem::to_string(r)) + ")");
        return false;
    }
    {
        // A consumer's job thread asks whether the hand-off is coming (task_chains.hpp).
        std::lock_guard lock(instance.mutex);
        instance.ring[job.slot].work_submitted = true;
    }
    return true;
}

void JobPipeline::process_job(Worker& worker, const WorkerJob& job) noexcept {
    TaskInstance& instance = *job.instance;
    const auto t0 = Clock::now();
    worker.set_activity(Worker::Thread::Jobs, "recording", job.generation);
    // What the job's batch waits for: every reader of the slot's previous output (start_job),
    // then each input's arrival (gather_inputs).
    std::vector<VkSemaphoreSubmitInfo> waits;
    JobStart start;
    if (!start_job(worker, job, t0, start, waits)) {
        return;
    }
    if (worker.lost()) {
        fail_job(worker, job, worker.lost_reason());
        return;
    }
    // The job's inputs on their way to the device, before its work waits for them.
    std::vector<JobInput> inputs;
    if (!instance.sources.empty() && !gather_inputs(worker, job, t0, waits, inputs)) {
        return;
    }

    const Image& target_image = instance.slots[job.slot].written();
    // Acquire: pairs with the registration that made the task a producer (read once per job, so
    // the job and its transfer agree).
    const bool feeds_chain = instance.owner->links.feeds_chain.load(std::memory_order_acquire);
    // With feeds the output is left in TRANSFER_SRC_OPTIMAL by their copies. Written in place
    // (the image is the transport's staging) it goes in GENERAL, where its bytes are the
    // memory's, which the primary's copy reads; a chain's consumer samples it there too.
    // Kept on its worker (nothing crosses) it goes in GENERAL, whatever the workload left it in:
    // its leases there and the chained consumers beside it read it where it is, and a copy of
    // it needs no change of layout (frame generation keeps a chained input so).
    VkImageLayout written_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    if (instance.keeps_output_on_worker()) {
        written_layout = VK_IMAGE_LAYOUT_GENERAL;
    } else if (instance.transport->shares_images()) {
        written_layout = start.feeds.empty() ? instance.workload->output().layout
                                             : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    } else if (instance.transport->writes_in_place()) {
        written_layout = VK_IMAGE_LAYOUT_GENERAL;
    } else if (feeds_chain) {
        written_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    }
    if (!record_job(worker, job, start, target_image, inputs, written_layout)) {
        return;
    }
    std::uint64_t work_value = 0;
    VkSemaphoreSubmitInfo signal{};
    if (!submit_work(worker, job, waits, work_value, signal)) {
        return;
    }
    const auto t_submit = Clock::now();
    if (start.timed) {
        // Before the watcher can report it.
        instance.timing.timer->submitted(job.slot, job.generation);
    }
    worker.note_submitted(job, work_value);

    // The transfer is submitted by the worker's transfer thread, so this thread can record and
    // submit the next job meanwhile. The slot stays Recording (owned by this job) until then.
    const VkImage worker_image = target_image.get();
    worker.enqueue_transfer(job, [this, &worker, job, t0, t_submit, work_value, signal,
                                  worker_image, written_layout, feeds = std::move(start.feeds)] {
        submit_transfer(worker, job, t0, t_submit, work_value, signal, worker_image, written_layout,
                        feeds);
    });
}

void JobPipeline::submit_transfer(Worker& worker, const WorkerJob& job, Clock::time_point t0,
                                  Clock::time_point t_submit, std::uint64_t work_value,
                                  VkSemaphoreSubmitInfo signal, VkImage worker_image,
                                  VkImageLayout written_layout,
                                  std::span<const std::size_t> feeds) noexcept {
    TaskInstance& instance = *job.instance;
    SlotResources& res = instance.slots[job.slot];
    auto fail = [&](const std::string& reason) { fail_job(worker, job, reason); };
    if (worker.lost()) {
        fail(worker.lost_reason());
        return;
    }
    using Thread = Worker::Thread;
    // The slot's values and times, and the slot leaves Recording (the instance may be retired
    // once it did). `queued`: when its hand-off was queued (none when nothing crosses).
    const auto publish = [&](const SlotTicket& ticket, VkImageLayout handed_off,
                             std::optional<Clock::time_point> queued) {
        std::lock_guard lock(instance.mutex);
        SlotRecord& s = instance.ring[job.slot];
        s.work_value = work_value;
        s.worker_value = ticket.sender_value;
        res.handed_off_layout = handed_off;
        s.primary_value = ticket.receiver_value;
        s.times.worker_submit = t_submit;
        instance.counts.worker_submit_us.add(micros(s.times.request, t_submit));
        if (queued) {
            s.times.transfer_queued = *queued;
            instance.counts.transfer_queued_us.add(micros(s.times.request, *queued));
        }
        (void)instance.ring.apply(job.slot, SlotEvent::Submitted); // stays Retired if lost
        --instance.host_jobs;
        m_completion.kick(); // a completion to look for
    };
    if (instance.keeps_output_on_worker()) {
        // Nothing crosses: the output is published once its work completed (CompletionTracker).
        publish(SlotTicket{}, written_layout, std::nullopt);
        return;
    }
    worker.set_activity(Thread::Transfers, "submitting the transfer", job.generation);
    SlotTicket ticket;
    VkResult r = instance.transport->submit(job.slot, worker_image, written_layout, signal,
                                            res.primary_image.get(), res.primary_layout, ticket);
    // VK_NOT_READY: the transfer's queue to the primary is full for now; the worker work is
    // already submitted, so retry until it takes it (bounded by the worker's allowance).
    if (r == VK_NOT_READY) {
        worker.set_activity(Thread::Transfers, "retrying the transfer (not ready)", job.generation);
    }
    r = retry_while_not_ready(
        r, k_not_ready_poll,
        [&] {
            if (worker.lost()) {
                return false;
            }
            const auto allowance = worker.allowance(std::chrono::milliseconds(m_timeout_ms.load()),
                                                    m_completion.first_job_timeout());
            return Clock::now() <= std::max(t_submit, worker.last_progress()) + allowance;
        },
        [&] {
            return instance.transport->submit(job.slot, worker_image, written_layout, signal,
                                              res.primary_image.get(), res.primary_layout, ticket);
        });
    const auto t_queued = Clock::now();
    if (r != VK_SUCCESS && instance.transport->failed() && m_links.retire(instance, false)) {
        // The path failed, not the device: the slot retired with the instance's link.
        std::lock_guard lock(instance.mutex);
        --instance.host_jobs;
        return;
    }
    if (r != VK_SUCCESS) {
        const std::string why = instance.transport->failed() ? instance.transport->error()
                                                             : std::string(tandem::to_string(r));
        fail("the transfer of " + instance.desc.name + " failed (" + why + ")");
        return;
    }
    res.primary_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    if (!feeds.empty()) {
        // To the workers where its chains' consumers run, before the slot leaves Recording (a
        // consumer's read waits for that).
        worker.set_activity(Thread::Transfers, "sending to chains' workers", job.generation);
        const ChainFeed* failed =
            instance.feeds.send(job.slot, job.generation, feeds, signal, instance.mutex, [&] {
                return !worker.lost() &&
                       Clock::now() <=
                           std::max(t_submit, worker.last_progress()) +
                               worker.allowance(std::chrono::milliseconds(m_timeout_ms.load()),
                                                m_completion.first_job_timeout());
            });
        // A feed's path that failed while both devices work: dropped for their pair, and the
        // task prepared again with the next one, as for its own outputs (the slot retired).
        if (failed != nullptr && retire_feed(m_links, instance, *failed)) {
            std::lock_guard lock(instance.mutex);
            --instance.host_jobs;
            return;
        }
    }
    worker.set_activity(Thread::Transfers, "publishing the submit", job.generation);
    // Taken before the slot leaves Recording: the instance may be retired once it did.
    const std::uint32_t track =
        m_trace.enabled() ? m_trace.track(worker.label() + " submit thread") : 0;
    const std::string name = m_trace.enabled() ? instance.desc.name : std::string();
    publish(ticket, instance.transport->sender_layout_after(written_layout), t_queued);
    if (m_trace.enabled()) {
        m_trace.span(track, "record+submit " + name, t0, t_queued, job.generation, name);
    }
}

} // namespace tandem::detail
