// LeaseReadback (tandem/readback.hpp) through the public API alone, on a standalone runtime with
// validation on: the pattern task is read back exactly, texel for texel, on the primary and on a
// worker (the adapter opened twice), each lease released with 0 right after its read, for more
// generations than the task has slots (so every slot is reused after such a release) and for
// two sizes in turn (the buffer grows); outputs of every other format a task can have come back
// as their bytes; the queue's mutex is taken around the copy's submit; and the runtime's
// validation layer reports nothing.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tandem/pattern.hpp"
#include "tandem/readback.hpp"
#include "tandem/runtime.hpp"

namespace tandem::test {
namespace {

// Validation as the other GPU tests have it: $TANDEM_VALIDATION, else synchronisation.
RuntimeOptions options(std::uint32_t virtual_devices) {
    RuntimeOptions o;
    const char* env = std::getenv("TANDEM_VALIDATION");
    o.validation = env != nullptr && *env != '\0' ? env : "sync";
    o.virtual_devices = virtual_devices;
    return o;
}

TaskDesc pattern_task(const std::string& placement, std::uint32_t width, std::uint32_t height) {
    TaskDesc desc;
    desc.name = "readback " + placement + " " + std::to_string(width);
    desc.width = width;
    desc.height = height;
    desc.placement = Placement::parse(placement).value();
    return desc;
}

// Submits and pumps until `task` has an output newer than generation `after`; its lease, or
// nothing after 30 s (a failure, not a hang).
std::optional<Lease> next_output(Runtime& runtime, TaskId task, std::uint64_t after) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
        (void)runtime.submit(task);
        runtime.pump();
        if (auto lease = runtime.acquire(task)) {
            if (lease->generation > after) {
                return lease.lease;
            }
            runtime.release(*lease, 0);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    return std::nullopt;
}

void expect_pattern(const ReadbackImage& image, const Lease& lease) {
    EXPECT_EQ(image.generation, lease.generation);
    EXPECT_EQ(image.device, lease.device);
    EXPECT_EQ(image.format, VK_FORMAT_R8G8B8A8_UNORM);
    EXPECT_EQ(image.extent.width, lease.extent.width);
    EXPECT_EQ(image.extent.height, lease.extent.height);
    ASSERT_EQ(image.texel_bytes, 4u);
    ASSERT_EQ(image.bytes.size(), std::size_t{lease.extent.width} * lease.extent.height * 4);
    std::uint64_t wrong = 0;
    for (std::uint32_t y = 0; y < image.extent.height; ++y) {
        for (std::uint32_t x = 0; x < image.extent.width; ++x) {
            const std::uint32_t expected =
                pattern_texel(image.generation, x, y, image.extent.width);
            if (image.texel(x, y) != expected && wrong++ == 0) {
                ADD_FAILURE() << "generation " << image.generation << " texel (" << x << ", " << y
                              << "): " << std::hex << image.texel(x, y) << ", expected "
                              << expected;
            }
        }
    }
    EXPECT_EQ(wrong, 0u) << "texels differ in generation " << image.generation;
}

class LeaseReadbackPlacement : public ::testing::TestWithParam<std::string> {};

TEST_P(LeaseReadbackPlacement, ReadsThePatternExactly) {
    const std::string placement = GetParam();
    Runtime runtime(options(2)); // lavapipe twice: a worker of the primary's kind
    if (placement == "worker") {
        ASSERT_FALSE(runtime.worker_devices().empty());
    }
    // Odd sizes, so that a row pitch taken for the width would show.
    const TaskId small = runtime.register_task(pattern_task(placement, 23, 9));
    const TaskId large = runtime.register_task(pattern_task(placement, 67, 45));
    for (const TaskId task : {small, large}) {
        if (placement == "primary") {
            EXPECT_EQ(runtime.stats(task).device, runtime.primary_device().index);
        } else {
            EXPECT_NE(runtime.stats(task).device, runtime.primary_device().index);
        }
    }
    {
        LeaseReadback readback(runtime);
        std::uint64_t last[2] = {0, 0};
        // More generations than the tasks' 3 slots: each slot is written again after a read
        // released with 0, and read again.
        for (int round = 0; round < 5; ++round) {
            for (int k = 0; k < 2; ++k) {
                const std::optional<Lease> lease =
                    next_output(runtime, k == 0 ? small : large, last[k]);
                ASSERT_TRUE(lease.has_value()) << "no output after generation " << last[k];
                const ReadbackImage image = readback.read(*lease);
                runtime.release(*lease, 0);
                expect_pattern(image, *lease);
                last[k] = lease->generation;
            }
        }
    }
    EXPECT_EQ(runtime.validation_messages(), 0u) << runtime.last_validation_message();
}

INSTANTIATE_TEST_SUITE_P(Placements, LeaseReadbackPlacement,
                         ::testing::Values(std::string("primary"), std::string("worker")),
                         [](const auto& param_info) { return param_info.param; });

// Clears the task's image to one colour: outputs of any format with known bytes.
class Clear final : public Workload {
public:
    explicit Clear(VkClearColorValue colour) : m_colour(colour) {}
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        VkImageMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
        barrier.dstStageMask = VK_PIPELINE_STAGE_2_CLEAR_BIT;
        barrier.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        barrier.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.image = job.image;
        barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.imageMemoryBarrierCount = 1;
        dep.pImageMemoryBarriers = &barrier;
        vkCmdPipelineBarrier2(job.cmd, &dep);
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &m_colour, 1,
                             &range);
    }

private:
    VkClearColorValue m_colour;
};

struct FormatCase {
    const char* name;
    VkFormat format;
    VkClearColorValue colour;        // each channel exact in the format
    std::vector<std::uint8_t> texel; // the bytes one texel of it holds
};

TEST(LeaseReadback, ReadsEveryFormatATaskCanHave) {
    const float r32 = 0.375f;
    std::vector<std::uint8_t> r32_bytes(4);
    std::memcpy(r32_bytes.data(), &r32, 4);
    const std::vector<FormatCase> cases = {
        {"RGBA8",
         VK_FORMAT_R8G8B8A8_UNORM,
         {{51.0f / 255.0f, 102.0f / 255.0f, 153.0f / 255.0f, 1.0f}},
         {51, 102, 153, 255}},
        {"BGRA8",
         VK_FORMAT_B8G8R8A8_UNORM,
         {{51.0f / 255.0f, 102.0f / 255.0f, 153.0f / 255.0f, 1.0f}},
         {153, 102, 51, 255}},
        {"R32F", VK_FORMAT_R32_SFLOAT, {{r32, 0.0f, 0.0f, 0.0f}}, r32_bytes},
        // Halves 0x3800, 0x3400, 0xC000, 0x3C00, little-endian.
        {"RGBA16F",
         VK_FORMAT_R16G16B16A16_SFLOAT,
         {{0.5f, 0.25f, -2.0f, 1.0f}},
         {0x00, 0x38, 0x00, 0x34, 0x00, 0xC0, 0x00, 0x3C}},
    };
    Runtime runtime(options(1));
    {
        LeaseReadback readback(runtime);
        for (const FormatCase& c : cases) {
            SCOPED_TRACE(c.name);
            TaskDesc desc = pattern_task("primary", 19, 7);
            desc.format = c.format;
            desc.factory = [colour = c.colour](const WorkerContext&) {
                return std::make_unique<Clear>(colour);
            };
            const TaskId task = runtime.register_task(desc);
            const std::optional<Lease> lease = next_output(runtime, task, 0);
            ASSERT_TRUE(lease.has_value());
            const ReadbackImage image = readback.read(*lease);
            runtime.release(*lease, 0);
            EXPECT_EQ(image.format, c.format);
            ASSERT_EQ(image.texel_bytes, c.texel.size());
            ASSERT_EQ(image.bytes.size(), std::size_t{19} * 7 * c.texel.size());
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < image.bytes.size(); ++i) {
                wrong += image.bytes[i] != c.texel[i % c.texel.size()];
            }
            EXPECT_EQ(wrong, 0u) << "first texel: " << int{image.bytes[0]} << " "
                                 << int{image.bytes[1]} << " " << int{image.bytes[2]} << " "
                                 << int{image.bytes[3]};
        }
    }
    EXPECT_EQ(runtime.validation_messages(), 0u) << runtime.last_validation_message();
}

// What an engine that shares the queue sees: the copy is submitted under the queue's mutex
// (PrimaryVulkan::queue_mutex, an embedding engine's own), so it waits while the engine holds it.
TEST(LeaseReadback, SubmitsUnderTheQueueMutex) {
    Runtime runtime(options(1));
    const TaskId task = runtime.register_task(pattern_task("primary", 32, 16));
    const std::optional<Lease> lease = next_output(runtime, task, 0);
    ASSERT_TRUE(lease.has_value());
    {
        LeaseReadback readback(runtime);
        const std::shared_ptr<std::mutex> queue_mutex = runtime.primary_vulkan().queue_mutex;
        ASSERT_NE(queue_mutex, nullptr);
        std::unique_lock<std::mutex> engine(*queue_mutex);
        std::optional<ReadbackImage> image;
        std::atomic<bool> finished{false};
        std::thread reader([&] {
            image = readback.read(*lease);
            finished.store(true);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        // Not a timing assertion: the read cannot have finished while the engine holds the lock.
        EXPECT_FALSE(finished.load());
        engine.unlock();
        reader.join();
        ASSERT_TRUE(image.has_value());
        runtime.release(*lease, 0);
        expect_pattern(*image, *lease);
    }
    EXPECT_EQ(runtime.validation_messages(), 0u) << runtime.last_validation_message();
}

} // namespace
} // namespace tandem::test
