// The application's own workload through the public API (tandem/workload.hpp): made on each
// device the task is prepared on with that device's Vulkan objects, its output delivered exact
// to the byte on the primary and on a worker; a record() that throws fails only its job, until
// too many in a row stop its task with the message; a factory that throws fails the preparation
// with it.
#include <cstring>
#include <span>
#include <stdexcept>

#include <gtest/gtest.h>

#include "core/resources.hpp"
#include "runtime_fixture.hpp"
#include "tandem/workload.hpp"

namespace tandem::test {
namespace {

// Clears the image to the RGBA8 colour in the submitted bytes (4 bytes), or throws when asked
// to (a first byte of 0xEE and a length of 1).
class ClearToBytes final : public Workload {
public:
    explicit ClearToBytes(const WorkerContext& context) : m_context(context) {}
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        if (job.bytes.size() == 1 && job.bytes[0] == std::byte{0xEE}) {
            throw std::runtime_error("the test asked this job to fail");
        }
        if (job.bytes.size() != 4) {
            throw std::invalid_argument("expected 4 bytes of colour");
        }
        EXPECT_EQ(job.extent.width, m_context.width);
        EXPECT_EQ(job.extent.height, m_context.height);
        EXPECT_LT(job.slot, m_context.slots);
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                              VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
        VkClearColorValue colour{};
        for (int c = 0; c < 4; ++c) {
            colour.float32[c] = static_cast<float>(std::to_integer<int>(job.bytes[c])) / 255.0f;
        }
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &colour, 1,
                             &range);
    }

private:
    WorkerContext m_context;
};

class ApplicationWorkloadTest : public RuntimeTest {
protected:
    static TaskDesc clear_task(const std::string& placement, std::vector<DeviceInfo>* made_on) {
        TaskDesc desc = pattern_task(placement, 40, 30);
        desc.name = "clear-" + placement;
        desc.workload = "(application)";
        desc.factory = [made_on](const WorkerContext& context) {
            EXPECT_NE(context.device, VK_NULL_HANDLE);
            EXPECT_NE(context.instance, VK_NULL_HANDLE);
            EXPECT_NE(context.physical_device, VK_NULL_HANDLE);
            EXPECT_TRUE(context.find_memory_type(~0u, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 0));
            context.set_name(VK_OBJECT_TYPE_DEVICE, reinterpret_cast<std::uint64_t>(context.device),
                             "named by the app");
            if (made_on != nullptr) {
                made_on->push_back(context.device_info);
            }
            return std::make_unique<ClearToBytes>(context);
        };
        return desc;
    }
};

TEST_F(ApplicationWorkloadTest, ItsOutputArrivesExactOnThePrimaryAndOnAWorker) {
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, 40, 30);
    for (const std::string placement : {"primary", "worker:0"}) {
        std::vector<DeviceInfo> made_on;
        const TaskId task = runtime->register_task(clear_task(placement, &made_on));
        ASSERT_EQ(made_on.size(), 1u);
        EXPECT_EQ(made_on[0].index, runtime->stats(task).device);
        for (std::uint8_t g = 1; g <= 4; ++g) {
            const std::byte colour[4] = {std::byte{static_cast<std::uint8_t>(10 * g)},
                                         std::byte{static_cast<std::uint8_t>(255 - g)},
                                         std::byte{static_cast<std::uint8_t>(g)}, std::byte{200}};
            ASSERT_TRUE(
                pump_until(*runtime, [&] { return runtime->submit(task, colour).accepted(); }));
            ASSERT_TRUE(
                pump_until(*runtime, [&] { return runtime->stats(task).newest_generation == g; }));
            auto lease = runtime->acquire(task);
            ASSERT_TRUE(lease);
            std::uint64_t v = 0;
            const auto px = read_back(*reader, *lease, v);
            runtime->release(*lease, v);
            ASSERT_EQ(px.size(), 40u * 30u * 4u);
            for (std::size_t i = 0; i < px.size(); i += 4) {
                ASSERT_EQ(std::memcmp(px.data() + i, colour, 4), 0)
                    << placement << " generation " << int{g} << " texel " << i / 4;
            }
        }
    }
}

// A record() that throws fails its job alone: the slot is reused, the next job runs and its
// output is exact, the worker and its other task carry on. Only max_consecutive_failures
// failures in a row stop the task, with the last sentence; a success in between starts the
// count again.
TEST_F(ApplicationWorkloadTest, ARecordThatThrowsFailsItsJobAloneUntilTooManyInARow) {
    RuntimeOptions options;
    options.max_consecutive_failures = 3;
    auto runtime = make_runtime("1", options);
    auto reader = make_reader(*runtime, 40, 30);
    const TaskId bad = runtime->register_task(clear_task("worker:0", nullptr));
    const TaskId good = runtime->register_task(pattern_task("worker:0"));
    const std::byte fail[1] = {std::byte{0xEE}};
    const std::byte colour[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
    const auto run = [&](std::span<const std::byte> bytes) {
        SubmitResult r;
        EXPECT_TRUE(pump_until(*runtime, [&] {
            r = runtime->submit(bad, bytes);
            return r.status != SubmitStatus::Busy;
        }));
        return r;
    };
    const auto jobs_done = [&] {
        const TaskStats s = runtime->stats(bad);
        return s.ready + s.superseded + s.failed_jobs;
    };
    // Two failures, then a success: not stopped, and the output is the good job's.
    for (int round = 0; round < 2; ++round) {
        const std::uint64_t before = jobs_done();
        ASSERT_TRUE(run(fail).accepted());
        ASSERT_TRUE(pump_until(*runtime, [&] { return jobs_done() > before; }));
    }
    TaskStats s = runtime->stats(bad);
    EXPECT_EQ(s.failed_jobs, 2u);
    EXPECT_NE(s.workload_error.find("the test asked this job to fail"), std::string::npos)
        << s.workload_error;
    EXPECT_FALSE(s.stopped);
    EXPECT_FALSE(s.worker_lost);
    const SubmitResult ok = run(colour);
    ASSERT_TRUE(ok.accepted()) << ok.reason;
    EXPECT_EQ(ok.generation, 3u);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(bad).ready == 1; }));
    auto lease = runtime->acquire(bad);
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease->generation, 3u);
    std::uint64_t v = 0;
    const auto px = read_back(*reader, *lease, v);
    runtime->release(*lease, v);
    for (std::size_t i = 0; i < px.size(); i += 4) {
        ASSERT_EQ(std::memcmp(px.data() + i, colour, 4), 0) << "texel " << i / 4;
    }
    // Three in a row stop it.
    for (int round = 0; round < 3; ++round) {
        const std::uint64_t before = jobs_done();
        ASSERT_TRUE(run(fail).accepted());
        ASSERT_TRUE(pump_until(*runtime, [&] { return jobs_done() > before; }));
    }
    s = runtime->stats(bad);
    EXPECT_TRUE(s.stopped);
    EXPECT_EQ(s.failed_jobs, 5u);
    const SubmitResult r = runtime->submit(bad, colour);
    EXPECT_EQ(r.status, SubmitStatus::Failed);
    EXPECT_EQ(r.error, TaskError::Stopped);
    EXPECT_NE(r.reason.find("the test asked this job to fail"), std::string::npos) << r.reason;
    // Its last output stays, and the worker and its other task carry on.
    EXPECT_TRUE(runtime->acquire(bad));
    ASSERT_TRUE(runtime->submit(good).accepted());
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(good).ready >= 1; }));
    EXPECT_FALSE(runtime->stats(good).worker_lost);
}

TEST_F(ApplicationWorkloadTest, AFactoryThatThrowsFailsThePreparationWithTheMessage) {
    auto runtime = make_runtime("1");
    TaskDesc desc = pattern_task("worker:0");
    desc.factory = [](const WorkerContext&) -> std::unique_ptr<Workload> {
        throw std::runtime_error("no pipeline for this device");
    };
    try {
        (void)runtime->register_task(desc);
        ADD_FAILURE() << "register_task did not throw";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("no pipeline for this device"), std::string::npos)
            << e.what();
    }
    const TaskId id = runtime->register_task_async(desc);
    ASSERT_TRUE(pump_until(*runtime, [&] { return !runtime->stats(id).preparing; }));
    EXPECT_NE(runtime->stats(id).preparation_error.find("no pipeline for this device"),
              std::string::npos);
    desc.factory = [](const WorkerContext&) { return std::unique_ptr<Workload>(); };
    EXPECT_THROW((void)runtime->register_task(desc), Error);
}

TEST_F(ApplicationWorkloadTest, AStandaloneRuntimeHandsOutThePrimarysVulkanObjects) {
    auto runtime = make_runtime("none");
    const PrimaryVulkan p = runtime->primary_vulkan();
    EXPECT_EQ(p.device, detail::RuntimeAccess::impl(*runtime).primary().handle());
    EXPECT_NE(p.instance, VK_NULL_HANDLE);
    EXPECT_NE(p.physical_device, VK_NULL_HANDLE);
    EXPECT_NE(p.queue, VK_NULL_HANDLE);
    EXPECT_TRUE(p.queue_mutex);
    RuntimeOptions options;
    options.workers = "none";
    options.virtual_devices = 1;
    Runtime standalone(options);
    const PrimaryVulkan s = standalone.primary_vulkan();
    EXPECT_NE(s.device, VK_NULL_HANDLE);
    EXPECT_NE(s.queue, VK_NULL_HANDLE);
    EXPECT_TRUE(s.queue_mutex);
    EXPECT_EQ(
        s.queue_family,
        detail::RuntimeAccess::impl(standalone).primary().queue(detail::QueueRole::Main).family());
}

} // namespace
} // namespace tandem::test
