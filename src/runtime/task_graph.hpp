// The task graph: chains (tandem/input.hpp, Chains) as links between tasks, kept apart from the
// tasks' own state and from the calls that change it.
//
//   TaskLinks   one task's place in the graph (Task::links, under the task's mutex): the
//               producers its shape reads, the one it follows, the producers it pins, its cursor
//               as a matching consumer and, as a producer, its consumers' cursors and the feeds
//               its consumers on other workers asked for.
//   TaskGraph   the runtime's calls that make and undo links (registration, reconfigure,
//               unregister): where a consumer is placed with its producers, which producer it
//               follows, the pins and cursors it puts on its producers, and the feeds that send a
//               producer's output to a consumer's worker (runtime/chain_feeds.hpp). It owns the
//               chain lock.
//
// What a job does with a chained input (holding, reading and releasing a producer's slot) is in
// runtime/task_chains.hpp; the feeds' copies in runtime/chain_feeds.hpp.
//
// Placement: a chain is placed as a unit. An auto consumer of one producer follows it (`leader`:
// the scheduler puts both on one device and moves them together). A producer read by any other
// consumer (placed by hand, or reading several producers) is pinned: the scheduler moves it no
// more while such a consumer's shape reads it (`pins` counts them; the consumer keeps the
// producers it pinned in `pinning` and lets them go when it is unregistered or reshaped).
//
// Lock order: the chain lock, then one task's mutex at a time. TaskGraph's calls take each
// producer's mutex in turn and never hold two tasks' mutexes.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tandem/task.hpp"

namespace tandem::detail {

class RuntimeImpl;
struct Task;

// A matching consumer's next generation (ChainMode::Matching), shared with its producers: they
// keep their generations from `next` on until it read them. Atomics: the consumer's submit writes
// it under its own task's mutex, a producer's completion pass reads it under the producer's
// (release/acquire: a producer that sees `next` past a generation sees the hold the consumer took
// on it before).
struct ChainCursor {
    std::atomic<std::uint64_t> next{1};
    std::atomic<bool> live{true};
};

// A producer, and the adapter where a consumer counted itself in its feeds.
using FeedCount = std::pair<std::shared_ptr<Task>, std::uint32_t>;

// One task's place in the graph. Guarded by its Task::mutex (feeds_chain is also read by its
// jobs without it).
struct TaskLinks {
    // As a consumer: the producers its newest shape reads (the cycle check walks them under the
    // chain lock), the producer it follows (null unless it is placed with that one), the
    // producers it pinned and the feeds it counted itself in, and its cursor when it reads in
    // step.
    std::vector<TaskId> producers;
    std::shared_ptr<const Task> leader;
    std::vector<std::shared_ptr<Task>> pinning;
    std::vector<FeedCount> feeding;
    std::shared_ptr<ChainCursor> cursor;

    // As a producer: how many consumers pin it; its matching consumers' cursors; whether a
    // consumer reads its outputs in place (its jobs then leave their image readable: set once,
    // read by its jobs); per adapter, how many live consumers there read it from another device
    // (each of its instances is made with a feed to each); why its last preparation with a new
    // feed failed.
    std::uint32_t pins = 0;
    std::vector<std::shared_ptr<ChainCursor>> matching_consumers;
    std::atomic<bool> feeds_chain{false};
    std::map<std::uint32_t, std::uint32_t> feed_counts;
    std::string feed_error;

    // True while a live matching consumer has not read `generation` yet.
    [[nodiscard]] bool wanted(std::uint64_t generation) const noexcept;
};

// What a consumer's shape puts on the graph, from its description and its producers.
struct ChainPlan {
    std::vector<std::shared_ptr<Task>> producers; // in input order, resolved by check_chain
    std::optional<std::uint32_t> device;          // where it runs with them (none: no producers)
    std::shared_ptr<Task> leader;                 // the producer it follows, if any
    // When one of its inputs reads in step: from generation 1 (a consumer reconfigured sets its
    // next generation under its mutex before it is linked).
    std::shared_ptr<ChainCursor> cursor;

    [[nodiscard]] std::vector<TaskId> producer_ids() const;
};

// A consumer's new shape's links (its plan's), under its mutex: its producers and leader at
// once (adopting the shape reads them: its placement, Task::update_automatic); its cursor once
// the shape was adopted (commit), reading in step from the generation given. Not committed (the
// shape could not be adopted), the producers and leader it had come back.
class AdoptedLinks {
public:
    // Throws std::bad_alloc only, with nothing changed.
    AdoptedLinks(TaskLinks& links, const ChainPlan& plan);
    ~AdoptedLinks();
    AdoptedLinks(const AdoptedLinks&) = delete;
    AdoptedLinks& operator=(const AdoptedLinks&) = delete;
    // The plan's cursor replaces the one the task had (which its producers then keep nothing
    // for), reading from `next_generation` on.
    void commit(std::uint64_t next_generation) noexcept;

private:
    TaskLinks& m_links;
    const ChainPlan& m_plan;
    std::vector<TaskId> m_producers;
    std::shared_ptr<const Task> m_leader;
    bool m_committed = false;
};

// A consumer's links taken off it (unregister, reconfigure): let go by TaskGraph::release.
struct DetachedLinks {
    std::vector<std::shared_ptr<Task>> pinning;
    std::vector<FeedCount> feeding;
};

class TaskGraph {
public:
    explicit TaskGraph(RuntimeImpl& runtime) : m_runtime(&runtime) {}
    TaskGraph(const TaskGraph&) = delete;
    TaskGraph& operator=(const TaskGraph&) = delete;

    // The chain lock, taken when `desc` reads other tasks (reconfigure): two reconfigures at once
    // could close a cycle between them. Unlocked for a description without chains.
    [[nodiscard]] std::unique_lock<std::mutex> lock_for(const TaskDesc& desc);

    // Checks `desc`'s chains (check_chain: its sizes resolved) and plans its place: its
    // producers' device when placed auto (or on any worker, its first producer being on one),
    // else where its placement names; the producer it follows; its cursor. `self`: the task
    // being reconfigured (none at registration). Caller
    // holds the chain lock when `desc` has chains and `self` is set, and no task's mutex. Throws
    // Error with a sentence (a bad chain, a producer that could not be placed).
    [[nodiscard]] ChainPlan plan(TaskDesc& desc, TaskId self) const;

    // Links `task` (its new shape adopted, `plan` its plan) to its producers: each becomes a
    // producer, keeps what the cursor has not read, and is pinned unless the task follows it;
    // producers on another device than `device` (where the task runs) send their output there.
    // `old` (the links its previous shape had, detached under its mutex) is let go after the new
    // ones are counted, so a producer read by both stays pinned and keeps its feed; it goes even
    // when counting the new ones throws. Links made for a task unregistered meanwhile go at once.
    // Caller holds no task's mutex. Throws Error or std::bad_alloc.
    void link(Task& task, const ChainPlan& plan, std::uint32_t device, DetachedLinks old);

    // Takes the consumer's links off `task`. Caller holds its mutex.
    [[nodiscard]] static DetachedLinks detach(Task& task) noexcept;
    // Its producers keep nothing more for `links`' cursor (the consumer was unregistered, or
    // reads with another). Caller holds the consumer's mutex.
    static void stop_reading(TaskLinks& links) noexcept;
    // Lets detached links go: a producer no consumer pins is placed by the scheduler again when
    // its placement is auto; a feed no consumer wants is no longer filled. Caller holds no task's
    // mutex.
    void release(DetachedLinks& links) noexcept;

private:
    // Makes each producer a producer (and pins it); what it pinned goes in `pinned` (reserved
    // first, so that an exception leaves what was pinned there).
    void link_each(const ChainPlan& plan, std::vector<std::shared_ptr<Task>>& pinned);
    static void release_pins(std::vector<std::shared_ptr<Task>>& pinned) noexcept;
    // Counts a consumer on `device` in each producer on another device, preparing a producer
    // again with a feed there when its newest instance has none; returns what it counted.
    [[nodiscard]] std::vector<FeedCount>
    request_feeds(const std::vector<std::shared_ptr<Task>>& producers, std::uint32_t device);
    void release_feeds(std::vector<FeedCount>& counted) noexcept;

    RuntimeImpl* m_runtime;
    std::mutex m_chains;
};

} // namespace tandem::detail
