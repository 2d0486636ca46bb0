// TaskGraph: the links between a chain's tasks (task_graph.hpp).
#include "runtime/task_graph.hpp"

#include <algorithm>

#include "runtime/runtime_impl.hpp"
#include "runtime/task.hpp"
#include "runtime/task_chains.hpp"
#include "tandem/error.hpp"

namespace tandem::detail {

namespace {

// The producer an auto consumer of `producers` follows (a chain placed as a unit: an auto
// consumer of one producer, however many of its inputs read it); null for a manual placement,
// no producer, or several.
std::shared_ptr<Task> leader_of(const TaskDesc& desc,
                                const std::vector<std::shared_ptr<Task>>& producers) {
    if (desc.placement.kind != PlacementKind::Auto || producers.empty() ||
        std::any_of(producers.begin(), producers.end(),
                    [&](const auto& p) { return p != producers.front(); })) {
        return nullptr;
    }
    return producers.front();
}

// Whether the jobs of every instance of `producer` (retiring ones too) fill their feed to `to`.
// Release: a job that sees the flag set fills the feed from then on. Caller holds its mutex.
void want_feeds(Task& producer, const Worker* to, bool wanted) {
    for (const auto* list : {&producer.instances, &producer.retiring}) {
        for (const auto& instance : *list) {
            if (ChainFeed* feed = instance->feeds.to(to)) {
                feed->wanted.store(wanted, std::memory_order_release);
            }
        }
    }
}

// A cursor when one of `desc`'s chained inputs reads in step (ChainMode::Matching).
std::shared_ptr<ChainCursor> matching_cursor(const TaskDesc& desc) {
    for (const TaskInputDesc& in : desc.inputs) {
        if (in.producer && in.chain == ChainMode::Matching) {
            return std::make_shared<ChainCursor>();
        }
    }
    return nullptr;
}

} // namespace

bool TaskLinks::wanted(std::uint64_t generation) const noexcept {
    for (const auto& consumer : matching_consumers) {
        // Acquire: pairs with the consumer's release of `next` after it took its hold.
        if (consumer->live.load(std::memory_order_acquire) &&
            generation >= consumer->next.load(std::memory_order_acquire)) {
            return true;
        }
    }
    return false;
}

std::unique_lock<std::mutex> TaskGraph::lock_for(const TaskDesc& desc) {
    std::unique_lock lock(m_chains, std::defer_lock);
    if (has_chain(desc)) {
        lock.lock();
    }
    return lock;
}

std::vector<TaskId> ChainPlan::producer_ids() const {
    std::vector<TaskId> out;
    out.reserve(producers.size());
    for (const auto& producer : producers) {
        out.push_back(producer->id);
    }
    return out;
}

ChainPlan TaskGraph::plan(TaskDesc& desc, TaskId self) const {
    ChainPlan out;
    out.producers = check_chain(m_runtime->tasks(), desc, self);
    if (out.producers.empty()) {
        return out;
    }
    std::optional<std::uint32_t> first; // the first producer's device
    for (const auto& producer : out.producers) {
        std::lock_guard lock(producer->mutex);
        if (producer->active == nullptr) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Task '" + desc.name + "' reads task '" + producer->desc.name +
                            "', which could not be placed",
                        "Register the producer again, then its consumer");
        }
        if (!first) {
            first = producer->active->device();
        }
    }
    const Placement& p = desc.placement;
    const bool on_a_worker = *first != m_runtime->primary().info().index;
    const bool with_producers = p.kind == PlacementKind::Auto ||
                                (p.kind == PlacementKind::Worker && !p.worker && on_a_worker);
    // Placed by hand elsewhere: on the primary it reads each producer's output where its
    // hand-off delivers it; on another worker where each producer's feed sends it
    // (chain_feeds.hpp). Auto, it goes with its first producer.
    out.device = with_producers ? *first : m_runtime->place(desc).device().info().index;
    out.leader = leader_of(desc, out.producers);
    out.cursor = matching_cursor(desc);
    return out;
}

void TaskGraph::link(Task& task, const ChainPlan& plan, std::uint32_t device, DetachedLinks old) {
    std::vector<FeedCount> counted;
    try {
        std::vector<std::shared_ptr<Task>> pinned;
        if (plan.leader == nullptr) {
            pinned.reserve(plan.producers.size()); // before any count changes: nothing to undo
        }
        try {
            link_each(plan, pinned);
        } catch (...) {
            release_pins(pinned); // out of memory: the pins taken so far go
            throw;
        }
        {
            std::lock_guard lock(task.mutex);
            if (task.live) {
                task.links.pinning = std::move(pinned);
            }
        }
        release_pins(pinned); // unregistered meanwhile (empty otherwise)
        counted = request_feeds(plan.producers, device);
    } catch (...) {
        release(old);
        throw;
    }
    release(old);
    {
        std::lock_guard lock(task.mutex);
        if (task.live) {
            task.links.feeding = std::move(counted);
        }
    }
    release_feeds(counted); // unregistered meanwhile (empty otherwise)
}

AdoptedLinks::AdoptedLinks(TaskLinks& links, const ChainPlan& plan)
    : m_links(links), m_plan(plan), m_producers(plan.producer_ids()), m_leader(plan.leader) {
    m_links.producers.swap(m_producers);
    m_links.leader.swap(m_leader);
}

AdoptedLinks::~AdoptedLinks() {
    if (!m_committed) {
        m_links.producers.swap(m_producers);
        m_links.leader.swap(m_leader);
    }
}

void AdoptedLinks::commit(std::uint64_t next_generation) noexcept {
    m_committed = true;
    TaskGraph::stop_reading(m_links);
    // Published by the consumer's mutex, which its submits take.
    m_links.cursor = m_plan.cursor;
    if (m_links.cursor) {
        m_links.cursor->next.store(next_generation, std::memory_order_relaxed);
    }
}

void TaskGraph::stop_reading(TaskLinks& links) noexcept {
    if (links.cursor) {
        links.cursor->live.store(false, std::memory_order_release);
    }
}

DetachedLinks TaskGraph::detach(Task& task) noexcept {
    DetachedLinks out;
    out.pinning.swap(task.links.pinning);
    out.feeding.swap(task.links.feeding);
    return out;
}

void TaskGraph::release(DetachedLinks& links) noexcept {
    release_pins(links.pinning);
    release_feeds(links.feeding);
}

void TaskGraph::link_each(const ChainPlan& plan, std::vector<std::shared_ptr<Task>>& pinned) {
    const bool pin = plan.leader == nullptr;
    for (const auto& producer : plan.producers) {
        std::lock_guard lock(producer->mutex);
        TaskLinks& links = producer->links;
        // Release: its next job sees the flag with everything registration wrote.
        links.feeds_chain.store(true, std::memory_order_release);
        // A consumer that does not follow it (placed by hand, or reading several producers)
        // keeps it where it is: the scheduler moves it no more while that consumer reads it.
        if (pin) {
            ++links.pins;
            pinned.push_back(producer);
            producer->automatic = false;
            if (producer->pending != nullptr && producer->pending_kind == PendingKind::Move) {
                m_runtime->discard(*producer, producer->pending);
            }
        }
        auto& cursors = links.matching_consumers;
        cursors.erase(
            std::remove_if(cursors.begin(), cursors.end(),
                           [](const auto& c) { return !c->live.load(std::memory_order_relaxed); }),
            cursors.end());
        if (plan.cursor &&
            std::find(cursors.begin(), cursors.end(), plan.cursor) == cursors.end()) {
            cursors.push_back(plan.cursor);
        }
    }
}

void TaskGraph::release_pins(std::vector<std::shared_ptr<Task>>& pinned) noexcept {
    for (const auto& producer : pinned) {
        std::lock_guard lock(producer->mutex);
        if (--producer->links.pins == 0) {
            producer->update_automatic(); // the scheduler's again where its placement is auto
        }
    }
    pinned.clear();
}

std::vector<FeedCount> TaskGraph::request_feeds(const std::vector<std::shared_ptr<Task>>& producers,
                                                std::uint32_t device) {
    std::vector<FeedCount> counted;
    Worker* to = m_runtime->workers().of(device);
    if (to == nullptr || device == m_runtime->primary().info().index) {
        return counted; // on the primary every output arrives anyway
    }
    for (const auto& producer : producers) {
        if (std::any_of(counted.begin(), counted.end(),
                        [&](const auto& c) { return c.first == producer; })) {
            continue; // two inputs from one producer: one feed
        }
        std::lock_guard lock(producer->mutex);
        TaskInstance* newest = producer->pending != nullptr ? producer->pending : producer->active;
        if (!producer->live || newest == nullptr || newest->device() == device) {
            continue; // read in place
        }
        counted.reserve(counted.size() + 1);
        ++producer->links.feed_counts[device];
        counted.emplace_back(producer, device);
        want_feeds(*producer, to, true);
        const auto workers = newest->feeds.workers();
        if (std::find(workers.begin(), workers.end(), to) != workers.end()) {
            continue; // it has (or is being prepared with) a feed there
        }
        // Prepared again on its device with a feed to `to` too; until then its submits answer
        // Preparing, so that a matching consumer misses none of its generations.
        producer->links.feed_error.clear();
        TaskInstance& next = m_runtime->add_instance(*producer, newest->desc, newest->device());
        if (producer->pending != nullptr) {
            m_runtime->discard(*producer, producer->pending);
            producer->pending = &next; // the same kind, now with the feed
        } else {
            (void)m_runtime->take_over(*producer, next, PendingKind::Feeds);
        }
    }
    return counted;
}

void TaskGraph::release_feeds(std::vector<FeedCount>& counted) noexcept {
    for (const auto& [producer, device] : counted) {
        std::lock_guard lock(producer->mutex);
        auto& counts = producer->links.feed_counts;
        const auto it = counts.find(device);
        if (it == counts.end() || --it->second > 0) {
            continue;
        }
        counts.erase(it);
        // Its jobs stop filling the feeds there (they stay until it is prepared again).
        want_feeds(*producer, m_runtime->workers().of(device), false);
    }
    counted.clear();
}

} // namespace tandem::detail
