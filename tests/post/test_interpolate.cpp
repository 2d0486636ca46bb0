// InterpolatePass on a real device, on a synthetic scene whose true in-between frames are known:
// a textured 32x32 square (near) moving 8 pixels per frame to the right over a textured,
// stationary background (far).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "post/interpolate.hpp"
#include "post/reference.hpp"
#include "post_rig.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_width = 96;
constexpr std::uint32_t k_height = 64;
constexpr int k_side = 32;
constexpr int k_top = 16;
constexpr int k_speed = 8; // pixels per frame, to the right
constexpr float k_far = 0.9f;
constexpr float k_near = 0.25f;

// Background: blue-dominant texture, fixed to the screen. Square: red-dominant texture, fixed to
// the square. A texel is the square's when its red exceeds its blue.
void background(int x, int y, std::uint8_t* p) {
    p[0] = static_cast<std::uint8_t>(20 + (x * 3) % 40);
    p[1] = static_cast<std::uint8_t>(60 + (y * 5) % 80);
    p[2] = static_cast<std::uint8_t>(160 + ((x + y) % 16) * 4);
    p[3] = 255;
}

void square(int u, int v, std::uint8_t* p) {
    p[0] = static_cast<std::uint8_t>(200 + (u * 7) % 50);
    p[1] = static_cast<std::uint8_t>(40 + (v * 3) % 60);
    p[2] = static_cast<std::uint8_t>(30 + ((u ^ v) & 7) * 4);
    p[3] = 255;
}

bool is_square(const std::uint8_t* p) {
    return p[0] > p[2];
}

struct Frame {
    detail::Rgba8Image color{k_width, k_height};
    std::vector<float> depth = std::vector<float>(k_width * k_height);
    std::vector<float> motion = std::vector<float>(k_width * k_height * 2); // RG32F
};

// The scene with the square's left edge at `left` (in pixels, possibly fractional), moving
// `speed` pixels per frame; motion vectors point one frame back. Box-filtered horizontally over
// 8 samples per texel: the square's texture is a grid of texel-sized cells carried with it, so
// an integer `left` renders each texel exactly.
Frame render(double left, int speed = k_speed) {
    constexpr int k_samples = 8;
    Frame f;
    for (int y = 0; y < static_cast<int>(k_height); ++y) {
        for (int x = 0; x < static_cast<int>(k_width); ++x) {
            const std::size_t i = static_cast<std::size_t>(y) * k_width + x;
            const bool rows = y >= k_top && y < k_top + k_side;
            std::array<int, 4> sum{};
            int covered = 0;
            for (int k = 0; k < k_samples; ++k) {
                const double xs = x + (k + 0.5) / k_samples;
                std::uint8_t texel[4];
                if (rows && xs >= left && xs < left + k_side) {
                    square(static_cast<int>(std::floor(xs - left)), y - k_top, texel);
                    ++covered;
                } else {
                    background(x, y, texel);
                }
                for (int c = 0; c < 4; ++c) {
                    sum[c] += texel[c];
                }
            }
            std::uint8_t* p =
                f.color.at(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y));
            for (int c = 0; c < 4; ++c) {
                p[c] = static_cast<std::uint8_t>((sum[c] + k_samples / 2) / k_samples);
            }
            const bool inside = 2 * covered > k_samples;
            f.depth[i] = inside ? k_near : k_far;
            f.motion[i * 2] = inside ? -static_cast<float>(speed) : 0.0f;
            f.motion[i * 2 + 1] = 0.0f;
        }
    }
    return f;
}

struct DeviceFrame {
    detail::Image color;
    detail::Image depth;
    detail::Image motion;

    [[nodiscard]] detail::FrameInputs inputs() const {
        return {{color.view.get()}, {depth.view.get()}, {motion.view.get()}};
    }
};

DeviceFrame upload(const detail::Device& device, const Frame& f) {
    return {upload_rgba8(device, f.color),
            upload_image(device, VK_FORMAT_R32_SFLOAT, k_width, k_height, f.depth.data(),
                         f.depth.size() * sizeof(float)),
            upload_image(device, VK_FORMAT_R32G32_SFLOAT, k_width, k_height, f.motion.data(),
                         f.motion.size() * sizeof(float))};
}

class InterpolateDevice : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }
};

TEST_F(InterpolateDevice, MovingSquareLandsAtTheMidpointOverUncoveredBackground) {
    detail::Device& device = open(0);
    const int left_a = 24;
    const Frame a = render(left_a);
    const Frame b = render(left_a + k_speed);
    const DeviceFrame da = upload(device, a);
    const DeviceFrame db = upload(device, b);
    const auto output = create_output(device, k_width, k_height);
    detail::InterpolatePass pass(device, {128, 128});

    for (const float t : {0.5f, 0.25f, 0.75f}) {
        detail::InterpolateParams params;
        params.t = t;
        const auto got = run_pass(device, output, [&](VkCommandBuffer cmd) {
            ASSERT_EQ(pass.record(cmd, 0, da.inputs(), db.inputs(), output.view.get(),
                                  {k_width, k_height}, params),
                      VK_SUCCESS);
        });
        const int left_t = left_a + static_cast<int>(std::lround(t * k_speed));
        const Frame truth = render(left_t);

        double sum_x = 0.0;
        double sum_y = 0.0;
        int count = 0;
        for (std::uint32_t y = 0; y < k_height; ++y) {
            for (std::uint32_t x = 0; x < k_width; ++x) {
                ASSERT_EQ(got.at(x, y)[3], 255) << x << "," << y << " not written";
                if (is_square(got.at(x, y))) {
                    sum_x += x;
                    sum_y += y;
                    ++count;
                }
            }
        }
        ASSERT_GT(count, 0);
        EXPECT_NEAR(count, k_side * k_side, k_side) << "t " << t;
        EXPECT_NEAR(sum_x / count, left_t + (k_side - 1) / 2.0, 1.0) << "t " << t;
        EXPECT_NEAR(sum_y / count, k_top + (k_side - 1) / 2.0, 1.0) << "t " << t;

        // Uncovered since A: where the square was in A and is not at t, the background shows.
        for (int y = k_top; y < k_top + k_side; ++y) {
            for (int x = left_a; x < left_t; ++x) {
                const auto* p =
                    got.at(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y));
                const auto* q =
                    truth.color.at(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y));
                EXPECT_FALSE(is_square(p)) << x << "," << y << " t " << t;
                EXPECT_EQ(std::memcmp(p, q, 4), 0) << x << "," << y << " t " << t;
            }
        }

        const double generated = detail::psnr(got, truth.color);
        const double blended = detail::psnr(detail::blend(a.color, b.color, t), truth.color);
        std::printf("[ psnr     ] t %.2f: interpolated %.2f dB, blend %.2f dB\n", t, generated,
                    blended);
        EXPECT_GE(generated, blended + 3.0) << "t " << t;
    }
}

// An odd speed: at t = 0.5 the square is half way between texels in the true frame, and the
// splats, rounded to whole texels, place it half a texel off. Still at the midpoint within one
// pixel, and far closer to the truth than the blend.
TEST_F(InterpolateDevice, OddSpeedLandsWithinHalfATexel) {
    detail::Device& device = open(0);
    constexpr int k_odd = 5;
    const Frame a = render(24, k_odd);
    const Frame b = render(24 + k_odd, k_odd);
    const Frame truth = render(24 + 0.5 * k_odd, k_odd);
    const DeviceFrame da = upload(device, a);
    const DeviceFrame db = upload(device, b);
    const auto output = create_output(device, k_width, k_height);
    detail::InterpolatePass pass(device, {k_width, k_height});
    const auto got = run_pass(device, output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(pass.record(cmd, 0, da.inputs(), db.inputs(), output.view.get(),
                              {k_width, k_height}, {}),
                  VK_SUCCESS);
    });
    double sum_x = 0.0;
    int count = 0;
    for (std::uint32_t y = 0; y < k_height; ++y) {
        for (std::uint32_t x = 0; x < k_width; ++x) {
            if (is_square(got.at(x, y))) {
                sum_x += x;
                ++count;
            }
        }
    }
    ASSERT_GT(count, 0);
    EXPECT_NEAR(sum_x / count, 24 + 0.5 * k_odd + (k_side - 1) / 2.0, 1.0);
    const double generated = detail::psnr(got, truth.color);
    const double blended = detail::psnr(detail::blend(a.color, b.color), truth.color);
    std::printf("[ psnr     ] odd speed t 0.50: interpolated %.2f dB, blend %.2f dB\n", generated,
                blended);
    EXPECT_GE(generated, blended + 3.0);
}

TEST_F(InterpolateDevice, ReversedDepthGivesTheSameFrame) {
    detail::Device& device = open(0);
    const Frame a = render(24);
    const Frame b = render(24 + k_speed);
    Frame ra = a;
    Frame rb = b;
    for (float& d : ra.depth) {
        d = 1.0f - d;
    }
    for (float& d : rb.depth) {
        d = 1.0f - d;
    }
    const DeviceFrame da = upload(device, a);
    const DeviceFrame db = upload(device, b);
    const DeviceFrame dra = upload(device, ra);
    const DeviceFrame drb = upload(device, rb);
    const auto output = create_output(device, k_width, k_height);
    detail::InterpolatePass pass(device, {k_width, k_height}, 2);
    const auto plain = run_pass(device, output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(pass.record(cmd, 0, da.inputs(), db.inputs(), output.view.get(),
                              {k_width, k_height}, {}),
                  VK_SUCCESS);
    });
    detail::InterpolateParams reversed;
    reversed.reversed_depth = true;
    const auto flipped = run_pass(device, output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(pass.record(cmd, 1, dra.inputs(), drb.inputs(), output.view.get(),
                              {k_width, k_height}, reversed),
                  VK_SUCCESS);
    });
    EXPECT_EQ(plain.pixels, flipped.pixels);
}

// Two records in one command buffer (two slots, other inputs first): the second one's result is
// untouched by the first's use of the pass's buffers, and synchronisation validation (on in
// this suite) sees the pass's own barriers order them.
TEST_F(InterpolateDevice, BackToBackRecordsShareTheIntermediatesSafely) {
    detail::Device& device = open(0);
    const DeviceFrame da = upload(device, render(24));
    const DeviceFrame db = upload(device, render(24 + k_speed));
    const DeviceFrame other_a = upload(device, render(40));
    const DeviceFrame other_b = upload(device, render(40 - k_speed));
    const auto output = create_output(device, k_width, k_height);
    const auto scratch = create_output(device, k_width, k_height);
    detail::InterpolatePass pass(device, {k_width, k_height}, 2);
    const auto alone = run_pass(device, output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(pass.record(cmd, 0, da.inputs(), db.inputs(), output.view.get(),
                              {k_width, k_height}, {}),
                  VK_SUCCESS);
    });
    const auto second = run_pass(device, output, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, scratch.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
        ASSERT_EQ(pass.record(cmd, 1, other_a.inputs(), other_b.inputs(), scratch.view.get(),
                              {k_width, k_height}, {}),
                  VK_SUCCESS);
        ASSERT_EQ(pass.record(cmd, 0, da.inputs(), db.inputs(), output.view.get(),
                              {k_width, k_height}, {}),
                  VK_SUCCESS);
    });
    EXPECT_EQ(second.pixels, alone.pixels);
}

// Half-float motion vectors (R16G16_SFLOAT). A strip of background whose vectors point off the
// screen in both frames is reached by neither warp: the hole beside a near square is filled from
// the far side, never with the square's colour.
TEST_F(InterpolateDevice, HolesBesideANearObjectAreFilledFromTheBackground) {
    detail::Device& device = open(0);
    constexpr std::uint16_t k_half_zero = 0x0000;
    constexpr std::uint16_t k_half_1000 = 0x63d0; // 1000.0
    const int strip_left = 40;
    const int strip_right = 44; // the square's left edge: it does not move here
    Frame f = render(strip_right);
    std::vector<std::uint16_t> motion(k_width * k_height * 2, k_half_zero);
    for (int y = 0; y < static_cast<int>(k_height); ++y) {
        for (int x = strip_left; x < strip_right; ++x) {
            motion[(static_cast<std::size_t>(y) * k_width + x) * 2] = k_half_1000;
        }
    }
    const DeviceFrame d{upload_rgba8(device, f.color),
                        upload_image(device, VK_FORMAT_R32_SFLOAT, k_width, k_height,
                                     f.depth.data(), f.depth.size() * sizeof(float)),
                        upload_image(device, VK_FORMAT_R16G16_SFLOAT, k_width, k_height,
                                     motion.data(), motion.size() * sizeof(std::uint16_t))};
    const auto output = create_output(device, k_width, k_height);
    detail::InterpolatePass pass(device, {k_width, k_height});
    const auto got = run_pass(device, output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(
            pass.record(cmd, 0, d.inputs(), d.inputs(), output.view.get(), {k_width, k_height}, {}),
            VK_SUCCESS);
    });
    // The background texture's range per channel (see background()).
    constexpr std::array<int, 3> k_low{20, 60, 160};
    constexpr std::array<int, 3> k_high{59, 139, 220};
    int worst = 0;
    for (std::uint32_t y = 0; y < k_height; ++y) {
        for (std::uint32_t x = 0; x < k_width; ++x) {
            const auto* p = got.at(x, y);
            const auto* q = f.color.at(x, y);
            ASSERT_EQ(p[3], 255) << x << "," << y << " not written";
            if (static_cast<int>(x) >= strip_left && static_cast<int>(x) < strip_right) {
                // Filled with background texels from around the hole, not the square's.
                for (int c = 0; c < 3; ++c) {
                    EXPECT_GE(p[c], k_low[c]) << x << "," << y << " channel " << c;
                    EXPECT_LE(p[c], k_high[c]) << x << "," << y << " channel " << c;
                    worst = std::max(worst, std::abs(static_cast<int>(p[c]) - q[c]));
                }
            } else {
                EXPECT_EQ(std::memcmp(p, q, 4), 0) << x << "," << y;
            }
        }
    }
    std::printf("[ fill     ] largest channel error in the filled strip: %d\n", worst);
}

TEST_F(InterpolateDevice, RefusesWhatItWasNotSetUpFor) {
    detail::Device& device = open(0);
    detail::InterpolatePass pass(device, {16, 16});
    const auto output = create_output(device, 16, 16);
    const detail::FrameInputs none{{output.view.get()}, {output.view.get()}, {output.view.get()}};
    detail::InterpolateParams bad_t;
    bad_t.t = 1.5f;
    detail::InterpolateParams bad_radius;
    bad_radius.fill_radius = detail::k_max_fill_radius + 1;
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        EXPECT_EQ(pass.record(cmd, 0, none, none, output.view.get(), {16, 17}, {}),
                  VK_ERROR_INITIALIZATION_FAILED);
        EXPECT_EQ(pass.record(cmd, 1, none, none, output.view.get(), {16, 16}, {}),
                  VK_ERROR_INITIALIZATION_FAILED);
        EXPECT_EQ(pass.record(cmd, 0, none, none, output.view.get(), {16, 16}, bad_t),
                  VK_ERROR_INITIALIZATION_FAILED);
        EXPECT_EQ(pass.record(cmd, 0, none, none, output.view.get(), {16, 16}, bad_radius),
                  VK_ERROR_INITIALIZATION_FAILED);
    });
}

} // namespace
} // namespace tandem::test
