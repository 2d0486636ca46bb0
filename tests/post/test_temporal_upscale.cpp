// TemporalUpscalePass on a real device: frames point-sampled from a known output-size image
// with the jitter cycle of tandem::temporal_jitter, as a renderer samples a scene. A still image
// is the output-size image itself after one cycle; a square moving across a still background,
// with its motion vectors, stays ahead of the bilinear upscale of the same frames; a texel whose
// history shows a surface the frame's depths no longer have starts again from the frame.
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "post/reference.hpp"
#include "post/temporal_upscale.hpp"
#include "post_rig.hpp"
#include "tandem/post.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_in_w = 32;
constexpr std::uint32_t k_in_h = 24;
constexpr std::uint32_t k_out_w = 64;
constexpr std::uint32_t k_out_h = 48;

// An output-size image of random colour blocks (1 to 3 texels: finer than the input can hold).
detail::Rgba8Image random_blocks(std::uint32_t seed) {
    std::mt19937 rng(seed);
    detail::Rgba8Image image(k_out_w, k_out_h);
    for (std::uint32_t y = 0; y < k_out_h; ++y) {
        for (std::uint32_t x = 0; x < k_out_w; ++x) {
            std::uint8_t* p = image.at(x, y);
            if (x % 3 == 0 || x == 0 || y % 2 == 0) {
                for (int c = 0; c < 3; ++c) {
                    p[c] = static_cast<std::uint8_t>(rng() % 256);
                }
            } else {
                std::copy_n(image.at(x - 1, y), 3, p);
            }
            p[3] = 255;
        }
    }
    return image;
}

// The input-size frame a renderer makes of `truth` with `jitter` (texel x samples the output
// texel at 2x + 0.5 + 2 * jitter, which the 2x2 cycle puts on a texel centre).
detail::Rgba8Image sample(const detail::Rgba8Image& truth, TemporalJitter jitter) {
    detail::Rgba8Image frame(k_in_w, k_in_h);
    const auto ox = static_cast<std::uint32_t>(std::lround(2.0f * jitter.x + 0.5f));
    const auto oy = static_cast<std::uint32_t>(std::lround(2.0f * jitter.y + 0.5f));
    for (std::uint32_t y = 0; y < k_in_h; ++y) {
        for (std::uint32_t x = 0; x < k_in_w; ++x) {
            std::copy_n(truth.at(2 * x + ox, 2 * y + oy), 4, frame.at(x, y));
        }
    }
    return frame;
}

class TemporalUpscaleDevice : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }

    void SetUp() override {
        VulkanTest::SetUp();
        m_device = &open(0);
        m_pass.emplace(*m_device, VkExtent2D{k_in_w, k_in_h}, VkExtent2D{k_out_w, k_out_h});
        m_output.emplace(create_output(*m_device, k_out_w, k_out_h));
    }
    void TearDown() override { // before the device
        m_pass.reset();
        m_output.reset();
        VulkanTest::TearDown();
    }

    // One job: `frame` with per-texel `depth` and `motion` (input texels, pointing back).
    detail::Rgba8Image job(const detail::Rgba8Image& frame, const std::vector<float>& depth,
                           const std::vector<std::uint16_t>& motion, TemporalJitter jitter) {
        const detail::Image colour = upload_rgba8(*m_device, frame);
        const detail::Image z = upload_image(*m_device, VK_FORMAT_R32_SFLOAT, k_in_w, k_in_h,
                                             depth.data(), depth.size() * sizeof(float));
        const detail::Image mv = upload_image(*m_device, VK_FORMAT_R16G16_SFLOAT, k_in_w, k_in_h,
                                              motion.data(), motion.size() * sizeof(std::uint16_t));
        detail::TemporalUpscaleParams p;
        p.jitter_x = jitter.x;
        p.jitter_y = jitter.y;
        return run_pass(*m_device, *m_output, [&](VkCommandBuffer cmd) {
            ASSERT_EQ(m_pass->record(cmd, 0, {{colour.view.get()}, {z.view.get()}, {mv.view.get()}},
                                     {k_in_w, k_in_h}, m_output->view.get(), {k_out_w, k_out_h}, p),
                      VK_SUCCESS);
        });
    }

    static std::vector<float> flat_depth() {
        return std::vector<float>(std::size_t{k_in_w} * k_in_h, 0.5f);
    }
    static std::vector<std::uint16_t> still() {
        return std::vector<std::uint16_t>(std::size_t{k_in_w} * k_in_h * 2, 0); // half 0.0
    }

    detail::Device* m_device = nullptr;
    std::optional<detail::TemporalUpscalePass> m_pass;
    std::optional<detail::Image> m_output;
};

TEST_F(TemporalUpscaleDevice, TheJitterCycleVisitsEveryOutputTexelCentreAtTwoTimes) {
    std::set<std::pair<float, float>> seen;
    for (std::uint64_t f = 0; f < 4; ++f) {
        const TemporalJitter j = temporal_jitter(f, k_in_w, k_in_h, k_out_w, k_out_h);
        EXPECT_TRUE(std::abs(j.x) == 0.25f && std::abs(j.y) == 0.25f) << j.x << ", " << j.y;
        seen.insert({j.x, j.y});
    }
    EXPECT_EQ(seen.size(), 4u);
    const TemporalJitter again = temporal_jitter(4, k_in_w, k_in_h, k_out_w, k_out_h);
    const TemporalJitter first = temporal_jitter(0, k_in_w, k_in_h, k_out_w, k_out_h);
    EXPECT_EQ(again.x, first.x);
    EXPECT_EQ(again.y, first.y);
    for (std::uint64_t f = 0; f < 32; ++f) { // 1.5x: Halton, within half a texel
        const TemporalJitter j = temporal_jitter(f, 40, 30, 60, 45);
        EXPECT_LE(std::abs(j.x), 0.5f);
        EXPECT_LE(std::abs(j.y), 0.5f);
    }
}

TEST_F(TemporalUpscaleDevice, AStillImageIsTheOutputSizeImageAfterOneJitterCycle) {
    const detail::Rgba8Image truth = random_blocks(7);
    detail::Rgba8Image out;
    double first_db = 0.0;
    for (std::uint64_t f = 0; f < 4; ++f) {
        const TemporalJitter j = temporal_jitter(f, k_in_w, k_in_h, k_out_w, k_out_h);
        out = job(sample(truth, j), flat_depth(), still(), j);
        if (f == 0) {
            first_db = detail::psnr(out, truth);
        }
    }
    EXPECT_EQ(out.pixels, truth.pixels) << "every output texel was sampled once in the cycle";
    std::printf("[ psnr     ] still: first frame %.2f dB, after the cycle exact\n", first_db);
    // And it stays so on the next cycle.
    for (std::uint64_t f = 4; f < 8; ++f) {
        const TemporalJitter j = temporal_jitter(f, k_in_w, k_in_h, k_out_w, k_out_h);
        out = job(sample(truth, j), flat_depth(), still(), j);
        EXPECT_EQ(out.pixels, truth.pixels) << "frame " << f;
    }
}

TEST_F(TemporalUpscaleDevice, AMovingSquareOnAStillBackgroundBeatsBilinear) {
    const detail::Rgba8Image background = random_blocks(11);
    constexpr std::uint32_t k_side = 16; // output texels
    double ours = 0.0;
    double bilinear = 0.0;
    int measured = 0;
    for (std::uint64_t f = 0; f < 16; ++f) {
        // The square moves 2 output texels (1 input texel) right per frame; nearer than the
        // background, its texels' motion points back 1 input texel.
        const std::uint32_t left = 4 + 2 * static_cast<std::uint32_t>(f);
        detail::Rgba8Image truth = background;
        for (std::uint32_t y = 16; y < 16 + k_side; ++y) {
            for (std::uint32_t x = left; x < left + k_side; ++x) {
                std::uint8_t* p = truth.at(x, y);
                p[0] = static_cast<std::uint8_t>(200 + (x - left) * 3);
                p[1] = 40;
                p[2] = static_cast<std::uint8_t>(60 + (y - 16) * 8);
            }
        }
        const TemporalJitter j = temporal_jitter(f, k_in_w, k_in_h, k_out_w, k_out_h);
        std::vector<float> depth = flat_depth();
        std::vector<std::uint16_t> motion = still();
        for (std::uint32_t y = 0; y < k_in_h; ++y) {
            for (std::uint32_t x = 0; x < k_in_w; ++x) {
                const float cx = 2.0f * (static_cast<float>(x) + 0.5f + j.x);
                const float cy = 2.0f * (static_cast<float>(y) + 0.5f + j.y);
                if (cx >= static_cast<float>(left) && cx < static_cast<float>(left + k_side) &&
                    cy >= 16.0f && cy < 16.0f + k_side) {
                    const std::size_t i = std::size_t{y} * k_in_w + x;
                    depth[i] = 0.2f;
                    motion[2 * i] = 0xBC00; // half -1.0: one input texel back (left)
                }
            }
        }
        const detail::Rgba8Image frame = sample(truth, j);
        const detail::Rgba8Image out = job(frame, depth, motion, j);
        if (f >= 8) {
            ours += detail::psnr(out, truth);
            bilinear +=
                detail::psnr(detail::bilinear_upscale(frame, k_out_w, k_out_h, j.x, j.y), truth);
            ++measured;
        }
    }
    ours /= measured;
    bilinear /= measured;
    std::printf("[ psnr     ] moving square: temporal %.2f dB, bilinear %.2f dB\n", ours, bilinear);
    EXPECT_GT(ours, bilinear + 3.0);
}

TEST_F(TemporalUpscaleDevice, AnUncoveredSurfaceStartsAgainFromTheFrame) {
    // Four frames of a near square over the still background, then the square gone: where it
    // was, the history shows a surface nearer than anything in the frame, and is dropped.
    const detail::Rgba8Image background = random_blocks(5);
    detail::Rgba8Image covered = background;
    std::vector<float> near = flat_depth();
    for (std::uint32_t y = 8; y < 40; ++y) {
        for (std::uint32_t x = 8; x < 56; ++x) {
            std::uint8_t* p = covered.at(x, y);
            p[0] = 255;
            p[1] = 255;
            p[2] = 255;
        }
    }
    for (std::uint32_t y = 4; y < 20; ++y) {
        for (std::uint32_t x = 4; x < 28; ++x) {
            near[std::size_t{y} * k_in_w + x] = 0.1f;
        }
    }
    for (std::uint64_t f = 0; f < 4; ++f) {
        const TemporalJitter j = temporal_jitter(f, k_in_w, k_in_h, k_out_w, k_out_h);
        (void)job(sample(covered, j), near, still(), j);
    }
    const TemporalJitter j = temporal_jitter(4, k_in_w, k_in_h, k_out_w, k_out_h);
    const detail::Rgba8Image frame = sample(background, j);
    const detail::Rgba8Image out = job(frame, flat_depth(), still(), j);
    // No white left inside (the frame has none there), well away from the old square's border.
    int white = 0;
    for (std::uint32_t y = 12; y < 36; ++y) {
        for (std::uint32_t x = 12; x < 52; ++x) {
            const std::uint8_t* p = out.at(x, y);
            const std::uint8_t* b = background.at(x, y);
            white += (p[0] == 255 && p[1] == 255 && p[2] == 255 &&
                      !(b[0] == 255 && b[1] == 255 && b[2] == 255))
                         ? 1
                         : 0;
        }
    }
    EXPECT_EQ(white, 0) << "the square's history was kept where it is gone";
}

} // namespace
} // namespace tandem::test
