// The pattern workload's output on a real device equals its CPU reference, byte for byte.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/resources.hpp"
#include "tandem/error.hpp"
#include "vk_fixture.hpp"
#include "workloads/pattern.hpp"
#include "workloads/workload.hpp"

namespace tandem::test {
namespace {

TEST(PatternReference, IsDeterministicAndAnimated) {
    const auto a = detail::pattern_reference(7, 33, 17);
    EXPECT_EQ(a, detail::pattern_reference(7, 33, 17));
    EXPECT_NE(a, detail::pattern_reference(8, 33, 17));
    ASSERT_EQ(a.size(), 33u * 17u * 4u);
    // Alpha is opaque; red is (x + g) & 255.
    EXPECT_EQ(a[3], 255);
    EXPECT_EQ(a[4 * 5], (5 + 7) & 255);
    EXPECT_EQ(detail::pattern_mismatch(a.data(), 7, 33, 17), -1);
    EXPECT_EQ(detail::pattern_mismatch(a.data(), 8, 33, 17), 0);
}

TEST(PatternReference, UsesLow32BitsOfTheGeneration) {
    EXPECT_EQ(detail::pattern_reference(5, 8, 8),
              detail::pattern_reference((std::uint64_t{1} << 32) + 5, 8, 8));
}

TEST(Workloads, EachTableHasTheBuiltInOnesAndOnlyWhatWasAddedToIt) {
    detail::WorkloadTable table;
    detail::WorkloadTable other;
    EXPECT_EQ(table.names(), std::vector<std::string>{"pattern"});
    table.add("mine", [](const detail::Device& device, const detail::WorkloadParams& params) {
        return std::make_unique<detail::PatternWorkload>(device, params);
    });
    EXPECT_EQ(table.names(), (std::vector<std::string>{"mine", "pattern"}));
    EXPECT_TRUE(static_cast<bool>(table.find("mine")));
    try {
        (void)other.find("mine");
        ADD_FAILURE() << "another table knew a workload added to this one";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'mine' is not known"), std::string::npos) << e.what();
        EXPECT_NE(e.hint().find("pattern"), std::string::npos) << e.hint();
    }
}

class PatternDevice : public VulkanTest {};

TEST_F(PatternDevice, DeviceOutputEqualsReferenceExactly) {
    detail::Device& device = open(0);
    for (auto [w, h] : {std::pair{64u, 64u}, std::pair{37u, 19u}, std::pair{1u, 1u}}) {
        detail::WorkloadParams params;
        params.task_name = "test";
        params.width = w;
        params.height = h;
        params.slots = 2;
        auto workload = std::make_unique<detail::PatternWorkload>(device, params);
        detail::ImageDesc image_desc;
        image_desc.width = w;
        image_desc.height = h;
        image_desc.usage = workload->target_usage() | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                           VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        image_desc.name = "pattern target";
        auto image = detail::create_image(device, image_desc);
        detail::BufferDesc buffer_desc;
        buffer_desc.size = std::uint64_t{w} * h * 4;
        buffer_desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        buffer_desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        buffer_desc.name = "pattern readback";
        auto buffer = detail::create_buffer(device, buffer_desc);

        for (std::uint64_t generation : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{300},
                                         (std::uint64_t{1} << 33) + 77}) {
            std::memset(buffer.mapped, 0xcd, buffer.size); // poison
            detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
                detail::WorkloadTarget target{
                    image.get(), image.view.get(), image.format, w, h, VK_IMAGE_LAYOUT_UNDEFINED};
                ASSERT_EQ(workload->record(cmd, 1, target, generation, {}), VK_SUCCESS);
                const auto out = workload->output();
                detail::image_barrier(cmd, image.get(), out.layout,
                                      VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, out.stage, out.access,
                                      VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
                VkBufferImageCopy region{};
                region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
                region.imageExtent = {w, h, 1};
                vkCmdCopyImageToBuffer(cmd, image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                       buffer.get(), 1, &region);
                detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT,
                                       VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                                       VK_ACCESS_2_HOST_READ_BIT);
            });
            detail::invalidate_buffer(device, buffer);
            const auto* px = static_cast<const std::uint8_t*>(buffer.mapped);
            EXPECT_EQ(detail::pattern_mismatch(px, generation, w, h), -1)
                << w << "x" << h << " generation " << generation;
        }
    }
}

} // namespace
} // namespace tandem::test
