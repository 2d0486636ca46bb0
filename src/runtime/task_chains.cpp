#include "runtime/task_chains.hpp"

#include <algorithm>
#include <set>

#include "core/resources.hpp"
#include "runtime/task_graph.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

std::string size_text(std::uint32_t width, std::uint32_t height) {
    return std::to_string(width) + "x" + std::to_string(height);
}

std::string in_quotes(const std::string& name) {
    return "'" + name + "'";
}

// A slot whose job was taken and has not failed: its output exists or will.
bool readable(SlotState state) noexcept {
    return state == SlotState::Recording || state == SlotState::WorkerInFlight ||
           state == SlotState::Transferring || state == SlotState::Ready ||
           state == SlotState::Kept || state == SlotState::Leased;
}

} // namespace

bool has_chain(const TaskDesc& desc) noexcept {
    return std::any_of(desc.inputs.begin(), desc.inputs.end(),
                       [](const TaskInputDesc& in) { return static_cast<bool>(in.producer); });
}

std::size_t application_inputs(const TaskDesc& desc) noexcept {
    return static_cast<std::size_t>(
        std::count_if(desc.inputs.begin(), desc.inputs.end(),
                      [](const TaskInputDesc& in) { return !in.producer; }));
}

std::vector<std::shared_ptr<Task>> check_chain(const TaskTable& tasks, TaskDesc& desc,
                                               TaskId self) {
    std::vector<std::shared_ptr<Task>> out;
    for (TaskInputDesc& input : desc.inputs) {
        if (!input.producer) {
            continue;
        }
        const std::string what = "Input '" + input.name + "' of task '" + desc.name + "'";
        std::shared_ptr<Task> producer = tasks.find(input.producer);
        TaskDesc made;         // the producer's shape
        std::uint64_t ran = 0; // the producer's generations so far
        if (producer) {
            std::lock_guard lock(producer->mutex);
            if (!producer->live) {
                producer.reset();
            } else {
                made = producer->desc;
                ran = producer->generations;
            }
        }
        if (!producer) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " names task " + to_string(input.producer) +
                            " as its producer, which is not a live task of this runtime",
                        "Name a task this runtime registered and has not unregistered (an id "
                        "another runtime gave names no task here)");
        }
        if (input.format != made.format) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " has format " + format_name(input.format) + " and its producer '" +
                            made.name + "' makes " + format_name(made.format),
                        "Give a chained input its producer's output format");
        }
        if (!self && input.chain == ChainMode::Matching && ran > 0) {
            // Its generation N reads the producer's N: from 1, so registered before the first.
            throw Error(ErrorCategory::InvalidArgument,
                        what + " reads in step with its producer '" + made.name +
                            "', which already made " + std::to_string(ran) + " generation(s)",
                        "Register a matching consumer before its producer's first submit, or "
                        "read its newest output (ChainMode::Newest)");
        }
        input.width = input.width == 0 ? made.width : input.width;
        input.height = input.height == 0 ? made.height : input.height;
        if (input.width != made.width || input.height != made.height) {
            throw Error(ErrorCategory::InvalidArgument,
                        what + " is " + size_text(input.width, input.height) +
                            " and its producer '" + made.name + "' makes " +
                            size_text(made.width, made.height),
                        "Give a chained input its producer's size, or 0 for it");
        }
        // A chain leading back to the task being reconfigured (at registration the task is
        // new: nothing can name it yet). Depth first over the producers' producers.
        if (self) {
            std::vector<std::pair<TaskId, std::vector<std::string>>> stack{
                {input.producer, {desc.name, made.name}}};
            std::set<TaskId> seen;
            while (!stack.empty()) {
                auto [id, path] = std::move(stack.back());
                stack.pop_back();
                if (id == self) {
                    std::string chain;
                    for (const std::string& name : path) {
                        chain += (chain.empty() ? "" : " -> ") + in_quotes(name);
                    }
                    throw Error(ErrorCategory::InvalidArgument,
                                what + " would make a cycle: " + chain + " (each reads the next)",
                                "A chain must not lead back to a task in it");
                }
                if (!seen.insert(id).second) {
                    continue;
                }
                const std::shared_ptr<Task> t = tasks.find(id);
                if (!t) {
                    continue;
                }
                std::vector<TaskId> next;
                std::vector<std::string> names;
                {
                    std::lock_guard lock(t->mutex);
                    if (!t->live) {
                        continue;
                    }
                    next = t->links.producers;
                }
                for (const TaskId n : next) {
                    std::vector<std::string> longer = path;
                    if (n == self) {
                        longer.push_back(desc.name);
                    } else if (const std::shared_ptr<Task> nt = tasks.find(n)) {
                        std::lock_guard lock(nt->mutex);
                        longer.push_back(nt->desc.name);
                    }
                    stack.emplace_back(n, std::move(longer));
                }
            }
        }
        out.push_back(std::move(producer));
    }
    return out;
}

ChainHold hold_chained(const TaskTable& tasks, const std::string& consumer,
                       std::span<const TaskInputDesc> inputs, const Worker* worker, bool follows,
                       std::uint64_t generation, std::vector<ChainedRead>& out) noexcept {
    ChainHold answer;
    const std::size_t first = out.size();
    try {
        for (std::size_t i = 0; i < inputs.size() && answer.status == ChainHold::Status::Held;
             ++i) {
            const TaskInputDesc& input = inputs[i];
            if (!input.producer) {
                continue;
            }
            const std::string who = "task '" + consumer + "'";
            const std::shared_ptr<Task> producer = tasks.find(input.producer);
            if (!producer) {
                answer = {ChainHold::Status::Broken, who + " reads task " +
                                                         to_string(input.producer) + " (input '" +
                                                         input.name + "'), which was unregistered"};
                break;
            }
            std::lock_guard task_lock(producer->mutex);
            const std::string of = "its producer '" + producer->desc.name + "'";
            TaskInstance* active = producer->active;
            if (!producer->live) {
                answer = {ChainHold::Status::Broken, who + " reads " + of + " (input '" +
                                                         input.name + "'), which was unregistered"};
                break;
            }
            if (active == nullptr || active->preparing()) {
                answer = {ChainHold::Status::Preparing, of + " is being prepared"};
                break;
            }
            // A path of its that failed: prepared again with the next one (LinkFallback).
            if (active->prepared() && active->link_failed.load(std::memory_order_acquire) &&
                !active->worker->lost() && producer->preparation.fallback_error.empty()) {
                answer = {ChainHold::Status::Preparing,
                          of + " is being prepared again with another transfer path"};
                break;
            }
            if (!active->prepared() || active->link_failed.load(std::memory_order_acquire) ||
                active->worker->lost()) {
                answer = {ChainHold::Status::Broken, who + " cannot read " + of +
                                                         ": it cannot run on " +
                                                         active->worker->label()};
                break;
            }
            // On another device: read where it is delivered when this consumer runs on the
            // primary (index 0), which every output reaches; on another worker where the
            // producer's feed to it delivers it (chain_feeds.hpp).
            const bool delivered = active->worker != worker && worker->index() == 0;
            // An output kept on its worker is read there alone (in place).
            if (active->worker != worker && active->keeps_output_on_worker()) {
                answer = {ChainHold::Status::Broken,
                          who + " runs on " + worker->label() + " and " + of +
                              " keeps its outputs on " + active->worker->label() +
                              " (TaskDesc::keep_output_on_worker): place it there"};
                break;
            }
            ChainFeed* feed = nullptr;
            if (active->worker != worker && !delivered) {
                feed = active->feeds.to(worker);
                if (feed == nullptr && producer->pending != nullptr &&
                    producer->pending_kind == PendingKind::Feeds) {
                    answer = {ChainHold::Status::Preparing,
                              of + " is being prepared to send its output to " + worker->label()};
                    break;
                }
                // A chain moving as a unit, one of the two on the new device first: only a
                // follower's producer moves (any other consumer pins it), and only a follower
                // among chained consumers moves.
                if (feed == nullptr && follows) {
                    answer = {ChainHold::Status::Preparing, who + " follows " + of + " to " +
                                                                active->worker->label() +
                                                                " (a chain placed as a unit)"};
                    break;
                }
                std::lock_guard lock(active->mutex);
                const std::string cannot = who + " runs on " + worker->label() + " and " + of +
                                           " on " + active->worker->label() + ": ";
                if (feed == nullptr) {
                    answer = {ChainHold::Status::Broken,
                              cannot + (producer->links.feed_error.empty()
                                            ? std::string("its output is not sent there")
                                            : producer->links.feed_error)};
                    break;
                }
                if (!feed->link || feed->link->failed()) {
                    answer = {ChainHold::Status::Broken,
                              cannot + (feed->link ? feed->link->error() : feed->error)};
                    break;
                }
            }
            if (active->desc.format != input.format || active->desc.width != input.width ||
                active->desc.height != input.height) {
                answer = {ChainHold::Status::Broken,
                          of + " makes " + format_name(active->desc.format) + " " +
                              size_text(active->desc.width, active->desc.height) + " now and " +
                              who + "'s input '" + input.name + "' is " +
                              format_name(input.format) + " " +
                              size_text(input.width, input.height) +
                              ": reconfigure one to match the other"};
                break;
            }
            std::lock_guard lock(active->mutex);
            std::optional<std::uint32_t> slot;
            std::uint64_t newest = 0;
            for (std::uint32_t s = 0; s < active->ring.size(); ++s) {
                const SlotRecord& r = active->ring[s];
                // Across workers: what its job copied for the feed, or will (a job not started
                // yet fills every feed a live consumer wants).
                if (r.trial || !readable(r.state) ||
                    (feed != nullptr && feed->slots[s].copied != r.generation &&
                     r.state != SlotState::Recording)) {
                    continue;
                }
                if (input.chain == ChainMode::Matching ? r.generation == generation
                                                       : r.generation > newest) {
                    slot = s;
                    newest = r.generation;
                }
            }
            if (!slot) {
                if (input.chain == ChainMode::Newest) {
                    answer = {ChainHold::Status::Busy, of + " has no output yet"};
                } else if (producer->generations < generation) {
                    answer = {ChainHold::Status::Busy, who + " waits for generation " +
                                                           std::to_string(generation) + " of " +
                                                           of};
                } else {
                    answer = {ChainHold::Status::Broken,
                              "generation " + std::to_string(generation) + " of " + of +
                                  " is no longer held (it is at " +
                                  std::to_string(producer->generations) + "): " + who +
                                  " reads in step with it only when registered before it ran "
                                  "ahead; ChainMode::Newest reads its newest"};
                }
                break;
            }
            ++active->ring[*slot].readers.holds;
            out.push_back(
                ChainedRead{i, active, *slot, active->ring[*slot].generation, delivered, feed});
        }
    } catch (...) {
        answer = {ChainHold::Status::Broken, std::string()}; // out of memory for a sentence
    }
    if (answer.status != ChainHold::Status::Held) {
        std::vector<ChainedRead> taken(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
        out.resize(first);
        release_chained(taken, 0);
    }
    return answer;
}

namespace {

void release_hold(const ChainedRead& read, std::uint64_t done) noexcept {
    std::lock_guard lock(read.producer->mutex);
    SlotRecord& s = read.producer->ring[read.slot];
    --s.readers.holds;
    // A read of the image delivered on the primary or fed to another worker ran on a device
    // whose work values the producer's does not wait on: it is over (the completion pass saw
    // it) before the slot, free again, takes a job whose hand-off or feed rewrites that image.
    if (read.in_place()) {
        s.readers.holds_done = std::max(s.readers.holds_done, done);
    }
}

// `image` as the consumer's job reads it, in `layout`.
void fill_chained(JobInput& in, const Image& image, VkImageLayout layout,
                  std::uint64_t generation) {
    in.image = image.get();
    in.view = image.view.get();
    in.layout = layout;
    in.format = image.format;
    in.extent = image.extent;
    in.chained = true;
    in.generation = generation;
}

// The three places a held output is read, each under the producer instance's mutex with its
// slot still holding the generation read. `of` names it for a failure.

// On the primary: the producer's output as its hand-off delivered it there, in
// SHADER_READ_ONLY_OPTIMAL (as leases read it) once the transport's primary value is reached.
// Until the hand-off's primary side was submitted (by the producer's transfer thread, or its
// bridge later) there is nothing to wait on.
Gathered read_delivered(const ChainedRead& read, const SlotRecord& s, JobInput& in,
                        std::vector<VkSemaphoreSubmitInfo>& waits, const std::string& of,
                        std::string& why) {
    const TaskInstance& producer = *read.producer;
    if (s.state == SlotState::Recording || s.primary_value == 0) {
        return Gathered::NotYet;
    }
    if (producer.transport->failed()) {
        why = of + " could not be delivered to the primary";
        return Gathered::Failed;
    }
    if (!producer.transport->may_wait_for(s.primary_value)) {
        return Gathered::NotYet; // its bridge has not queued the delivery yet
    }
    add_wait(waits, semaphore_submit_info(producer.transport->receiver_semaphore(), s.primary_value,
                                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
    fill_chained(in, producer.slots[read.slot].primary_image,
                 VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, read.generation);
    return Gathered::Ready;
}

// On this worker: where the producer's feed delivered it, in its receiver layout
// (SHADER_READ_ONLY_OPTIMAL; GENERAL where this device reads the link's staging in place) once
// the link's value here is reached. The feed is handed to its link before the producer's slot
// leaves Recording.
Gathered read_fed(const ChainedRead& read, const SlotRecord& s, JobInput& in,
                  std::vector<VkSemaphoreSubmitInfo>& waits, const std::string& of,
                  std::string& why) {
    if (s.state == SlotState::Recording) {
        return Gathered::NotYet;
    }
    const ChainFeed& feed = *read.feed;
    const FeedSlot& fed = feed.slots[read.slot];
    if (fed.sent != read.generation) {
        why = of + " was not sent to " + feed.to->label() +
              (feed.error.empty() ? std::string() : ": " + feed.error);
        return Gathered::Failed;
    }
    if (feed.link->failed()) {
        why = of + " could not be sent to " + feed.to->label() + ": " + feed.link->error();
        return Gathered::Failed;
    }
    if (!feed.link->may_wait_for(fed.ticket.receiver_value)) {
        return Gathered::NotYet; // its bridge has not queued the hand-off yet
    }
    add_wait(waits,
             semaphore_submit_info(feed.link->receiver_semaphore(), fed.ticket.receiver_value,
                                   VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
    fill_chained(in, fed.receiver.image ? fed.receiver : fed.sender, fed.receiver_layout,
                 read.generation);
    return Gathered::Ready;
}

// On the device both run on: the image the producer's job wrote, after the hand-off's worker
// side read it and left it in handed_off_layout (sampled: the producer's job asked for it; GENERAL
// where it wrote the staging in place); nothing writes it again while the hold lasts.
Gathered read_in_place(const ChainedRead& read, const SlotRecord& s, JobInput& in,
                       std::vector<VkSemaphoreSubmitInfo>& waits, const std::string& of,
                       std::string& why) {
    const TaskInstance& producer = *read.producer;
    if (s.state == SlotState::Recording) {
        if (s.work_submitted) {
            return Gathered::NotYet; // its hand-off is being submitted on the transfer thread
        }
        // One job thread per device, in submit order: the producer's job is behind this one
        // (the two were submitted from two threads at once).
        why = of + " was queued after it: submit the producer first";
        return Gathered::Failed;
    }
    const SlotResources& res = producer.slots[read.slot];
    if (res.handed_off_layout != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL &&
        res.handed_off_layout != VK_IMAGE_LAYOUT_GENERAL) {
        why = of + " was left in a layout it cannot be sampled in by " +
              producer.transport->path_name();
        return Gathered::Failed;
    }
    // Kept on the worker, the output is as its work left it; else after its hand-off's worker
    // side.
    add_wait(waits,
             producer.keeps_output_on_worker()
                 ? semaphore_submit_info(producer.worker->work_timeline().handle(), s.work_value,
                                         VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT)
                 : semaphore_submit_info(producer.transport->sender_semaphore(), s.worker_value,
                                         VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT));
    fill_chained(in, res.written(), res.handed_off_layout, read.generation);
    return Gathered::Ready;
}

} // namespace

void release_chained(std::vector<ChainedRead>& reads, std::uint64_t done) noexcept {
    for (const ChainedRead& read : reads) {
        release_hold(read, done);
    }
    reads.clear();
}

ChainHold SubmitHolds::take(const TaskTable& tasks, Task& task) {
    std::string name;
    std::vector<TaskInputDesc> inputs;
    bool follows = false;
    {
        std::lock_guard lock(task.mutex);
        const TaskInstance* active = task.active;
        if (!task.live || active == nullptr || !active->prepared() || !has_chain(active->desc)) {
            return {};
        }
        m_chained = true;
        m_worker = active->worker;
        m_generation = task.generations + 1;
        follows = task.links.leader != nullptr;
        name = active->desc.name;
        inputs = active->desc.inputs;
    }
    ChainHold held = hold_chained(tasks, name, inputs, m_worker, follows, m_generation, m_reads);
    if (held.status == ChainHold::Status::Broken) {
        std::lock_guard lock(task.mutex);
        TaskGraph::stop_reading(task.links); // it cannot read in step now
    }
    return held;
}

bool SubmitHolds::fit(const TaskInstance& instance, std::uint64_t generations) const noexcept {
    return !has_chain(instance.desc) ||
           (m_chained && m_worker == instance.worker && m_generation == generations + 1);
}

bool ChainedInput::hold(std::uint32_t slot, const ChainedRead& read) noexcept {
    if (read.input != declared() || slot >= m_reads.size() || m_reads[slot].producer != nullptr) {
        return false;
    }
    m_reads[slot] = read;
    return true;
}

void ChainedInput::release(std::uint32_t slot, std::uint64_t done) noexcept {
    if (holding(slot)) {
        release_hold(m_reads[slot], done);
        m_reads[slot] = ChainedRead{};
    }
}

Gathered ChainedInput::gather(TaskInstance& /*instance*/, std::uint32_t slot,
                              const InputCopier& /*copies*/, JobInput& input,
                              std::vector<VkSemaphoreSubmitInfo>& waits,
                              std::string& why) noexcept {
    if (!holding(slot)) {
        return Gathered::Ready; // nothing held: a trial job reads no other task's output
    }
    const ChainedRead& read = m_reads[slot];
    try {
        std::lock_guard lock(read.producer->mutex);
        const SlotRecord& s = read.producer->ring[read.slot];
        const std::string of = "generation " + std::to_string(read.generation) +
                               " of its producer '" + read.producer->desc.name + "'";
        if (s.generation != read.generation || s.state == SlotState::Free ||
            s.state == SlotState::Retired) {
            why = of + " failed, so it has nothing to read";
            return Gathered::Failed;
        }
        if (read.delivered) {
            return read_delivered(read, s, input, waits, of, why);
        }
        if (read.feed != nullptr) {
            return read_fed(read, s, input, waits, of, why);
        }
        return read_in_place(read, s, input, waits, of, why);
    } catch (...) {
        why = "out of memory reading its chained inputs";
        return Gathered::Failed;
    }
}

} // namespace tandem::detail
