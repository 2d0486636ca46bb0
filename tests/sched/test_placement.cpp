#include "sched/placement.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sched_fixture.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

using detail::PlacementKind;
using PlacementRequest = detail::Placement;
using detail::Stage;

class Placement : public SyntheticSchedTest {
protected:
    // Adapter 0 is the primary, 1 and 2 the workers: three devices unless `physical` says that
    // some are openings of one device.
    [[nodiscard]] detail::DeviceSet devices() const {
        detail::DeviceSet set;
        set.primary = 0;
        set.workers = {1, 2};
        set.identify(infos());
        return set;
    }

    static detail::PlacementTask task(std::string name, std::uint32_t size, double rate_hz = 30.0,
                                      PlacementRequest request = {}) {
        return {std::move(name), {"pattern", size, size, 0, 0}, rate_hz, request};
    }
};

// The placement `text` names; the tests give only valid ones.
PlacementRequest parse(std::string_view text) {
    return detail::parse_placement(text).value();
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST_F(Placement, TasksAvoidASlowWorker) {
    // Adapter 2 is twenty times slower: at 30 Hz a 512x512 pattern would need 240% of it.
    detail::CostModel model(synthetic({{1.0}, {1.0}, {20.0}}), infos());
    detail::Placer placer(model);
    const std::vector<detail::PlacementTask> tasks = {task("a", 512), task("b", 512),
                                                      task("c", 512)};
    const auto plan = placer.decide(tasks, devices());
    for (const auto& t : plan.tasks) {
        EXPECT_EQ(t.chosen, 1u) << to_text(t);
        ASSERT_EQ(t.devices.size(), 3u);
        EXPECT_FALSE(t.devices[2].candidate);
        EXPECT_TRUE(contains(t.devices[2].excluded, "capacity")) << t.devices[2].excluded;
    }
    EXPECT_LE(plan.devices[1].load_fraction, placer.options().capacity);
}

TEST_F(Placement, MovesArePricedOverThePathEachWorkerUses) {
    // The profile measured host-imported and host-copy; worker 2's results take host-copy (its
    // runtime link negotiated it), worker 1's take shared memory, which was never measured.
    detail::CostModel model(synthetic({}), infos());
    detail::Placer placer(model);
    auto set = devices();
    set.worker_paths = {{1, TransferPath::SharedMemory}, {2, TransferPath::HostCopy}};
    const auto plan = placer.decide({task("a", 512)}, set);
    const auto& t = plan.tasks[0];
    ASSERT_EQ(t.devices.size(), 3u);
    EXPECT_FALSE(t.devices[1].candidate);
    EXPECT_TRUE(contains(t.devices[1].excluded, "shared-memory")) << t.devices[1].excluded;
    ASSERT_TRUE(t.devices[2].move);
    EXPECT_EQ(t.devices[2].move->path, TransferPath::HostCopy);
    EXPECT_EQ(t.chosen, 2u) << to_text(plan);
}

TEST_F(Placement, OneTaskPrefersTheFasterOfTwoWorkers) {
    // Both workers could run it at its rate; the faster one is left less loaded.
    detail::CostModel model(synthetic({{1.0}, {3.0}, {1.0}}), infos());
    detail::Placer placer(model);
    const auto plan = placer.decide({task("a", 512)}, devices());
    EXPECT_EQ(plan.tasks[0].chosen, 2u) << to_text(plan);
}

TEST_F(Placement, DearTransferKeepsSmallGainTasksOnThePrimary) {
    SyntheticLink dear;
    dear.latency_us = 3000.0; // 3 ms before any byte moves
    detail::CostModel model(synthetic({}, dear), infos());
    detail::Placer placer(model);
    // small: 1 ms on the primary, less than the 3 ms transfer. large: 16 ms, well worth it.
    const std::vector<detail::PlacementTask> tasks = {task("small", 256), task("large", 1024)};
    const auto plan = placer.decide(tasks, devices());
    const auto& small = plan.tasks[0];
    const auto& large = plan.tasks[1];
    EXPECT_EQ(small.chosen, 0u) << to_text(small);
    EXPECT_NE(large.chosen, 0u) << to_text(large);
    EXPECT_TRUE(contains(small.reason, "on the primary")) << small.reason;
    ASSERT_TRUE(small.devices[1].move.has_value());
    ASSERT_TRUE(small.devices[1].move->parts.has_value());
    EXPECT_GT(small.devices[1].move->parts->transfer.ms, 3.0);
    EXPECT_LT(small.devices[1].gain_ms, small.devices[1].charge_ms);

    // With cheap transfers the same small task is worth moving.
    detail::CostModel cheap(synthetic({}), infos());
    detail::Placer other(cheap);
    EXPECT_NE(other.decide(tasks, devices()).tasks[0].chosen, 0u);
}

TEST_F(Placement, OneStalledMeasurementMovesNothing) {
    detail::CostModel model(synthetic({}), infos());
    detail::Placer placer(model);
    const std::vector<detail::PlacementTask> tasks = {task("mirror", 512)};
    const auto first = placer.decide(tasks, devices());
    const auto worker = first.tasks[0].chosen;
    ASSERT_NE(worker, 0u);
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(model.observe("mirror", worker, Stage::Execute, 4.0));
        ASSERT_TRUE(model.observe("mirror", worker, Stage::Transfer, 0.2));
        ASSERT_TRUE(model.observe("mirror", worker, Stage::Sync, 0.05));
        ASSERT_TRUE(model.observe("mirror", 0, Stage::Execute, 4.0));
        EXPECT_EQ(placer.decide(tasks, devices()).moves(), 0u);
    }
    // One stall everywhere: execute alone would need 30 s per second of the worker, the
    // transfer would cost more than the task saves, and the primary would look 50x dearer.
    ASSERT_TRUE(model.observe("mirror", worker, Stage::Execute, 1000.0));
    ASSERT_TRUE(model.observe("mirror", worker, Stage::Transfer, 200.0));
    ASSERT_TRUE(model.observe("mirror", worker, Stage::Sync, 100.0));
    ASSERT_TRUE(model.observe("mirror", 0, Stage::Execute, 200.0));
    const auto after = placer.decide(tasks, devices());
    EXPECT_EQ(after.tasks[0].chosen, worker) << to_text(after);
    EXPECT_EQ(after.moves(), 0u);
}

TEST_F(Placement, OneStalledMeasurementKeepsASmallTaskOnThePrimary) {
    SyntheticLink dear;
    dear.latency_us = 3000.0;
    detail::CostModel model(synthetic({}, dear), infos());
    detail::Placer placer(model);
    const std::vector<detail::PlacementTask> tasks = {task("small", 256)};
    for (int i = 0; i < 6; ++i) {
        ASSERT_TRUE(model.observe("small", 0, Stage::Execute, 1.0));
        EXPECT_EQ(placer.decide(tasks, devices()).tasks[0].chosen, 0u);
    }
    ASSERT_TRUE(model.observe("small", 0, Stage::Execute, 50.0)); // would be a 47 ms gain
    const auto plan = placer.decide(tasks, devices());
    EXPECT_EQ(plan.tasks[0].chosen, 0u) << to_text(plan);
}

TEST_F(Placement, ALostWorkersTasksMoveInTheNextDecision) {
    detail::CostModel model(synthetic({}), infos());
    detail::Placer placer(model);
    const std::vector<detail::PlacementTask> tasks = {task("a", 512), task("b", 512),
                                                      task("pinned", 512, 30.0, parse("1"))};
    auto set = devices();
    auto plan = placer.decide(tasks, set);
    const auto a_on = *plan.device_of("a");
    const auto b_on = *plan.device_of("b");
    ASSERT_NE(a_on, 0u);
    ASSERT_NE(b_on, 0u);
    EXPECT_EQ(*plan.device_of("pinned"), 1u);

    // Adapter 1 is lost: the very next decision (the next primary frame) moves its tasks.
    set.lost = {1};
    plan = placer.decide(tasks, set);
    for (const auto& t : plan.tasks) {
        EXPECT_NE(t.chosen, 1u) << to_text(t);
        const bool was_on_lost =
            (t.task == "a" && a_on == 1) || (t.task == "b" && b_on == 1) || t.task == "pinned";
        if (was_on_lost) {
            EXPECT_TRUE(t.moved);
            EXPECT_TRUE(t.lost_move);
            EXPECT_TRUE(contains(t.reason, "last good output stays visible")) << t.reason;
        } else {
            EXPECT_FALSE(t.moved) << to_text(t);
        }
    }
    EXPECT_TRUE(contains(plan.tasks[2].reason, "requested adapter 1 is lost")) << to_text(plan);
    EXPECT_TRUE(plan.devices[1].lost);
    EXPECT_TRUE(plan.devices[1].tasks.empty());

    // Both workers lost: everything is on the primary in the next decision.
    set.lost = {1, 2};
    plan = placer.decide(tasks, set);
    for (const auto& t : plan.tasks) {
        EXPECT_EQ(t.chosen, 0u) << to_text(t);
    }
}

TEST_F(Placement, ManualPlacementsAreNeverOverridden) {
    SyntheticLink dear;
    dear.latency_us = 3000.0;
    // Adapter 2 is far too slow for what is pinned on it; transfers are dear.
    detail::CostModel model(synthetic({{1.0}, {1.0}, {20.0}}, dear), infos());
    detail::Placer placer(model);
    const std::vector<detail::PlacementTask> tasks = {
        task("on-primary", 1024, 30.0, parse("primary")), // 16 ms gain
        task("on-2", 1024, 30.0, parse("2")),             // 480 ms per update
        task("on-a-worker", 256, 30.0, parse("worker")),  // not worth it
    };
    for (int round = 0; round < 20; ++round) {
        const auto plan = placer.decide(tasks, devices());
        EXPECT_EQ(plan.tasks[0].chosen, 0u) << to_text(plan.tasks[0]);
        EXPECT_EQ(plan.tasks[1].chosen, 2u) << to_text(plan.tasks[1]);
        EXPECT_EQ(plan.tasks[2].chosen, 1u) << to_text(plan.tasks[2]);
        EXPECT_TRUE(contains(plan.tasks[0].reason, "Manual placement"));
        EXPECT_TRUE(contains(plan.tasks[1].reason, "Manual placement"));
        // Measurements that would argue the other way change nothing.
        (void)model.observe("on-primary", 0, Stage::Execute, 100.0);
        (void)model.observe("on-2", 2, Stage::Execute, 1000.0);
        (void)model.observe("on-a-worker", 0, Stage::Execute, 0.001);
    }
    const auto plan = placer.decide(tasks, devices());
    EXPECT_TRUE(contains(plan.tasks[1].reason, "may not be met")) << plan.tasks[1].reason;
    // Reported, not hidden: adapter 2 and the primary (100 ms at 30 Hz) cannot keep up.
    EXPECT_TRUE(plan.devices[2].over_capacity);
    EXPECT_TRUE(plan.devices[0].over_capacity);
    EXPECT_FALSE(plan.devices[1].over_capacity);
    EXPECT_TRUE(to_json(plan)["devices"][2]["over_capacity"].get<bool>());
}

// A task placed auto that the runtime holds where it runs (a consumer whose producer went)
// stays there, whatever the figures say, with the runtime's reason instead of a manual one.
TEST_F(Placement, AHeldAutoTaskStaysWithItsReason) {
    detail::CostModel model(synthetic({{1.0}, {1.0}, {20.0}}, SyntheticLink{}), infos());
    detail::Placer placer(model);
    detail::PlacementTask held = task("held", 1024, 30.0, parse("2")); // slow there
    held.held = "Its producer 'fill' was unregistered.";
    const auto plan = placer.decide({held}, devices());
    ASSERT_EQ(plan.tasks.size(), 1u);
    EXPECT_EQ(plan.tasks[0].chosen, 2u) << to_text(plan.tasks[0]);
    EXPECT_TRUE(contains(plan.tasks[0].reason, "Its producer 'fill' was unregistered. It stays on"))
        << plan.tasks[0].reason;
    EXPECT_FALSE(contains(plan.tasks[0].reason, "Manual placement")) << plan.tasks[0].reason;
}

TEST_F(Placement, NoFlappingAroundTheThreshold) {
    detail::CostModel model(synthetic({}), infos());
    const std::vector<detail::PlacementTask> tasks = {task("edge", 256)};
    const double move = model.move("edge", tasks[0].shape, 1, 0)->total_ms();
    const detail::PlacementOptions options; // margin: the larger of 0.05 ms and 10% of the gain
    const double margin = std::max(options.margin_ms, options.margin_fraction * move);
    const double wobble = 0.2 * margin;

    // Start on the primary just below the rule's threshold, then let the measured primary
    // cost alternate around threshold + margin.
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("edge", 0, Stage::Execute, move));
    }
    detail::Placer placer(model, options);
    ASSERT_EQ(placer.decide(tasks, devices()).tasks[0].chosen, 0u);
    std::size_t moves = 0;
    for (int i = 0; i < 40; ++i) {
        const double sample = move + margin + (i % 2 == 0 ? wobble : -wobble);
        ASSERT_TRUE(model.observe("edge", 0, Stage::Execute, sample));
        moves += placer.decide(tasks, devices()).moves();
    }
    EXPECT_LE(moves, 1u);

    // Around the threshold itself, from a worker: it stays put.
    for (int i = 0; i < 40; ++i) {
        const double sample = move + (i % 2 == 0 ? wobble : -wobble);
        ASSERT_TRUE(model.observe("edge", 0, Stage::Execute, sample));
        moves += placer.decide(tasks, devices()).moves();
    }
    EXPECT_LE(moves, 1u);

    // The same series without a margin flaps: the hysteresis is what holds it still.
    detail::CostModel bare_model(synthetic({}), infos());
    detail::PlacementOptions bare;
    bare.margin_ms = 0.0;
    bare.margin_fraction = 0.0;
    detail::Placer flappy(bare_model, bare);
    std::size_t flaps = 0;
    for (int i = 0; i < 40; ++i) {
        const double sample = move + (i % 2 == 0 ? wobble : -wobble);
        ASSERT_TRUE(bare_model.observe("edge", 0, Stage::Execute, sample));
        flaps += flappy.decide(tasks, devices()).moves();
    }
    EXPECT_GT(flaps, 10u);
}

TEST_F(Placement, SeveralWorkersShareTheLoad) {
    // Each 1024x1024 pattern at 25 Hz needs 40% of a worker: two fit in each (capacity 90%).
    for (const std::size_t limit : {std::size_t{4096}, std::size_t{1}}) {
        detail::CostModel model(synthetic({}), infos());
        detail::PlacementOptions options;
        options.exhaustive_limit = limit;
        detail::Placer placer(model, options);
        std::vector<detail::PlacementTask> tasks;
        for (int i = 0; i < 5; ++i) {
            tasks.push_back(task("t" + std::to_string(i), 1024, 25.0));
        }
        const auto plan = placer.decide(tasks, devices());
        EXPECT_EQ(plan.method, limit == 1 ? "greedy" : "exhaustive");
        ASSERT_EQ(plan.devices.size(), 3u);
        EXPECT_EQ(plan.devices[0].tasks.size(), 1u) << to_text(plan);
        EXPECT_EQ(plan.devices[1].tasks.size(), 2u) << to_text(plan);
        EXPECT_EQ(plan.devices[2].tasks.size(), 2u) << to_text(plan);
        for (const auto& d : plan.devices) {
            if (!d.primary) {
                EXPECT_LE(d.load_fraction, options.capacity + 1e-9);
            }
        }
        for (const auto& t : plan.tasks) {
            if (t.chosen == 0) {
                EXPECT_TRUE(contains(t.reason, "no capacity left")) << t.reason;
            }
        }
    }
}

TEST_F(Placement, ExplanationsCarryTheNumbers) {
    detail::CostModel model(synthetic({}), infos());
    detail::PlacementOptions options;
    options.primary_base_frame_ms = 5.0;
    detail::Placer placer(model, options);
    const auto plan = placer.decide({task("mirror", 1024)}, devices());
    const auto& e = plan.tasks[0];
    const auto json = to_json(plan);
    const auto& t = json["tasks"][0];
    EXPECT_EQ(t["task"], "mirror");
    EXPECT_EQ(t["chosen"], e.chosen);
    EXPECT_EQ(t["request"], "auto");
    EXPECT_EQ(t["devices"].size(), 3u);
    EXPECT_DOUBLE_EQ(t["devices"][0]["execute"]["ms"].get<double>(), 16.0);
    EXPECT_EQ(t["devices"][0]["execute"]["source"], "profile");
    const auto move = model.move("mirror", e.shape, 1, 0);
    ASSERT_TRUE(move && move->parts && move->prepare);
    const auto& parts = *move->parts;
    const auto& w = t["devices"][1];
    EXPECT_DOUBLE_EQ(w["move"]["transfer"]["ms"].get<double>(), parts.transfer.ms);
    EXPECT_DOUBLE_EQ(w["move"]["sync"]["ms"].get<double>(), parts.sync.ms);
    EXPECT_DOUBLE_EQ(w["move"]["reintegrate"]["ms"].get<double>(), parts.reintegrate.ms);
    EXPECT_DOUBLE_EQ(w["move"]["prepare"]["ms"].get<double>(), move->prepare->ms);
    // Every figure names its source; the profile's parts were timed apart.
    for (const char* part : {"prepare", "transfer", "sync", "reintegrate"}) {
        EXPECT_EQ(w["move"][part]["source"], "profile") << part;
    }
    EXPECT_TRUE(w["move"]["delivery"].is_null());
    EXPECT_EQ(w["move"]["path"], "host-imported");
    EXPECT_EQ(w["move"]["sync_mode"], "bridge");
    EXPECT_TRUE(w["opening_of"].is_null());
    EXPECT_TRUE(json["openings"].empty()) << "three devices, none opened twice";
    EXPECT_DOUBLE_EQ(w["gain_ms"].get<double>(), 16.0);
    EXPECT_DOUBLE_EQ(w["net_gain_ms"].get<double>(), 16.0 - move->total_ms());
    EXPECT_FALSE(t["reason"].get<std::string>().empty());
    // The primary keeps its base frame and reintegrates one 4 MiB result 30 times a second.
    EXPECT_NEAR(json["predicted_primary_frame_ms"].get<double>(),
                5.0 + parts.reintegrate.ms * 30.0 / 60.0, 1e-9);
    const auto text = to_text(plan);
    EXPECT_TRUE(contains(text, "task \"mirror\"")) << text;
    EXPECT_TRUE(contains(text, "host-imported")) << text;
    EXPECT_TRUE(contains(text, "why: ")) << text;
    EXPECT_TRUE(contains(text, "frees 16.000 ms")) << text;
    EXPECT_TRUE(contains(text, "over host-imported (profile)")) << text;
    EXPECT_TRUE(contains(text, "(profile)")) << text;
}

TEST_F(Placement, AMeasuredDeliveryIsExplainedAsOneMeasuredFigure) {
    detail::CostModel model(synthetic({}), infos());
    detail::Placer placer(model);
    const std::vector<detail::PlacementTask> tasks = {task("mirror", 1024)};
    const auto worker = placer.decide(tasks, devices()).tasks[0].chosen;
    ASSERT_NE(worker, 0u);
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(model.observe("mirror", worker, Stage::Delivery, 1.25));
        ASSERT_TRUE(model.observe("mirror", worker, Stage::Execute, 16.0));
    }
    const auto plan = placer.decide(tasks, devices());
    const auto& e = plan.tasks[0];
    ASSERT_EQ(e.chosen, worker) << to_text(plan);
    const auto& d = e.devices[worker];
    ASSERT_TRUE(d.move && d.move->delivery);
    EXPECT_FALSE(d.move->parts);
    EXPECT_DOUBLE_EQ(d.charge_ms, d.move->prepare->ms + 1.25);
    const auto json = to_json(plan)["tasks"][0]["devices"][worker]["move"];
    EXPECT_EQ(json["delivery"]["source"], "measured");
    EXPECT_DOUBLE_EQ(json["delivery"]["ms"].get<double>(), 1.25);
    for (const char* part : {"transfer", "sync", "reintegrate"}) {
        EXPECT_TRUE(json[part].is_null()) << part << " was made up from a whole";
    }
    EXPECT_TRUE(contains(e.reason, "delivery 1.250 ms")) << e.reason;
    EXPECT_TRUE(contains(e.reason, "(measured, as a whole)")) << e.reason;
    EXPECT_FALSE(contains(e.reason, "reintegrate")) << e.reason;
    const auto text = to_text(plan);
    EXPECT_TRUE(contains(text, "execute 16.000 ms (measured)")) << text;
}

TEST_F(Placement, AForcedPathIsTheOnlyPathUsed) {
    detail::CostModel model(synthetic({}), infos());
    detail::Placer placer(model);
    auto set = devices();
    set.forced_path = TransferPath::HostCopy;
    auto plan = placer.decide({task("mirror", 1024)}, set);
    ASSERT_NE(plan.tasks[0].chosen, 0u);
    const auto& worker = plan.tasks[0].devices[plan.tasks[0].chosen];
    ASSERT_TRUE(worker.move.has_value());
    EXPECT_EQ(worker.move->path, TransferPath::HostCopy);

    // A path the profile never measured cannot be used: the task stays on the primary.
    set.forced_path = TransferPath::SharedMemory;
    detail::Placer other(model);
    plan = other.decide({task("mirror", 1024)}, set);
    EXPECT_EQ(plan.tasks[0].chosen, 0u);
    EXPECT_TRUE(contains(plan.tasks[0].devices[1].excluded, "shared-memory"))
        << plan.tasks[0].devices[1].excluded;
    EXPECT_TRUE(contains(plan.tasks[0].reason, "no worker can take it")) << plan.tasks[0].reason;
}

TEST_F(Placement, AKindThePrimaryWasNotCalibratedForStaysThere) {
    auto profile = synthetic({});
    std::erase_if(profile.devices[0].workloads, [](const auto& w) { return w.kind == "capture"; });
    detail::CostModel model(profile, infos());
    detail::Placer placer(model);
    const detail::PlacementTask capture{"camera", {"capture", 512, 512, 5000, 0}, 30.0, {}};
    const auto plan = placer.decide({capture}, devices());
    EXPECT_EQ(plan.tasks[0].chosen, 0u);
    EXPECT_FALSE(plan.tasks[0].devices[0].execute.has_value());
    EXPECT_TRUE(contains(plan.tasks[0].devices[1].excluded, "no gain can be predicted"))
        << plan.tasks[0].devices[1].excluded;
}

TEST_F(Placement, ReasonsCanBeLeftOutButNumbersStay) {
    detail::CostModel model(synthetic({}), infos());
    detail::PlacementOptions options;
    options.explain = false;
    detail::Placer placer(model, options);
    const auto plan = placer.decide({task("mirror", 1024)}, devices());
    EXPECT_TRUE(plan.tasks[0].reason.empty());
    EXPECT_NE(plan.tasks[0].chosen, 0u);
    EXPECT_TRUE(plan.tasks[0].devices[1].move.has_value());
}

// A chain placed as a unit: members `with` the task whose output they read go where it goes,
// and the chain moves when the whole of it pays, its members' deliveries counted.

// A small task whose delivery costs more than it frees stays on the primary alone; read by a
// large one, it goes with the chain to a worker, which pays for the two together.
TEST_F(Placement, AChainMovesAsAUnitWhenTheWholeOfItPays) {
    SyntheticLink dear;
    dear.latency_us = 3000.0;
    detail::CostModel model(synthetic({}, dear), infos());
    detail::Placer alone(model);
    EXPECT_EQ(alone.decide({task("small", 256)}, devices()).tasks[0].chosen, 0u);

    detail::Placer placer(model);
    auto small = task("small", 256);
    small.with = "large";
    const auto plan = placer.decide({task("large", 1024), small}, devices());
    const auto& head = plan.tasks[0];
    const auto& member = plan.tasks[1];
    EXPECT_NE(head.chosen, 0u) << to_text(plan);
    EXPECT_EQ(member.chosen, head.chosen) << "a chain runs on one device";
    EXPECT_EQ(member.with, "large");
    EXPECT_EQ(head.chain, std::vector<std::string>{"small"});
    EXPECT_TRUE(contains(head.reason, "chain placed as a unit with 'small'")) << head.reason;
    EXPECT_TRUE(contains(member.reason, "Placed with 'large'")) << member.reason;
    const auto json = detail::to_json(plan);
    EXPECT_EQ(json["tasks"][1]["with"], "large");
}

// A chain whose every member delivers its output costs the sum of their deliveries on a worker:
// each task added to the chain makes it dearer there, until the whole stays on the primary,
// exactly where the sums say so.
TEST_F(Placement, AChainsTransfersAreCountedUntilTheyOutweighItsGain) {
    SyntheticLink dear;
    dear.latency_us = 3000.0;
    detail::CostModel model(synthetic({}, dear), infos());
    bool stayed = false;
    for (std::size_t length = 0; length <= 16 && !stayed; ++length) {
        std::vector<detail::PlacementTask> tasks = {task("large", 1024)};
        for (std::size_t k = 0; k < length; ++k) {
            auto member = task("small " + std::to_string(k), 256);
            member.with = tasks.back().name; // a line: each reads the one before
            tasks.push_back(member);
        }
        detail::Placer placer(model); // a new decision each time: no hysteresis
        const auto plan = placer.decide(tasks, devices());
        const std::uint32_t device = plan.tasks[0].chosen;
        double primary = 0.0;
        double best_worker = std::numeric_limits<double>::infinity();
        for (const std::uint32_t w : {1u, 2u}) {
            double sum = 0.0;
            for (const auto& t : plan.tasks) {
                EXPECT_EQ(t.chosen, device) << t.task << ": a chain runs on one device";
                sum += t.devices[w].charge_ms;
            }
            best_worker = std::min(best_worker, sum);
        }
        for (const auto& t : plan.tasks) {
            primary += t.devices[0].charge_ms;
        }
        // The rule's two sides for the whole chain (the margin is the head's, 10% of 16 ms).
        if (device == 0u) {
            EXPECT_GE(best_worker, primary - 2.0) << "length " << length << "\n" << to_text(plan);
            EXPECT_GT(length, 0u) << "the large task alone pays on a worker";
            stayed = true;
        } else {
            EXPECT_LT(best_worker, primary) << "length " << length << "\n" << to_text(plan);
            EXPECT_EQ(plan.tasks[0].chain.size(), length);
        }
    }
    EXPECT_TRUE(stayed) << "sixteen deliveries of 3 ms never outweighed 16 ms of work";
}

// A member whose cost is not known yet (the runtime measures it where it runs) adds nothing to
// its chain's sums and still goes with it.
TEST_F(Placement, AChainMemberOfUnknownCostFollowsItsChain) {
    detail::CostModel model(synthetic({}), infos());
    detail::Placer placer(model);
    detail::PlacementTask reader{"reader", {"application", 256, 256, 0, 0}, 30.0, {}};
    reader.with = "large";
    const auto plan = placer.decide({task("large", 1024), reader}, devices());
    EXPECT_NE(plan.tasks[0].chosen, 0u) << to_text(plan);
    EXPECT_EQ(plan.tasks[1].chosen, plan.tasks[0].chosen);
    EXPECT_FALSE(plan.tasks[1].devices[0].execute.has_value());
}

// A member that asks for a device of its own is not part of a chain: `with` is for auto tasks.
TEST_F(Placement, OnlyAutoTasksJoinAChain) {
    detail::CostModel model(synthetic({}), infos());
    detail::Placer placer(model);
    auto pinned = task("pinned", 256, 30.0, parse("primary"));
    pinned.with = "large";
    const auto plan = placer.decide({task("large", 1024), pinned}, devices());
    EXPECT_NE(plan.tasks[0].chosen, 0u);
    EXPECT_EQ(plan.tasks[1].chosen, 0u);
    EXPECT_TRUE(plan.tasks[1].with.empty());
    EXPECT_TRUE(plan.tasks[0].chain.empty());
}

// Openings of one physical device (equal device UUIDs, as lavapipe or one GPU opened several
// times) share one capacity: a move between them frees nothing, so none is made for a gain.

// The primary and both workers are one device: however cheap the workers look, every automatic
// task stays on the primary, and the explanation says why.
TEST_F(Placement, OpeningsOfThePrimarysDeviceNeverTakeATaskForAGain) {
    physical = {0, 0, 0};
    std::mt19937 random(29);
    auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(random);
    };
    for (int scenario = 0; scenario < 50; ++scenario) {
        SCOPED_TRACE("scenario " + std::to_string(scenario));
        SyntheticLink link;
        link.gbps = uniform(1.0, 1000.0);
        link.latency_us = uniform(0.0, 50.0);
        link.sync_us = uniform(0.0, 50.0);
        // The workers look up to 100 times cheaper than the primary.
        detail::CostModel model(
            synthetic({{uniform(1.0, 20.0)}, {uniform(0.2, 1.0)}, {uniform(0.2, 1.0)}}, link),
            infos());
        detail::Placer placer(model);
        const std::vector<detail::PlacementTask> tasks = {task("a", 1024, 5.0), task("b", 512),
                                                          task("c", 256, 60.0)};
        for (int round = 0; round < 4; ++round) {
            // Measurements that make the primary ever dearer change nothing.
            for (const auto& t : tasks) {
                (void)model.observe(t.name, 0, Stage::Execute, uniform(50.0, 150.0));
                (void)model.observe(t.name, 1, Stage::Execute, uniform(0.01, 0.1));
                (void)model.observe(t.name, 1, Stage::Delivery, uniform(0.01, 0.1));
            }
            const auto plan = placer.decide(tasks, devices());
            for (const auto& t : plan.tasks) {
                ASSERT_EQ(t.chosen, 0u) << to_text(t);
                for (std::size_t w = 1; w < 3; ++w) {
                    const auto& d = t.devices[w];
                    EXPECT_FALSE(d.candidate);
                    EXPECT_EQ(d.opening_of, 0u);
                    EXPECT_DOUBLE_EQ(d.gain_ms, 0.0) << "the same device does the work";
                }
                EXPECT_TRUE(contains(t.reason, "adapter 1 is an opening of the same device as the "
                                               "primary: moving there frees nothing"))
                    << t.reason;
            }
            ASSERT_EQ(plan.openings.size(), 1u);
            EXPECT_TRUE(contains(plan.openings[0], "share its capacity")) << plan.openings[0];
            EXPECT_EQ(plan.devices[1].shares_with, (std::vector<std::uint32_t>{0, 2}));
        }
    }
}

// Asked for explicitly (a test or a demo that needs moves between openings), the openings are
// separate devices, and every explanation says that they are treated so.
TEST_F(Placement, OpeningsTreatedAsSeparateMoveAndSaySo) {
    physical = {0, 0, 0};
    detail::CostModel model(synthetic({{20.0}, {1.0}, {1.0}}), infos());
    detail::Placer placer(model);
    auto set = devices();
    set.openings_are_separate = true;
    const auto plan = placer.decide({task("mirror", 512)}, set);
    const auto& e = plan.tasks[0];
    ASSERT_NE(e.chosen, 0u) << to_text(plan);
    const auto& chosen = e.devices[e.chosen];
    EXPECT_TRUE(chosen.candidate);
    EXPECT_EQ(chosen.opening_of, 0u);
    EXPECT_TRUE(chosen.treated_as_separate);
    EXPECT_GT(chosen.gain_ms, 0.0);
    EXPECT_TRUE(contains(e.reason, "treated as a separate device as asked")) << e.reason;
    ASSERT_EQ(plan.openings.size(), 1u);
    EXPECT_TRUE(contains(plan.openings[0], "treated as separate devices as asked"))
        << plan.openings[0];
    EXPECT_TRUE(plan.openings_are_separate);
    const auto json = to_json(plan);
    EXPECT_TRUE(json["openings_are_separate"].get<bool>());
    EXPECT_TRUE(json["tasks"][0]["devices"][e.chosen]["treated_as_separate"].get<bool>());
    EXPECT_TRUE(contains(to_text(plan), "treated as separate devices as asked"));
}

// Two workers that are openings of one device (not the primary's): they share one capacity, and
// a task on one never moves to the other for a gain, however the costs change.
TEST_F(Placement, TwoOpeningsOfAWorkersDeviceShareItsCapacityAndNeverTradeATask) {
    physical = {0, 1, 1};
    // Each 1024x1024 pattern at 25 Hz needs 40% of a worker: two fit in the one device, not
    // the four that two separate workers would take.
    for (const std::size_t limit : {std::size_t{4096}, std::size_t{1}}) {
        detail::CostModel model(synthetic({}), infos());
        detail::PlacementOptions options;
        options.exhaustive_limit = limit;
        detail::Placer placer(model, options);
        std::vector<detail::PlacementTask> tasks;
        for (int i = 0; i < 5; ++i) {
            tasks.push_back(task("t" + std::to_string(i), 1024, 25.0));
        }
        const auto plan = placer.decide(tasks, devices());
        EXPECT_EQ(plan.devices[0].tasks.size(), 3u) << to_text(plan);
        EXPECT_EQ(plan.devices[1].tasks.size() + plan.devices[2].tasks.size(), 2u) << to_text(plan);
        for (const auto& d : plan.devices) {
            if (!d.primary) {
                EXPECT_LE(d.device_load_fraction, options.capacity + 1e-9) << to_text(plan);
                EXPECT_FALSE(d.over_capacity);
            }
        }
        EXPECT_EQ(plan.devices[1].shares_with, std::vector<std::uint32_t>{2});
        EXPECT_DOUBLE_EQ(plan.devices[1].device_load_fraction,
                         plan.devices[1].load_fraction + plan.devices[2].load_fraction);
    }

    detail::CostModel model(synthetic({{20.0}, {1.0}, {1.0}}), infos());
    detail::Placer placer(model);
    const std::vector<detail::PlacementTask> tasks = {task("mirror", 512)};
    const auto first = placer.decide(tasks, devices());
    const auto on = first.tasks[0].chosen;
    ASSERT_NE(on, 0u) << to_text(first);
    const std::uint32_t other = on == 1 ? 2 : 1;
    std::mt19937 random(7);
    auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(random);
    };
    for (int round = 0; round < 40; ++round) {
        // The other opening looks far cheaper to run and to deliver from (by more than the
        // margin, 8 ms).
        (void)model.observe("mirror", on, Stage::Execute, uniform(3.0, 8.0));
        (void)model.observe("mirror", on, Stage::Delivery, uniform(12.0, 20.0));
        (void)model.observe("mirror", other, Stage::Execute, uniform(0.01, 0.1));
        (void)model.observe("mirror", other, Stage::Delivery, uniform(0.001, 0.01));
        const auto plan = placer.decide(tasks, devices());
        const auto& e = plan.tasks[0];
        ASSERT_EQ(e.chosen, on) << to_text(plan);
        const auto& d = e.devices[other];
        EXPECT_FALSE(d.candidate);
        EXPECT_EQ(d.opening_of, on);
        EXPECT_TRUE(contains(e.reason, "dapter " + std::to_string(other) +
                                           " is an opening of the same device as adapter " +
                                           std::to_string(on) +
                                           ", where the task runs: moving there frees nothing"))
            << e.reason;
    }
    // A request for any worker does not hop between the openings either.
    detail::Placer requested(model);
    const std::vector<detail::PlacementTask> any = {task("mirror", 512, 30.0, parse("worker"))};
    const auto start = requested.decide(any, devices()).tasks[0].chosen;
    for (int round = 0; round < 5; ++round) {
        EXPECT_EQ(requested.decide(any, devices()).tasks[0].chosen, start);
    }

    // Treated as separate (asked for), the cheaper opening takes it.
    auto set = devices();
    set.openings_are_separate = true;
    const auto plan = placer.decide(tasks, set);
    EXPECT_EQ(plan.tasks[0].chosen, other) << to_text(plan);
    EXPECT_TRUE(contains(plan.tasks[0].reason, "treated as a separate device as asked"))
        << plan.tasks[0].reason;
}

// Whatever the costs, requests and losses, no decision moves a task between two openings of one
// device for a gain (only a lost device's tasks move without one).
TEST_F(Placement, RandomScenariosNeverMoveATaskBetweenOpeningsForAGain) {
    std::mt19937 random(20261201);
    auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(random);
    };
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
    const std::vector<std::vector<std::uint32_t>> layouts = {{0, 0, 0}, {0, 1, 1}, {0, 0, 1}};
    const std::uint32_t sizes[] = {128, 256, 512, 1024};
    for (int scenario = 0; scenario < 60; ++scenario) {
        SCOPED_TRACE("scenario " + std::to_string(scenario));
        physical = layouts[static_cast<std::size_t>(scenario) % layouts.size()];
        SyntheticLink link;
        link.gbps = uniform(0.5, 50.0);
        link.latency_us = uniform(1.0, 500.0);
        detail::CostModel model(
            synthetic({{uniform(0.2, 5.0)}, {uniform(0.2, 5.0)}, {uniform(0.2, 5.0)}}, link),
            infos());
        detail::Placer placer(model);
        std::vector<detail::PlacementTask> tasks;
        for (int i = 0; i < 1 + pick(4); ++i) {
            tasks.push_back(task("t" + std::to_string(i), sizes[pick(4)], uniform(5.0, 60.0),
                                 pick(5) == 0 ? parse("worker") : PlacementRequest{}));
        }
        const auto set = devices();
        std::map<std::string, std::uint32_t> where;
        for (int round = 0; round < 12; ++round) {
            for (const auto& t : tasks) {
                const auto device = static_cast<std::uint32_t>(pick(3));
                (void)model.observe(t.name, device, Stage::Execute, uniform(0.05, 20.0));
                (void)model.observe(t.name, device, Stage::Delivery, uniform(0.01, 10.0));
            }
            const auto plan = placer.decide(tasks, set);
            for (const auto& t : plan.tasks) {
                if (t.request.kind == PlacementKind::Auto) {
                    EXPECT_FALSE(set.share_capacity(t.chosen, 0)) << to_text(t);
                }
                if (const auto it = where.find(t.task); it != where.end()) {
                    EXPECT_FALSE(t.moved && set.share_capacity(it->second, t.chosen))
                        << "moved between openings of one device: " << to_text(t);
                }
                where[t.task] = t.chosen;
            }
        }
    }
}

TEST(PlacementRequests, ParseWhatTheTasksFileTheRuntimeAndTheCliAccept) {
    EXPECT_EQ(parse("auto").kind, PlacementKind::Auto);
    EXPECT_EQ(parse("primary").kind, PlacementKind::Primary);
    EXPECT_EQ(parse("worker").kind, PlacementKind::Worker);
    EXPECT_FALSE(parse("worker").worker);
    EXPECT_EQ(parse("worker:1").worker, 1u);
    EXPECT_EQ(detail::to_string(parse("worker:1")), "worker:1");
    const auto device = parse("2");
    EXPECT_EQ(device.kind, PlacementKind::Device);
    EXPECT_EQ(device.adapter, 2u);
    EXPECT_EQ(detail::to_string(device), "2");
    const auto named = parse("device:llvm");
    EXPECT_EQ(named.kind, PlacementKind::Device);
    EXPECT_EQ(named.device, "llvm");
    EXPECT_FALSE(named.adapter);
    EXPECT_EQ(detail::to_string(named), "device:llvm");
    EXPECT_EQ(parse("device:1").adapter, 1u);
    for (const char* bad : {"gpu0", "", "-1", "worker:", "worker:x", "device:"}) {
        EXPECT_FALSE(detail::parse_placement(bad)) << bad;
    }
}

TEST(PlacementRequests, TasksWithImpossibleRatesAreRefused) {
    // Refused as the application's argument (InvalidArgument), not as a failure of Tandem's.
    const auto expect_refused = [](const detail::PlacementTask& spec) {
        try {
            detail::check_placement_task(spec);
            ADD_FAILURE() << "accepted a rate of " << spec.rate_hz << " Hz, width "
                          << spec.shape.width;
        } catch (const Error& e) {
            EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument) << e.what();
        }
    };
    detail::PlacementTask spec{"bad", {"pattern", 256, 256, 0, 0}, 0.0, {}};
    expect_refused(spec);
    spec.rate_hz = std::numeric_limits<double>::infinity();
    expect_refused(spec);
    spec.rate_hz = 30.0;
    EXPECT_NO_THROW(detail::check_placement_task(spec));
    spec.shape.width = 0;
    expect_refused(spec);
}

} // namespace
} // namespace tandem::test

namespace tandem::test {
namespace {

// Random profiles, task sets, requests and lost workers: whatever the numbers, the decision
// keeps the promises users depend on.
TEST_F(Placement, RandomScenariosKeepEveryPromise) {
    std::mt19937 random(20261130);
    auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(random);
    };
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
    const std::uint32_t sizes[] = {128, 256, 512, 1024};
    for (int scenario = 0; scenario < 150; ++scenario) {
        SyntheticLink link;
        link.gbps = uniform(0.5, 20.0);
        link.latency_us = uniform(5.0, 3000.0);
        link.sync_us = uniform(5.0, 500.0);
        const auto profile =
            synthetic({{uniform(0.2, 5.0)}, {uniform(0.2, 5.0)}, {uniform(0.2, 5.0)}}, link);
        detail::CostModel model(profile, infos());
        std::vector<detail::PlacementTask> tasks;
        const int count = 1 + pick(6);
        for (int i = 0; i < count; ++i) {
            PlacementRequest request;
            const int r = pick(10);
            if (r == 7) {
                request = parse("primary");
            } else if (r == 8) {
                request = parse("worker");
            } else if (r == 9) {
                request = PlacementRequest::on_adapter(static_cast<std::uint32_t>(pick(3)));
            }
            tasks.push_back(
                task("t" + std::to_string(i), sizes[pick(4)], uniform(5.0, 120.0), request));
        }
        auto set = devices();
        if (pick(5) == 0) {
            set.lost = {static_cast<std::uint32_t>(1 + pick(2))};
        }
        SCOPED_TRACE("scenario " + std::to_string(scenario));

        std::vector<double> objectives;
        for (const std::size_t limit : {std::size_t{4096}, std::size_t{1}}) {
            detail::PlacementOptions options;
            options.exhaustive_limit = limit;
            detail::Placer placer(model, options);
            const auto plan = placer.decide(tasks, set);
            bool overloaded = false;
            double objective = 0.0;
            for (std::size_t i = 0; i < tasks.size(); ++i) {
                const auto& t = plan.tasks[i];
                const auto& request = tasks[i].request;
                ASSERT_TRUE(t.chosen == 0 || (set.is_worker(t.chosen) && !set.is_lost(t.chosen)))
                    << to_text(t);
                const bool live_request = request.kind == PlacementKind::Device &&
                                          (*request.adapter == 0 || !set.is_lost(*request.adapter));
                if (request.kind == PlacementKind::Primary) {
                    EXPECT_EQ(t.chosen, 0u);
                } else if (live_request) {
                    EXPECT_EQ(t.chosen, *request.adapter) << to_text(t);
                } else if (request.kind == PlacementKind::Worker) {
                    EXPECT_NE(t.chosen, 0u) << to_text(t);
                }
                EXPECT_FALSE(t.reason.empty());
                const auto& chosen =
                    *std::find_if(t.devices.begin(), t.devices.end(),
                                  [&](const auto& d) { return d.device == t.chosen; });
                const bool automatic = request.kind == PlacementKind::Auto ||
                                       (request.kind == PlacementKind::Device && !live_request);
                objective += t.rate_hz *
                             (chosen.charge_ms + (automatic && t.chosen != 0 ? t.margin_ms : 0.0));
            }
            for (const auto& d : plan.devices) {
                if (d.primary || d.load_fraction <= options.capacity + 1e-9) {
                    continue;
                }
                // Only a manual placement may load a worker past its capacity.
                overloaded = true;
                bool manual = false;
                for (const auto& name : d.tasks) {
                    const auto& spec = *std::find_if(tasks.begin(), tasks.end(),
                                                     [&](const auto& s) { return s.name == name; });
                    manual = manual || spec.request.kind != PlacementKind::Auto;
                }
                EXPECT_TRUE(manual) << to_text(plan);
            }
            objectives.push_back(overloaded ? -1.0 : objective);
            if (limit > 1) {
                // Nothing changed, so nothing moves.
                const auto again = placer.decide(tasks, set);
                EXPECT_EQ(again.moves(), 0u) << to_text(plan) << to_text(again);
            }
        }
        if (objectives[0] >= 0.0 && objectives[1] >= 0.0) {
            EXPECT_LE(objectives[0], objectives[1] * (1.0 + 1e-9) + 1e-9)
                << "the exhaustive search found a worse placement than the greedy one";
        }
    }
}

} // namespace
} // namespace tandem::test
