// Task chains (tandem/input.hpp, Chains) through the public API: a task whose input is another
// task's output. On one device (the primary, a worker, over the pair's copy paths and zero copy)
// the consumer reads the producer's image in place: nothing is copied or sent for it (the task's
// input counters), and in matching mode the consumer's generation N holds exactly what the
// producer's generation N made, even when the producer ran ahead. A consumer placed auto goes
// with its producer; one placed on another worker reads what the producer's feed sent there on
// the pair's own path. Refusals at registration and reconfigure say what was wrong; a producer
// unregistered under a consumer fails the consumer's submits with a sentence. On lavapipe opened
// three times, under the fixture's validation (synchronisation validation in the test job).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "core/vk_check.hpp"
#include "runtime_fixture.hpp"
#include "tandem/post.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_width = 32;
constexpr std::uint32_t k_height = 24;

// The colour generation `g` of a producer fills its image with (RGBA8).
std::array<std::uint8_t, 4> colour(std::uint64_t g) {
    return {static_cast<std::uint8_t>(g * 37 % 251), static_cast<std::uint8_t>(g * 11 % 241),
            static_cast<std::uint8_t>(g % 256), 255};
}

// The producer's workload: clears its output to colour(generation).
class Fill final : public Workload {
public:
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
        b.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        b.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT | VK_ACCESS_2_MEMORY_READ_BIT;
        b.dstStageMask = VK_PIPELINE_STAGE_2_CLEAR_BIT;
        b.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        b.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED; // rewritten whole
        b.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.image = job.image;
        b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.imageMemoryBarrierCount = 1;
        dep.pImageMemoryBarriers = &b;
        vkCmdPipelineBarrier2(job.cmd, &dep);
        const auto c = colour(job.generation);
        const VkClearColorValue value{{c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f}};
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &value, 1,
                             &range);
    }
};

TaskDesc fill_task(const std::string& name, const std::string& placement) {
    TaskDesc d;
    d.name = name;
    d.width = k_width;
    d.height = k_height;
    d.placement = Placement::parse(placement).value();
    d.factory = [](const WorkerContext&) { return std::make_unique<Fill>(); };
    return d;
}

// A blur (tandem/post.hpp) of `producer`'s output: of a constant image, the same constant.
TaskDesc blur_of(TaskId producer, ChainMode mode, const std::string& placement = "auto") {
    TaskDesc d = blur_task("blur", k_width, k_height);
    d.inputs[0].producer = producer;
    d.inputs[0].chain = mode;
    d.placement = Placement::parse(placement).value();
    return d;
}

// The generation of the producer whose colour every pixel of `px` has; nullopt when they differ
// or match none of the first `up_to`.
std::optional<std::uint64_t> filled_with(const std::vector<std::uint8_t>& px, std::uint64_t up_to) {
    if (px.size() != std::size_t{k_width} * k_height * 4) {
        return std::nullopt;
    }
    for (std::size_t i = 4; i < px.size(); ++i) {
        if (px[i] != px[i % 4]) {
            return std::nullopt;
        }
    }
    for (std::uint64_t g = 1; g <= up_to; ++g) {
        const auto c = colour(g);
        if (std::memcmp(px.data(), c.data(), 4) == 0) {
            return g;
        }
    }
    return std::nullopt;
}

template <typename Fn>
std::string refusal(Fn&& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return e.what();
    }
    return "(accepted)";
}

class TaskChains : public RuntimeTest {
protected:
    // Lavapipe opened three times, the scheduler deciding in every pump and treating the openings
    // as separate devices: a chain placed auto moves between the two workers.
    std::unique_ptr<Runtime> make_moving_runtime() {
        RuntimeOptions options;
        options.scheduler.decision_interval = std::chrono::milliseconds(0);
        options.scheduler.openings_are_separate = true;
        auto runtime = make_runtime("auto", options);
        EXPECT_EQ(runtime->worker_devices().size(), 2u);
        return runtime;
    }

    // Observed costs that make the chain pay on worker `cheap` only (of the moving runtime's two
    // workers): dear on the primary and dearer on the other worker.
    static void price_chain(Runtime& runtime, TaskId producer, TaskId consumer,
                            std::uint32_t cheap) {
        const std::uint32_t w0 = runtime.worker_devices()[0].index;
        const std::uint32_t w1 = runtime.worker_devices()[1].index;
        for (const TaskId task : {producer, consumer}) {
            for (int k = 0; k < 9; ++k) {
                (void)runtime.observe_execute(task, runtime.primary_device().index, 400.0);
                (void)runtime.observe_execute(task, cheap == w0 ? w1 : w0, 200.0);
                (void)runtime.observe_execute(task, cheap, 0.1);
            }
        }
    }

    // Frames of: a producer submit, a consumer submit, a pump, and a check of each new consumer
    // output (generation N holds colour(N) in matching mode; a producer generation no newer than
    // the producer's newest, never going back, in newest mode), until the consumer published
    // `outputs` more. Returns the outputs checked.
    int run_chain(Runtime& runtime, TaskId producer, TaskId consumer, ChainMode mode,
                  std::uint64_t outputs) {
        harness::LeaseReader reader(runtime, 2, k_width, k_height);
        std::uint64_t produced = runtime.stats(producer).accepted;
        std::uint64_t consumed = runtime.stats(consumer).accepted;
        outputs += runtime.stats(consumer).ready;
        std::uint64_t shown = 0;
        std::uint64_t last_read = 0;
        int checked = 0;
        // Checks the consumer's newest output where it is newer than the one checked last: true
        // when there was an output to lease.
        const auto check_newest = [&] {
            auto lease = runtime.acquire(consumer);
            if (!lease) {
                return false;
            }
            std::uint64_t v = 0;
            if (lease->generation > shown) {
                const auto px = read_back(reader, *lease, v);
                const auto read = filled_with(px, produced);
                EXPECT_TRUE(read.has_value()) << "consumer generation " << lease->generation
                                              << " holds no producer generation's colour";
                if (read) {
                    if (mode == ChainMode::Matching) {
                        EXPECT_EQ(*read, lease->generation)
                            << "generation N reads its producer's generation N";
                    } else {
                        EXPECT_GE(*read, last_read) << "newest never goes back";
                        last_read = *read;
                    }
                    ++checked;
                }
                shown = lease->generation;
            }
            runtime.release(*lease, v);
            return true;
        };
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (runtime.stats(consumer).ready < outputs && !HasFailure() &&
               std::chrono::steady_clock::now() < deadline) {
            const SubmitResult p = runtime.submit(producer);
            EXPECT_NE(p.status, SubmitStatus::Failed) << p.reason;
            if (p.accepted()) {
                EXPECT_EQ(p.generation, produced + 1);
                produced = p.generation;
            }
            const SubmitResult c = runtime.submit(consumer);
            EXPECT_NE(c.status, SubmitStatus::Failed) << c.reason;
            if (c.accepted()) {
                EXPECT_EQ(c.generation, consumed + 1) << "generations are consecutive";
                consumed = c.generation;
                if (mode == ChainMode::Matching) {
                    EXPECT_LE(consumed, produced) << "a consumer never runs ahead of its producer";
                }
            }
            runtime.pump();
            if (!check_newest()) {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
        }
        // The last outputs may have been published (by Tandem's completion thread) after the
        // loop's last check: the newest is checked once more.
        runtime.pump();
        (void)check_newest();
        EXPECT_GE(runtime.stats(consumer).ready, outputs);
        return checked;
    }

    // Nothing was copied or sent for the consumer's input: every job read it in place.
    static void expect_in_place(Runtime& runtime, TaskId producer, TaskId consumer) {
        const TaskStats s = runtime.stats(consumer);
        EXPECT_EQ(s.input_copies, 0u) << "a chain's input is not copied on the primary";
        EXPECT_EQ(s.input_sends, 0u) << "a chain's input is not sent over a link";
        EXPECT_EQ(s.chained_reads, s.accepted) << "each job read its producer's image in place";
        EXPECT_EQ(s.input_path, "chained");
        EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
        EXPECT_EQ(s.device, runtime.stats(producer).device) << "placed with its producer";
        EXPECT_EQ(runtime.stats(producer).failed_jobs, 0u);
    }
};

struct ChainCase {
    std::string placement; // the producer's: "primary" or "worker"
    std::string path;      // a forced transfer path ("": the pair's best)
    ChainMode mode;
};

// A test name of `placement`, `path` and `mode` (letters, digits and '_').
std::string test_name(const std::string& placement, const std::string& path, ChainMode mode) {
    std::string name = placement + "_" + (path.empty() ? std::string("best") : path) + "_" +
                       (mode == ChainMode::Matching ? "matching" : "newest");
    for (char& c : name) {
        c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    return name;
}

std::string case_name(const ::testing::TestParamInfo<ChainCase>& info) {
    return test_name(info.param.placement, info.param.path, info.param.mode);
}

class TaskChainPlaces : public TaskChains, public ::testing::WithParamInterface<ChainCase> {};

TEST_P(TaskChainPlaces, OnOneDeviceNothingIsCopiedAndGenerationsStayConsistent) {
    const ChainCase& c = GetParam();
    RuntimeOptions options;
    options.transfer_path = c.path;
    auto runtime = make_runtime(c.placement == "primary" ? "none" : "1", options);
    const TaskId producer = runtime->register_task(fill_task("fill", c.placement));
    const TaskId consumer = runtime->register_task(blur_of(producer, c.mode));
    const int checked = run_chain(*runtime, producer, consumer, c.mode, 40);
    EXPECT_GE(checked, 5);
    expect_in_place(*runtime, producer, consumer);
    if (!c.path.empty()) {
        EXPECT_EQ(transfer_path_name(runtime->stats(producer)), c.path);
    }
    // A CPU worker on the host-imported path renders into the staging itself, and its chained
    // consumer samples it there (in GENERAL).
    const bool cpu_worker = adapters().size() > 1 && adapters()[1].info.type == "cpu";
    EXPECT_EQ(runtime->stats(producer).outputs_written_in_place,
              c.path == "host-imported" && cpu_worker);
    EXPECT_FALSE(runtime->placement().tasks.empty());
    for (const TaskPlacement& t : runtime->placement().tasks) {
        if (t.task == consumer) {
            // An auto consumer of one producer follows it: the scheduler places the two as a
            // unit (here the producer is placed by hand, so neither moves).
            EXPECT_TRUE(t.automatic);
            EXPECT_EQ(t.device, runtime->stats(producer).device);
            EXPECT_NE(t.reason.find("Placed with 'fill'"), std::string::npos) << t.reason;
        } else {
            EXPECT_FALSE(t.automatic) << t.name << ": placed by hand";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    PrimaryAndWorker, TaskChainPlaces,
    ::testing::Values(ChainCase{"primary", "", ChainMode::Matching},
                      ChainCase{"primary", "", ChainMode::Newest},
                      ChainCase{"worker", "", ChainMode::Matching},
                      ChainCase{"worker", "", ChainMode::Newest},
                      ChainCase{"worker", "host-copy", ChainMode::Matching},
                      ChainCase{"worker", "host-imported", ChainMode::Matching},
                      ChainCase{"worker", "host-imported", ChainMode::Newest},
                      ChainCase{"worker", "shared-memory", ChainMode::Matching}),
    case_name);

// A producer on a worker, its consumer placed on the primary: the consumer reads the output
// where the producer's hand-off delivered it (the slot's primary image), copying and sending
// nothing more, over every path the pair allows, in both modes.
class TaskChainDelivered : public TaskChains, public ::testing::WithParamInterface<ChainCase> {};

TEST_P(TaskChainDelivered, AConsumerOnThePrimaryReadsAWorkersOutputWhereItArrived) {
    const ChainCase& c = GetParam();
    RuntimeOptions options;
    options.transfer_path = c.path;
    auto runtime = make_runtime("1", options);
    const TaskId producer = runtime->register_task(fill_task("fill", "worker"));
    const TaskId consumer = runtime->register_task(blur_of(producer, c.mode, "primary"));
    const int checked = run_chain(*runtime, producer, consumer, c.mode, 40);
    EXPECT_GE(checked, 5);
    const TaskStats s = runtime->stats(consumer);
    EXPECT_EQ(s.input_copies, 0u) << "the delivered output is not copied again";
    EXPECT_EQ(s.input_sends, 0u);
    EXPECT_EQ(s.chained_reads, s.accepted);
    EXPECT_EQ(s.input_path, "chained");
    EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
    EXPECT_EQ(s.device, runtime->primary_device().index);
    EXPECT_NE(runtime->stats(producer).device, s.device);
    EXPECT_EQ(runtime->stats(producer).failed_jobs, 0u);
    if (!c.path.empty()) {
        EXPECT_EQ(transfer_path_name(runtime->stats(producer)), c.path);
    }
}

INSTANTIATE_TEST_SUITE_P(WorkerToPrimary, TaskChainDelivered,
                         ::testing::Values(ChainCase{"worker", "", ChainMode::Matching},
                                           ChainCase{"worker", "", ChainMode::Newest},
                                           ChainCase{"worker", "host-copy", ChainMode::Matching},
                                           ChainCase{"worker", "host-imported", ChainMode::Newest},
                                           ChainCase{"worker", "shared-memory",
                                                     ChainMode::Matching}),
                         case_name);

// A producer on one device and its consumer placed by hand on another worker: the producer's
// job copies its output for that worker and their pair's own path carries it there (the
// producer's feed), not the primary; generations stay exact over every path the pair allows,
// in both modes, and a producer on the primary feeds a worker the same way.
struct AcrossCase {
    std::string producer; // its placement
    std::string consumer; // its placement, another worker
    std::string path;     // a forced transfer path ("": the pairs' best)
    ChainMode mode;
};

class TaskChainAcross : public TaskChains, public ::testing::WithParamInterface<AcrossCase> {};

TEST_P(TaskChainAcross, AConsumerOnAnotherWorkerReadsWhatThePairsPathSentIt) {
    const AcrossCase& c = GetParam();
    RuntimeOptions options;
    options.transfer_path = c.path;
    auto runtime = make_runtime("1,2", options);
    const TaskId producer = runtime->register_task(fill_task("fill", c.producer));
    const TaskId consumer = runtime->register_task(blur_of(producer, c.mode, c.consumer));
    const int checked = run_chain(*runtime, producer, consumer, c.mode, 40);
    EXPECT_GE(checked, 5);
    const TaskStats s = runtime->stats(consumer);
    const TaskStats p = runtime->stats(producer);
    EXPECT_NE(s.device, p.device);
    EXPECT_NE(s.device, runtime->primary_device().index) << "the consumer runs on a worker";
    EXPECT_EQ(s.input_copies, 0u) << "nothing is copied on the primary for a chained input";
    EXPECT_EQ(s.input_sends, 0u) << "nothing goes over the primary's input links";
    EXPECT_EQ(s.chained_reads, s.accepted);
    EXPECT_EQ(s.input_path, "chained");
    EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
    EXPECT_EQ(p.failed_jobs, 0u) << p.workload_error;
    // The producer's feed to the consumer's worker carried every output the consumer read.
    ASSERT_EQ(p.feeds.size(), 1u);
    const TaskFeedStats& feed = p.feeds[0];
    EXPECT_EQ(feed.device, s.device);
    EXPECT_TRUE(feed.wanted);
    EXPECT_TRUE(feed.error.empty()) << feed.error;
    EXPECT_GE(feed.sent, s.ready) << "each output the consumer read was sent to its worker";
    if (!c.path.empty()) {
        EXPECT_EQ(feed.path, c.path) << "the pair of workers' own path";
        EXPECT_EQ(transfer_path_name(p), c.path);
    } else {
        EXPECT_FALSE(feed.path.empty());
    }
    // A CPU consumer reads a host-imported feed where it crosses, as it reads its inputs.
    bool cpu_consumer = false;
    for (const DeviceInfo& d : runtime->worker_devices()) {
        cpu_consumer = cpu_consumer || (d.index == s.device && d.type == "cpu");
    }
    EXPECT_EQ(feed.read_in_place, feed.path == "host-imported" && cpu_consumer);
    EXPECT_EQ(p.reconfigurations, 0u) << "prepared again with its feed, not reshaped";
}

std::string across_name(const ::testing::TestParamInfo<AcrossCase>& info) {
    return test_name(info.param.producer + "_to_" + info.param.consumer, info.param.path,
                     info.param.mode);
}

INSTANTIATE_TEST_SUITE_P(
    WorkerToWorker, TaskChainAcross,
    ::testing::Values(AcrossCase{"worker:0", "worker:1", "", ChainMode::Matching},
                      AcrossCase{"worker:0", "worker:1", "", ChainMode::Newest},
                      AcrossCase{"worker:0", "worker:1", "host-copy", ChainMode::Matching},
                      AcrossCase{"worker:0", "worker:1", "host-imported", ChainMode::Newest},
                      AcrossCase{"worker:0", "worker:1", "host-imported", ChainMode::Matching},
                      AcrossCase{"worker:0", "worker:1", "shared-memory", ChainMode::Matching},
                      AcrossCase{"primary", "worker:1", "", ChainMode::Matching}),
    across_name);

// Consumers on another worker come and go while the producer runs on: the producer is prepared
// again once, for the first; later ones reuse its feed, which is filled only while one is live;
// everything goes when the producer does.
TEST_F(TaskChains, ConsumersOnAnotherWorkerComeAndGoOnOneFeed) {
    auto runtime = make_runtime("1,2");
    const RuntimeResources before = runtime->resources();
    const TaskId producer = runtime->register_task(fill_task("fill", "worker:0"));
    int checked = 0;
    for (int round = 0; round < 40 && !HasFailure(); ++round) {
        // The first in step (before the producer's first output), the others its newest.
        const ChainMode mode = round == 0 ? ChainMode::Matching : ChainMode::Newest;
        const TaskId consumer = runtime->register_task(blur_of(producer, mode, "worker:1"));
        checked += run_chain(*runtime, producer, consumer, mode, 3); // each read exact
        const TaskStats p = runtime->stats(producer);
        ASSERT_EQ(p.feeds.size(), 1u);
        EXPECT_TRUE(p.feeds[0].wanted);
        ASSERT_EQ(runtime->unregister_task(consumer), TaskError::None);
        const TaskStats after = runtime->stats(producer);
        ASSERT_EQ(after.feeds.size(), 1u) << "one feed for every consumer on that worker";
        EXPECT_FALSE(after.feeds[0].wanted) << "no longer filled once no consumer reads it";
    }
    EXPECT_GE(checked, 20);
    // Its outputs go on reaching the primary, and only there (once the jobs taken while a
    // consumer was live have run).
    const auto idle = [&] {
        return pump_until(*runtime, [&] {
            const TaskStats p = runtime->stats(producer);
            return p.in_flight == 0 && p.accepted == p.ready + p.superseded;
        });
    };
    ASSERT_TRUE(idle());
    const std::uint64_t sent = runtime->stats(producer).feeds.at(0).sent;
    std::uint64_t accepted = 0;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        accepted += runtime->submit(producer).accepted() ? 1 : 0;
        return accepted >= 5;
    }));
    ASSERT_TRUE(idle());
    EXPECT_EQ(runtime->stats(producer).feeds.at(0).sent, sent);
    EXPECT_EQ(runtime->stats(producer).failed_jobs, 0u);
    ASSERT_EQ(runtime->unregister_task(producer), TaskError::None);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const RuntimeResources held = runtime->resources();
        return held.instances == 0 && held.retiring == 0 && held.tasks == 0;
    }));
    const RuntimeResources after = runtime->resources();
    ASSERT_EQ(after.devices.size(), before.devices.size());
    for (std::size_t i = 0; i < after.devices.size(); ++i) {
        EXPECT_EQ(after.devices[i].allocations, before.devices[i].allocations)
            << "adapter " << after.devices[i].device << ": the feed's images were freed";
    }
}

// A feed's path that fails in use (a fault in its link's recording: the path, not a device) is
// dropped for the pair, with its reason, and the producer is prepared again with the next one:
// its consumer on the other worker waits (Preparing, never Failed) and reads on, exact.
TEST_F(TaskChains, AFeedsPathThatFailsInUseIsDroppedAndTheNextCarriesIt) {
    auto runtime = make_runtime("1,2");
    // On the primary its own output needs no link: the only worker-side recording of a transfer
    // is the feed's.
    const TaskId producer = runtime->register_task(fill_task("fill", "primary"));
    const TaskId consumer =
        runtime->register_task(blur_of(producer, ChainMode::Newest, "worker:1"));
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Newest, 4), 1);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        return runtime->stats(producer).in_flight == 0 && runtime->stats(consumer).in_flight == 0;
    }));
    const TaskStats before = runtime->stats(producer);
    ASSERT_EQ(before.feeds.size(), 1u);
    const std::string first = before.feeds[0].path;
    detail::inject_vk_fault("vkEndCommandBuffer transfer worker", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(producer).accepted(); }));
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const TaskStats p = runtime->stats(producer);
        return p.feeds.size() == 1 && !p.feeds[0].path.empty() && p.feeds[0].path != first;
    })) << "the producer was not prepared again with another path";
    detail::clear_vk_faults();
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Newest, 8), 1);
    const TaskStats p = runtime->stats(producer);
    EXPECT_EQ(p.transfer_path, before.transfer_path) << "its own output's path did not fail";
    ASSERT_EQ(p.feeds.size(), 1u);
    bool dropped = false;
    for (const DroppedTransferPath& d : p.feeds[0].dropped_paths) {
        if (d.path == first) {
            dropped = true;
            EXPECT_NE(d.reason.find("failed in use"), std::string::npos) << d.reason;
            EXPECT_NE(d.reason.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos)
                << d.reason;
        }
    }
    EXPECT_TRUE(dropped) << first << " is not among the feed's dropped paths";
    EXPECT_EQ(runtime->stats(consumer).failed_jobs, 0u);
    EXPECT_FALSE(runtime->stats(consumer).worker_lost);
}

// Zero-copy's images are the path's own memory: when a feed's cannot be made (here, the
// worker's import of one fails), the path is dropped for the pair with the reason, that feed
// takes the next path and its consumer reads on, exact; a feed already made on zero-copy keeps
// its link.
TEST_F(TaskChains, AFeedWhoseImagesCannotBeMadeTakesThePairsNextPath) {
    auto runtime = make_runtime("1,2");
    // On the primary, a producer's own output needs no link: only its feed imports memory.
    const TaskId kept = runtime->register_task(fill_task("kept", "primary"));
    const TaskId kept_reader = runtime->register_task(blur_of(kept, ChainMode::Newest, "worker:1"));
    EXPECT_GE(run_chain(*runtime, kept, kept_reader, ChainMode::Newest, 2), 1);
    ASSERT_EQ(runtime->stats(kept).feeds.size(), 1u);
    ASSERT_EQ(runtime->stats(kept).feeds[0].path, "zero-copy")
        << "the pair's best path is the one whose images are its memory";

    const TaskId producer = runtime->register_task(fill_task("fill", "primary"));
    // Every import fails while the consumer is registered: its own output's images too (the
    // pair's other direction), and then those of the producer's feed to its worker.
    detail::inject_vk_fault("vkAllocateMemory import", VK_ERROR_OUT_OF_DEVICE_MEMORY, 1000);
    const TaskId consumer =
        runtime->register_task(blur_of(producer, ChainMode::Newest, "worker:1"));
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const TaskStats p = runtime->stats(producer);
        return p.feeds.size() == 1 && (!p.feeds[0].path.empty() || !p.feeds[0].error.empty());
    })) << "the producer was not prepared with its feed";
    detail::clear_vk_faults();
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Newest, 4), 1);
    const TaskStats p = runtime->stats(producer);
    ASSERT_EQ(p.feeds.size(), 1u);
    const TaskFeedStats& feed = p.feeds[0];
    EXPECT_TRUE(feed.error.empty()) << feed.error;
    EXPECT_FALSE(feed.path.empty());
    EXPECT_NE(feed.path, "zero-copy");
    bool dropped = false;
    for (const DroppedTransferPath& d : feed.dropped_paths) {
        if (d.path == "zero-copy") {
            dropped = true;
            EXPECT_NE(d.reason.find("feed's images"), std::string::npos) << d.reason;
            EXPECT_NE(d.reason.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos)
                << d.reason;
        }
    }
    EXPECT_TRUE(dropped) << "zero-copy is not among the feed's dropped paths";
    EXPECT_EQ(runtime->stats(consumer).failed_jobs, 0u);
    EXPECT_EQ(p.failed_jobs, 0u) << p.workload_error;
    // The feed made before keeps its link, and its consumer reads on.
    EXPECT_EQ(runtime->stats(kept).feeds.at(0).path, "zero-copy");
    EXPECT_GE(run_chain(*runtime, kept, kept_reader, ChainMode::Newest, 2), 1);
}

TEST_F(TaskChains, AMatchingConsumerReadsEveryGenerationItsProducerRanAheadWith) {
    auto runtime = make_runtime("1");
    TaskDesc fill = fill_task("fill", "worker");
    fill.slots = 3;
    const TaskId producer = runtime->register_task(fill);
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    // The producer runs ahead until every slot holds a generation the consumer has not read.
    std::uint64_t produced = 0;
    int busy = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (busy < 20 && std::chrono::steady_clock::now() < deadline) {
        const SubmitResult p = runtime->submit(producer);
        ASSERT_NE(p.status, SubmitStatus::Failed) << p.reason;
        if (p.accepted()) {
            produced = p.generation;
        } else {
            ++busy;
        }
        runtime->pump();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(produced, 3u) << "the producer keeps what its consumer has not read";
    // The consumer catches up, each generation exact; then the two go on in step.
    harness::LeaseReader reader(*runtime, 2, k_width, k_height);
    for (std::uint64_t g = 1; g <= produced; ++g) {
        SubmitResult c;
        ASSERT_TRUE(pump_until(*runtime, [&] {
            c = runtime->submit(consumer);
            return c.status != SubmitStatus::Busy;
        }));
        ASSERT_TRUE(c.accepted()) << c.reason;
        EXPECT_EQ(c.generation, g);
        ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(consumer).ready >= g; }));
        auto lease = runtime->acquire(consumer);
        ASSERT_TRUE(lease);
        std::uint64_t v = 0;
        EXPECT_EQ(filled_with(read_back(reader, *lease, v), produced), g);
        runtime->release(*lease, v);
    }
    // Nothing more to read: the consumer waits (Busy, with a reason), it never reads a blank.
    const SubmitResult ahead = runtime->submit(consumer);
    EXPECT_EQ(ahead.status, SubmitStatus::Busy);
    EXPECT_NE(ahead.reason.find("waits for generation 4"), std::string::npos) << ahead.reason;
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Matching, 12), 3);
    expect_in_place(*runtime, producer, consumer);
}

TEST_F(TaskChains, AChainOfThreeOnOneWorkerReadsInStepAndCopiesNothing) {
    auto runtime = make_runtime("1");
    const TaskId a = runtime->register_task(fill_task("fill", "worker"));
    const TaskId b = runtime->register_task(blur_of(a, ChainMode::Matching));
    TaskDesc second = blur_of(b, ChainMode::Matching);
    second.name = "blur-again";
    const TaskId c = runtime->register_task(second);
    harness::LeaseReader reader(*runtime, 2, k_width, k_height);
    std::uint64_t shown = 0;
    int checked = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (runtime->stats(c).ready < 30 && !HasFailure() &&
           std::chrono::steady_clock::now() < deadline) {
        for (const TaskId t : {a, b, c}) {
            const SubmitResult r = runtime->submit(t);
            EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
        }
        runtime->pump();
        if (auto lease = runtime->acquire(c)) {
            std::uint64_t v = 0;
            if (lease->generation > shown) {
                EXPECT_EQ(filled_with(read_back(reader, *lease, v), lease->generation),
                          lease->generation)
                    << "the third step's generation N holds the first's generation N";
                shown = lease->generation;
                ++checked;
            }
            runtime->release(*lease, v);
        }
    }
    EXPECT_GE(runtime->stats(c).ready, 30u);
    EXPECT_GE(checked, 5);
    expect_in_place(*runtime, a, b);
    expect_in_place(*runtime, b, c);
}

// An output kept on its worker (TaskDesc::keep_output_on_worker) never reaches the primary, and a
// consumer on the same worker reads it in place, in step, after the producer's work; a consumer
// on another device is refused at its submit with a sentence, and nothing it held stays held.
TEST_F(TaskChains, AnOutputKeptOnItsWorkerIsReadInPlaceThereAndRefusedElsewhere) {
    auto runtime = make_runtime("1");
    TaskDesc fill = fill_task("fill", "worker");
    fill.keep_output_on_worker = true;
    const TaskId producer = runtime->register_task(fill);
    const TaskId consumer =
        runtime->register_task(blur_of(producer, ChainMode::Matching, "worker"));
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Matching, 30), 5);
    const TaskStats made = runtime->stats(producer);
    EXPECT_TRUE(made.outputs_kept_on_worker);
    EXPECT_EQ(made.transfer_queued.count, 0u) << "a kept output was handed to the primary";
    expect_in_place(*runtime, producer, consumer);

    TaskDesc elsewhere = blur_of(producer, ChainMode::Newest, "primary");
    elsewhere.name = "blur on the primary";
    const TaskId refused = runtime->register_task(elsewhere);
    SubmitResult r;
    EXPECT_TRUE(pump_until(*runtime,
                           [&] {
                               static_cast<void>(runtime->submit(producer));
                               r = runtime->submit(refused);
                               return r.status == SubmitStatus::Failed;
                           }))
        << to_string(r.status) << ": " << r.reason;
    EXPECT_EQ(r.error, TaskError::ChainBroken);
    EXPECT_NE(r.reason.find("keeps its outputs on"), std::string::npos) << r.reason;
    EXPECT_EQ(runtime->stats(refused).accepted, 0u);
    runtime->unregister_task(refused);
    runtime->unregister_task(consumer);
    runtime->unregister_task(producer);
}

// Colour frame generation keeps its input for its next job: a chained input that does not come
// in GENERAL (an output handed to the primary, read in place on the worker) fails each job with a
// sentence saying what to chain from instead, and the runtime goes on.
TEST_F(TaskChains, ColourGenerationFromAnOutputNotKeptInGeneralFailsItsJobsWithASentence) {
    auto runtime = make_runtime("1");
    TaskDesc pattern = pattern_task("worker", k_width, k_height);
    pattern.name = "pattern";
    const TaskId producer = runtime->register_task(pattern);
    TaskDesc generation = interpolate_colour_task("generation", k_width, k_height);
    generation.inputs[0].producer = producer;
    generation.inputs[0].chain = ChainMode::Newest;
    generation.placement = Placement::parse("worker").value();
    const TaskId consumer = runtime->register_task(generation);
    EXPECT_TRUE(pump_until(*runtime, [&] {
        static_cast<void>(runtime->submit(producer));
        static_cast<void>(runtime->submit(consumer));
        return runtime->stats(consumer).failed_jobs > 0;
    }));
    const TaskStats stats = runtime->stats(consumer);
    EXPECT_NE(stats.workload_error.find("only in GENERAL"), std::string::npos)
        << stats.workload_error;
    EXPECT_EQ(runtime->stats(producer).failed_jobs, 0u);
    runtime->unregister_task(consumer);
    runtime->unregister_task(producer);
}

TEST_F(TaskChains, AMatchingConsumerUnregisteredNoLongerHoldsItsProducerBack) {
    auto runtime = make_runtime("1");
    const TaskId producer = runtime->register_task(fill_task("fill", "worker"));
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    std::uint64_t accepted = 0;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const SubmitResult p = runtime->submit(producer);
        accepted += p.accepted() ? 1 : 0;
        return p.status == SubmitStatus::Busy && runtime->stats(producer).ready == accepted;
    }));
    EXPECT_EQ(accepted, 3u) << "every slot holds a generation the consumer has not read";
    ASSERT_EQ(runtime->unregister_task(consumer), TaskError::None);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->submit(producer).accepted(); }));
}

// A consumer's job waiting on its job thread for a producer's output that will never come (the
// producer's job held on its worker, as one still queued there when the runtime stops) ends when
// the runtime stops: the consumer's worker stops first (the primary's context), and its thread,
// polling for the hand-off, must not keep the stop from returning.
TEST_F(TaskChains, AConsumerWaitingForItsProducerDoesNotHoldUpTheRuntimesStop) {
    auto runtime = make_runtime("1");
    const TaskId producer = runtime->register_task(fill_task("fill", "worker"));
    const TaskId consumer =
        runtime->register_task(blur_of(producer, ChainMode::Matching, "primary"));
    detail::RuntimeProbe(detail::RuntimeAccess::impl(*runtime)).hold_generation(producer, 1);
    ASSERT_TRUE(runtime->submit(producer).accepted());
    const SubmitResult read = runtime->submit(consumer);
    ASSERT_TRUE(read.accepted()) << read.reason;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    runtime->pump();
    ASSERT_EQ(runtime->stats(consumer).ready, 0u) << "the consumer did not wait: proves nothing";
    auto destroyed = std::async(std::launch::async, [&] { runtime.reset(); });
    if (destroyed.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        ADD_FAILURE() << "the runtime's destruction did not return within 60 s: the consumer's "
                         "job thread still waits for its producer";
        std::fflush(stdout);
        std::_Exit(1); // the stuck thread cannot be joined
    }
}

TEST_F(TaskChains, ANewestConsumerWaitsForItsProducersFirstOutput) {
    auto runtime = make_runtime("1");
    const TaskId producer = runtime->register_task(fill_task("fill", "worker"));
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Newest));
    const SubmitResult none = runtime->submit(consumer);
    EXPECT_EQ(none.status, SubmitStatus::Busy);
    EXPECT_NE(none.reason.find("has no output yet"), std::string::npos) << none.reason;
    EXPECT_EQ(runtime->stats(consumer).accepted, 0u);
    // Once the producer ran, a newest consumer may join; one in step may not.
    ASSERT_TRUE(runtime->submit(producer).accepted());
    const std::string why =
        refusal([&] { (void)runtime->register_task(blur_of(producer, ChainMode::Matching)); });
    EXPECT_NE(why.find("Input 'colour' of task 'blur' reads in step with its producer 'fill', "
                       "which already made 1 generation(s)"),
              std::string::npos)
        << why;
    const TaskId late = runtime->register_task(blur_of(producer, ChainMode::Newest));
    EXPECT_GE(run_chain(*runtime, producer, late, ChainMode::Newest, 6), 1);
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Newest, 6), 1);
}

TEST_F(TaskChains, RefusesABrokenChainAtRegistrationWithASentence) {
    auto runtime = make_runtime("1,2");
    const TaskId producer = runtime->register_task(fill_task("fill", "worker:0"));
    const std::uint32_t tasks = runtime->resources().tasks;

    // A producer that is not a live task of this runtime: unregistered, or another runtime's.
    const TaskId gone = runtime->register_task(fill_task("gone", "primary"));
    ASSERT_EQ(runtime->unregister_task(gone), TaskError::None);
    std::string why =
        refusal([&] { (void)runtime->register_task(blur_of(gone, ChainMode::Matching)); });
    EXPECT_NE(why.find("Input 'colour' of task 'blur' names task " + to_string(gone) +
                       " as its producer, which is not a live task of this runtime"),
              std::string::npos)
        << why;
    auto other = make_runtime("none");
    const TaskId foreign = other->register_task(fill_task("foreign", "primary"));
    EXPECT_EQ(runtime->stats(foreign).error, TaskError::UnknownTask)
        << "an id names a task only in the runtime that gave it";
    why = refusal([&] { (void)runtime->register_task(blur_of(foreign, ChainMode::Matching)); });
    EXPECT_NE(why.find("which is not a live task of this runtime"), std::string::npos) << why;

    // A format or size that is not the producer's output's.
    TaskDesc d = blur_of(producer, ChainMode::Matching);
    d.inputs[0].format = VK_FORMAT_R32_SFLOAT;
    why = refusal([&] { (void)runtime->register_task(d); });
    EXPECT_NE(why.find("Input 'colour' of task 'blur' has format R32F and its producer 'fill' "
                       "makes RGBA8"),
              std::string::npos)
        << why;
    d = blur_of(producer, ChainMode::Matching);
    d.inputs[0].width = 16;
    why = refusal([&] { (void)runtime->register_task(d); });
    EXPECT_NE(why.find("Input 'colour' of task 'blur' is 16x24 and its producer 'fill' makes "
                       "32x24"),
              std::string::npos)
        << why;

    EXPECT_EQ(runtime->resources().tasks, tasks) << "a refused registration leaves nothing";

    // A cycle, at reconfigure: the producer made to read its consumer, or a task itself.
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    TaskDesc loop = fill_task("fill", "worker:0");
    loop.inputs = {{"back", VK_FORMAT_R8G8B8A8_UNORM, 0, 0, consumer, ChainMode::Newest}};
    why = refusal([&] { (void)runtime->reconfigure(producer, loop); });
    EXPECT_NE(why.find("Input 'back' of task 'fill' would make a cycle: 'fill' -> 'blur' -> "
                       "'fill'"),
              std::string::npos)
        << why;
    TaskDesc self = blur_of(consumer, ChainMode::Newest);
    why = refusal([&] { (void)runtime->reconfigure(consumer, self); });
    EXPECT_NE(why.find("would make a cycle: 'blur' -> 'blur'"), std::string::npos) << why;
    EXPECT_EQ(runtime->stats(producer).reconfigurations, 0u);
    EXPECT_EQ(runtime->stats(consumer).reconfigurations, 0u);
    // The chain runs on, unchanged.
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Matching, 6), 1);

    // A workload that rewrites its inputs cannot take a chained one.
    TaskDesc interpolate = interpolate_task("interpolate", k_width, k_height);
    interpolate.inputs[0].producer = producer;
    interpolate.inputs[0].chain = ChainMode::Newest;
    why = refusal([&] { (void)runtime->register_task(interpolate); });
    EXPECT_NE(why.find("Task 'interpolate' (interpolate) has input 'colour' chained to another "
                       "task's output"),
              std::string::npos)
        << why;
}

TEST_F(TaskChains, AConsumerPlacedAutoGoesWithItsProducer) {
    auto runtime = make_runtime("1,2");
    const TaskId producer = runtime->register_task(fill_task("fill", "worker:1"));
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    EXPECT_EQ(runtime->stats(consumer).device, 2u);
    EXPECT_EQ(runtime->stats(producer).device, 2u);
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Matching, 8), 1);
    expect_in_place(*runtime, producer, consumer);
}

// A chain placed auto moves as a unit: the scheduler puts the producer and its consumer on one
// device and moves them together whenever another pays (here the costs are the application's
// own, priced so that the chain wants the worker it is not on). The producer leaves once its
// matching consumer took every generation it made where the two ran, the consumer follows once
// the producer runs on the new device, and in between its submits answer Preparing: no submit
// fails, no generation is skipped or read from another generation, nothing is copied.
TEST_F(TaskChains, AnAutoChainMovesAsAUnitAndReadsInStepAcrossItsMoves) {
    auto runtime = make_moving_runtime();
    ASSERT_FALSE(HasFailure());
    const std::uint32_t primary = runtime->primary_device().index;
    const std::uint32_t w0 = runtime->worker_devices()[0].index;
    const std::uint32_t w1 = runtime->worker_devices()[1].index;
    const TaskId producer = runtime->register_task(fill_task("fill", "auto"));
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    harness::LeaseReader reader(*runtime, 2, k_width, k_height);
    std::uint64_t produced = 0;
    std::uint64_t consumed = 0;
    std::uint64_t shown = 0;
    std::uint32_t shown_device = primary;
    int checked = 0;
    const auto frame = [&] {
        const SubmitResult p = runtime->submit(producer);
        EXPECT_NE(p.status, SubmitStatus::Failed) << p.reason;
        if (p.accepted()) {
            EXPECT_EQ(p.generation, produced + 1);
            produced = p.generation;
        }
        const SubmitResult c = runtime->submit(consumer);
        EXPECT_NE(c.status, SubmitStatus::Failed) << c.reason;
        if (c.accepted()) {
            EXPECT_EQ(c.generation, consumed + 1) << "generations are consecutive";
            consumed = c.generation;
        }
        runtime->pump();
        if (auto lease = runtime->acquire(consumer)) {
            EXPECT_GE(lease->generation, shown) << "went back";
            std::uint64_t v = 0;
            if (lease->generation > shown) {
                const auto read = filled_with(read_back(reader, *lease, v), produced);
                EXPECT_EQ(read, std::optional<std::uint64_t>(lease->generation))
                    << "generation N reads its producer's generation N";
                ++checked;
                shown = lease->generation;
                shown_device = lease->device;
            }
            runtime->release(*lease, v);
        }
    };
    constexpr int k_moves = 100;
    for (int move = 1; move <= k_moves && !HasFailure(); ++move) {
        const std::uint32_t from = runtime->stats(producer).device;
        const std::uint32_t to = from == w0 ? w1 : w0;
        price_chain(*runtime, producer, consumer, to);
        // Moved once the consumer's output from the new device is the one shown.
        ASSERT_TRUE(pump_until(*runtime,
                               [&] {
                                   frame();
                                   return runtime->stats(producer).device == to &&
                                          runtime->stats(consumer).device == to &&
                                          shown_device == to;
                               }))
            << "move " << move << " to adapter " << to << ": producer on "
            << runtime->stats(producer).device << " (preparing "
            << runtime->stats(producer).preparing << "), consumer on "
            << runtime->stats(consumer).device << " (preparing "
            << runtime->stats(consumer).preparing << "), shown from " << shown_device
            << "; last decision:\n"
            << runtime->placement().text;
    }
    EXPECT_GE(runtime->stats(producer).moves, std::uint64_t{k_moves});
    EXPECT_GE(runtime->stats(consumer).moves, std::uint64_t{k_moves});
    EXPECT_GE(checked, k_moves);
    expect_in_place(*runtime, producer, consumer);
    const PlacementReport report = runtime->placement();
    for (const TaskPlacement& t : report.tasks) {
        EXPECT_TRUE(t.automatic) << t.name;
    }
    EXPECT_NE(report.json.find("\"chain\": [\n        \"blur\""), std::string::npos) << report.json;
}

// A matching consumer one generation behind its producer, the two then submitted in step: the
// producer's move still ends (it makes nothing more where it was until its consumer read what it
// made there; it would otherwise stay ahead, and where it was, for as long as the two run), and
// the consumer reads every generation, each its own.
TEST_F(TaskChains, AChainMovesWhileItsConsumerRunsAGenerationBehind) {
    auto runtime = make_moving_runtime();
    ASSERT_FALSE(HasFailure());
    const std::uint32_t w0 = runtime->worker_devices()[0].index;
    const std::uint32_t w1 = runtime->worker_devices()[1].index;
    TaskDesc fill = fill_task("fill", "auto");
    fill.slots = 8;
    const TaskId producer = runtime->register_task(fill);
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    std::uint64_t produced = 0;
    std::uint64_t consumed = 0;
    bool waited = false; // the producer answered that it moves once its consumer read its own
    const auto submit_producer = [&] {
        const SubmitResult p = runtime->submit(producer);
        EXPECT_NE(p.status, SubmitStatus::Failed) << p.reason;
        if (p.accepted()) {
            EXPECT_EQ(p.generation, produced + 1);
            produced = p.generation;
        } else if (p.reason.find("once its consumers read its generation") != std::string::npos) {
            EXPECT_EQ(p.status, SubmitStatus::Preparing);
            waited = true;
        }
    };
    const auto submit_consumer = [&] {
        const SubmitResult c = runtime->submit(consumer);
        EXPECT_NE(c.status, SubmitStatus::Failed) << c.reason;
        if (c.accepted()) {
            EXPECT_EQ(c.generation, consumed + 1) << "generations are consecutive";
            consumed = c.generation;
        }
    };
    const auto on = [&](std::uint32_t device) {
        return runtime->stats(producer).device == device &&
               runtime->stats(consumer).device == device;
    };
    // On w0, the consumer caught up.
    price_chain(*runtime, producer, consumer, w0);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        if (consumed == produced) {
            submit_producer();
        }
        submit_consumer();
        return on(w0) && consumed == produced && consumed > 4;
    }));
    // The producer one ahead, then the two in step while the chain is priced onto w1.
    ASSERT_TRUE(pump_until(*runtime, [&] {
        submit_producer();
        return produced == consumed + 1;
    }));
    price_chain(*runtime, producer, consumer, w1);
    int frames = 0;
    const bool moved = pump_until(*runtime, [&] {
        ++frames;
        submit_producer();
        submit_consumer();
        return on(w1);
    });
    EXPECT_TRUE(moved) << "after " << frames << " frames the producer is on adapter "
                       << runtime->stats(producer).device << ", generation " << produced
                       << ", its consumer on " << runtime->stats(consumer).device << ", generation "
                       << consumed;
    // Every generation the consumer made read its producer's own.
    harness::LeaseReader reader(*runtime, 2, k_width, k_height);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        submit_consumer();
        return runtime->stats(consumer).newest_generation >= consumed && consumed >= produced;
    }));
    auto lease = runtime->acquire(consumer);
    ASSERT_TRUE(lease);
    std::uint64_t v = 0;
    EXPECT_EQ(filled_with(read_back(reader, *lease, v), produced),
              std::optional<std::uint64_t>(lease->generation));
    runtime->release(*lease, v);
    EXPECT_EQ(runtime->stats(consumer).failed_jobs, 0u);
}

// A consumer placed by hand pins its producer (the scheduler moves it no more) only while its
// shape reads it: unregistered, or reshaped to read nothing, it lets the producer go, and the
// producer's auto placement is the scheduler's again. Hundreds of such consumers come and go
// (two at a time, pinning one producer) without a pin outliving its consumer.
TEST_F(TaskChains, AHandPlacedConsumerPinsItsProducerOnlyWhileItReadsIt) {
    RuntimeOptions options;
    options.scheduler.decision_interval = std::chrono::milliseconds(0);
    auto runtime = make_runtime("1,2", options);
    const TaskId producer = runtime->register_task(fill_task("fill", "auto"));
    // Whether the scheduler places the producer, from a decision taken after the last change.
    const auto automatic = [&] {
        runtime->pump();
        for (const TaskPlacement& t : runtime->placement().tasks) {
            if (t.task == producer) {
                return std::optional<bool>(t.automatic);
            }
        }
        return std::optional<bool>();
    };
    EXPECT_EQ(automatic(), std::optional<bool>(true));
    for (int round = 0; round < 200 && !HasFailure(); ++round) {
        const TaskId a = runtime->register_task(blur_of(producer, ChainMode::Newest, "worker:0"));
        const TaskId b = runtime->register_task(blur_of(producer, ChainMode::Newest, "worker:1"));
        EXPECT_EQ(automatic(), std::optional<bool>(false)) << "round " << round;
        EXPECT_EQ(runtime->unregister_task(a), TaskError::None);
        EXPECT_EQ(automatic(), std::optional<bool>(false)) << "still read by the other";
        if (round % 2 == 0) {
            EXPECT_EQ(runtime->unregister_task(b), TaskError::None);
        } else {
            // Reshaped to read no producer: its pin goes with its old shape.
            TaskDesc alone = fill_task("fill again", "worker:1");
            EXPECT_EQ(runtime->reconfigure(b, alone), TaskError::None);
            EXPECT_EQ(automatic(), std::optional<bool>(true)) << "round " << round;
            EXPECT_EQ(runtime->unregister_task(b), TaskError::None);
        }
        EXPECT_EQ(automatic(), std::optional<bool>(true)) << "round " << round;
    }
    // The producer still runs and is read as before.
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    EXPECT_GE(run_chain(*runtime, producer, consumer, ChainMode::Matching, 6), 1);
}

TEST_F(TaskChains, AProducerUnregisteredUnderItsConsumerFailsItsSubmitsWithASentence) {
    RuntimeOptions options;
    options.scheduler.decision_interval = std::chrono::milliseconds(0);
    auto runtime = make_runtime("1", options);
    const TaskId producer = runtime->register_task(fill_task("fill", "worker"));
    const TaskId consumer = runtime->register_task(blur_of(producer, ChainMode::Matching));
    // Accepted jobs in flight when the producer goes: they still read what they hold.
    ASSERT_TRUE(runtime->submit(producer).accepted());
    ASSERT_TRUE(runtime->submit(consumer).accepted());
    ASSERT_TRUE(runtime->submit(producer).accepted());
    ASSERT_TRUE(runtime->submit(consumer).accepted());
    ASSERT_EQ(runtime->unregister_task(producer), TaskError::None);
    const SubmitResult r = runtime->submit(consumer);
    EXPECT_EQ(r.status, SubmitStatus::Failed);
    EXPECT_EQ(r.error, TaskError::ChainBroken);
    EXPECT_NE(r.reason.find("which was unregistered"), std::string::npos) << r.reason;
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(consumer).ready >= 2; }));
    harness::LeaseReader reader(*runtime, 2, k_width, k_height);
    auto lease = runtime->acquire(consumer);
    ASSERT_TRUE(lease);
    std::uint64_t v = 0;
    EXPECT_EQ(filled_with(read_back(reader, *lease, v), 2), lease->generation);
    runtime->release(*lease, v);
    EXPECT_EQ(runtime->stats(consumer).failed_jobs, 0u);
    // The consumer, placed auto, followed its producer; with the producer gone it stays where
    // it is (its submits fail wherever it runs: a move would only cost a preparation).
    const std::uint64_t decided = runtime->placement_decisions();
    ASSERT_TRUE(
        pump_until(*runtime, [&] { return runtime->placement_decisions() >= decided + 20; }));
    EXPECT_EQ(runtime->stats(consumer).moves, 0u);
    EXPECT_EQ(runtime->stats(consumer).devices.size(), 1u);
    bool explained = false;
    for (const TaskPlacement& t : runtime->placement().tasks) {
        if (t.task == consumer) {
            explained = true;
            EXPECT_FALSE(t.moved);
            EXPECT_NE(t.reason.find("Its producer 'fill' was unregistered"), std::string::npos)
                << t.reason;
        }
    }
    EXPECT_TRUE(explained) << runtime->placement().text;
    // The producer's objects go once its consumer's jobs let them go.
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->resources().instances == 1; }));
    ASSERT_EQ(runtime->unregister_task(consumer), TaskError::None);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const RuntimeResources held = runtime->resources();
        return held.instances == 0 && held.retiring == 0;
    }));
}

} // namespace
} // namespace tandem::test
