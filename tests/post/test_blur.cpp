// BlurPass on a real device: a constant image stays exactly constant; one bright pixel spreads
// into a symmetric spot that keeps its energy and matches the CPU Gaussian.
#include <cmath>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "post/blur.hpp"
#include "post/reference.hpp"
#include "post_rig.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

class BlurDevice : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }
};

TEST_F(BlurDevice, ConstantImageStaysExactlyConstant) {
    detail::Device& device = open(0);
    const std::uint32_t w = 37;
    const std::uint32_t h = 23;
    detail::Rgba8Image flat(w, h);
    for (std::size_t i = 0; i < flat.pixels.size(); i += 4) {
        flat.pixels[i + 0] = 10;
        flat.pixels[i + 1] = 128;
        flat.pixels[i + 2] = 251;
        flat.pixels[i + 3] = 255;
    }
    const auto input = upload_rgba8(device, flat);
    const auto output = create_output(device, w, h);
    detail::BlurPass blur(device, {64, 64});
    for (std::uint32_t radius : {0u, 1u, 3u, 9u}) {
        const auto got = run_pass(device, output, [&](VkCommandBuffer cmd) {
            ASSERT_EQ(
                blur.record(cmd, 0, {input.view.get()}, output.view.get(), {w, h}, {radius, 0.0f}),
                VK_SUCCESS);
        });
        EXPECT_EQ(got.pixels, flat.pixels) << "radius " << radius;
    }
}

TEST_F(BlurDevice, BrightPixelSpreadsSymmetricallyAndKeepsItsEnergy) {
    detail::Device& device = open(0);
    const std::uint32_t n = 33;
    const std::uint32_t c = 16;
    detail::Rgba8Image dot(n, n);
    for (std::size_t i = 0; i < dot.pixels.size(); i += 4) {
        dot.pixels[i + 3] = 255;
    }
    dot.at(c, c)[0] = 255;
    dot.at(c, c)[1] = 255;
    dot.at(c, c)[2] = 255;
    const auto input = upload_rgba8(device, dot);
    const auto output = create_output(device, n, n);
    detail::BlurPass blur(device, {n, n});
    const detail::BlurParams params{4, 1.5f};
    const auto got = run_pass(device, output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(blur.record(cmd, 0, {input.view.get()}, output.view.get(), {n, n}, params),
                  VK_SUCCESS);
    });

    // The separable kernel, as the CPU computes it.
    std::vector<double> kernel(2 * params.radius + 1);
    double total = 0.0;
    for (int i = -4; i <= 4; ++i) {
        kernel[i + 4] = std::exp(-0.5 * i * i / (1.5 * 1.5));
        total += kernel[i + 4];
    }
    double energy = 0.0;
    for (std::uint32_t y = 0; y < n; ++y) {
        for (std::uint32_t x = 0; x < n; ++x) {
            const std::uint8_t* p = got.at(x, y);
            ASSERT_EQ(p[3], 255) << x << "," << y; // written: the poison has alpha 128
            EXPECT_EQ(p[0], p[1]);
            EXPECT_EQ(p[0], p[2]);
            const int dx = static_cast<int>(x) - static_cast<int>(c);
            const int dy = static_cast<int>(y) - static_cast<int>(c);
            // Mirror images in both axes and the diagonal are the same value, exactly.
            EXPECT_EQ(p[0], got.at(c - dx, y)[0]) << x << "," << y;
            EXPECT_EQ(p[0], got.at(x, c - dy)[0]) << x << "," << y;
            EXPECT_EQ(p[0], got.at(c + dy, c + dx)[0]) << x << "," << y;
            double expected = 0.0;
            if (std::abs(dx) <= 4 && std::abs(dy) <= 4) {
                expected = 255.0 * kernel[dx + 4] * kernel[dy + 4] / (total * total);
            }
            EXPECT_NEAR(p[0], expected, 1.0) << x << "," << y;
            energy += p[0];
        }
    }
    // 81 texels each rounded to a whole level: the sum stays within half a level of each of
    // them (lavapipe rounds to nearest and lands within 3%; Vulkan lets a GPU convert to UNORM
    // within 0.6 of a level, and the H100's sum was 9 below 255).
    EXPECT_NEAR(energy, 255.0, 0.5 * 81);
}

// Two records in one command buffer share the intermediate: the second result is the one a
// record alone gives, and synchronisation validation sees no hazard between them.
TEST_F(BlurDevice, BackToBackRecordsShareTheIntermediateSafely) {
    detail::Device& device = open(0);
    detail::Rgba8Image first(20, 20);
    detail::Rgba8Image second(20, 20);
    for (std::size_t i = 0; i < first.pixels.size(); ++i) {
        first.pixels[i] = static_cast<std::uint8_t>((i * 37) % 251);
        second.pixels[i] = static_cast<std::uint8_t>((i * 11) % 253);
    }
    const auto in_first = upload_rgba8(device, first);
    const auto in_second = upload_rgba8(device, second);
    const auto output = create_output(device, 20, 20);
    const auto scratch = create_output(device, 20, 20);
    detail::BlurPass blur(device, {20, 20}, 2);
    const auto alone = run_pass(device, output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(blur.record(cmd, 0, {in_second.view.get()}, output.view.get(), {20, 20}, {3}),
                  VK_SUCCESS);
    });
    const auto after = run_pass(device, output, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, scratch.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
        ASSERT_EQ(blur.record(cmd, 1, {in_first.view.get()}, scratch.view.get(), {20, 20}, {5}),
                  VK_SUCCESS);
        ASSERT_EQ(blur.record(cmd, 0, {in_second.view.get()}, output.view.get(), {20, 20}, {3}),
                  VK_SUCCESS);
    });
    EXPECT_EQ(after.pixels, alone.pixels);
}

TEST_F(BlurDevice, RefusesSizesBeyondItsCapacity) {
    detail::Device& device = open(0);
    detail::BlurPass blur(device, {16, 16});
    const auto output = create_output(device, 16, 16);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        EXPECT_EQ(blur.record(cmd, 0, {output.view.get()}, output.view.get(), {17, 16}, {}),
                  VK_ERROR_INITIALIZATION_FAILED);
        EXPECT_EQ(blur.record(cmd, 1, {output.view.get()}, output.view.get(), {16, 16}, {}),
                  VK_ERROR_INITIALIZATION_FAILED);
        EXPECT_EQ(blur.record(cmd, 0, {output.view.get()}, output.view.get(), {16, 16},
                              {detail::k_max_blur_radius + 1, 0.0f}),
                  VK_ERROR_INITIALIZATION_FAILED);
    });
}

} // namespace
} // namespace tandem::test
