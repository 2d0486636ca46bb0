// Motion from colour alone (post/colour_motion.hpp) on a real device: a textured image moved by
// a known whole-texel step is found at that step with high confidence, a flat region gets no
// confidence and the blend, and the generated frame of a translated texture is the texture at
// the midpoint. The output does not depend on anything but the inputs, nor on another record
// sharing the pass.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/mix_hash.hpp"
#include "post/colour_motion.hpp"
#include "post/reference.hpp"
#include "post_rig.hpp"
#include "vk_fixture.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_width = 96;
constexpr std::uint32_t k_height = 64;
constexpr int k_margin = 16; // texels from the edges where a translation brings in the unseen

// A texture of smooth waves and per-texel grain, defined everywhere on the integer plane.
void texture(int x, int y, std::uint8_t* p) {
    const std::uint32_t grain =
        detail::mix32(static_cast<std::uint32_t>(x * 7919 + y * 104729 + 1000000));
    for (int c = 0; c < 3; ++c) {
        const double wave = 60.0 * std::sin(0.31 * x + 0.17 * y + 2.0 * c) +
                            40.0 * std::cos(0.13 * x - 0.29 * y + c);
        p[c] = static_cast<std::uint8_t>(std::clamp(
            128.0 + wave + static_cast<double>((grain >> (8 * c)) % 96) - 48.0, 0.0, 255.0));
    }
    p[3] = 255;
}

// The texture moved by (dx, dy): texel p shows the texture at p - (dx, dy).
detail::Rgba8Image moved(int dx, int dy) {
    detail::Rgba8Image image(k_width, k_height);
    for (int y = 0; y < static_cast<int>(k_height); ++y) {
        for (int x = 0; x < static_cast<int>(k_width); ++x) {
            texture(x - dx, y - dy,
                    image.at(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)));
        }
    }
    return image;
}

float from_half(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {
        const float v = std::ldexp(static_cast<float>(mantissa), -24);
        return sign != 0 ? -v : v;
    }
    const std::uint32_t bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    float f = 0.0f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// `bytes` of a device buffer, copied to the host.
std::vector<std::uint8_t> read_buffer(const detail::Device& device, VkBuffer buffer,
                                      VkDeviceSize bytes) {
    detail::BufferDesc desc;
    desc.size = bytes;
    desc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    desc.required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    desc.name = "colour motion test readback";
    detail::Buffer host = detail::create_buffer(device, desc);
    detail::submit_and_wait(device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
        const VkBufferCopy region{0, 0, bytes};
        vkCmdCopyBuffer(cmd, buffer, host.get(), 1, &region);
        detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                               VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    });
    detail::invalidate_buffer(device, host);
    std::vector<std::uint8_t> out(bytes);
    std::memcpy(out.data(), host.mapped, bytes);
    return out;
}

// Each frame's motion (x, y per texel, A's then B's) and confidence, after one record.
struct Fields {
    std::vector<float> motion;
    std::vector<float> confidence;

    [[nodiscard]] float mx(int frame, std::uint32_t x, std::uint32_t y) const {
        return motion[((frame * k_height + y) * k_width + x) * 2];
    }
    [[nodiscard]] float my(int frame, std::uint32_t x, std::uint32_t y) const {
        return motion[((frame * k_height + y) * k_width + x) * 2 + 1];
    }
    [[nodiscard]] float conf(int frame, std::uint32_t x, std::uint32_t y) const {
        return confidence[(frame * k_height + y) * k_width + x];
    }
};

class ColourMotionDevice : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }

    void SetUp() override {
        VulkanTest::SetUp();
        m_device = &open(0);
        m_pass.emplace(*m_device, VkExtent2D{128, 128});
        m_output.emplace(create_output(*m_device, k_width, k_height));
    }
    void TearDown() override {
        m_output.reset();
        m_pass.reset();
        VulkanTest::TearDown();
    }

    // The generated frame between `a` and `b` at t, with the fields behind it.
    detail::Rgba8Image generate(const detail::Rgba8Image& a, const detail::Rgba8Image& b,
                                Fields* fields = nullptr, float t = 0.5f) {
        const detail::Image da = upload_rgba8(*m_device, a);
        const detail::Image db = upload_rgba8(*m_device, b);
        detail::InterpolateParams params;
        params.t = t;
        const detail::Rgba8Image out = run_pass(*m_device, *m_output, [&](VkCommandBuffer cmd) {
            ASSERT_EQ(m_pass->record(cmd, 0, {da.view.get()}, {db.view.get()}, m_output->view.get(),
                                     {k_width, k_height}, params),
                      VK_SUCCESS);
        });
        if (fields != nullptr) {
            const std::size_t texels = std::size_t{k_width} * k_height * 2;
            const auto halves =
                read_buffer(*m_device, m_pass->motion().motion_buffer(), texels * 4);
            fields->motion.resize(texels * 2);
            for (std::size_t i = 0; i < texels * 2; ++i) {
                std::uint16_t h = 0;
                std::memcpy(&h, halves.data() + i * 2, 2);
                fields->motion[i] = from_half(h);
            }
            const auto conf =
                read_buffer(*m_device, m_pass->motion().confidence_buffer(), texels * 4);
            fields->confidence.resize(texels);
            std::memcpy(fields->confidence.data(), conf.data(), texels * 4);
        }
        return out;
    }

    detail::Device* m_device = nullptr;
    std::optional<detail::ColourInterpolatePass> m_pass;
    std::optional<detail::Image> m_output;
};

TEST_F(ColourMotionDevice, ATranslatedTextureIsFoundAtItsStepWithHighConfidence) {
    for (const auto& [dx, dy] : {std::pair{4, -2}, std::pair{-6, 2}, std::pair{12, 6}}) {
        Fields f;
        const detail::Rgba8Image out = generate(moved(0, 0), moved(dx, dy), &f);
        int far = 0;
        int confident = 0;
        int interior = 0;
        for (std::uint32_t y = k_margin; y < k_height - k_margin; ++y) {
            for (std::uint32_t x = k_margin; x < k_width - k_margin; ++x) {
                for (int frame = 0; frame < 2; ++frame) {
                    // Both point back one frame: B's to where its texel was in A, A's the
                    // same motion continued.
                    const float ex = std::abs(f.mx(frame, x, y) + static_cast<float>(dx));
                    const float ey = std::abs(f.my(frame, x, y) + static_cast<float>(dy));
                    far += ex > 0.5f || ey > 0.5f ? 1 : 0;
                    confident += f.conf(frame, x, y) >= 0.9f ? 1 : 0;
                    ++interior;
                }
            }
        }
        EXPECT_EQ(far, 0) << "step (" << dx << ", " << dy << ")";
        EXPECT_GE(confident, interior * 99 / 100) << "step (" << dx << ", " << dy << ")";

        // The middle frame is the texture at half the step, exactly in the interior.
        const detail::Rgba8Image truth = moved(dx / 2, dy / 2);
        int wrong = 0;
        for (std::uint32_t y = k_margin; y < k_height - k_margin; ++y) {
            for (std::uint32_t x = k_margin; x < k_width - k_margin; ++x) {
                for (int c = 0; c < 3; ++c) {
                    wrong += std::abs(out.at(x, y)[c] - truth.at(x, y)[c]) > 2 ? 1 : 0;
                }
            }
        }
        EXPECT_EQ(wrong, 0) << "step (" << dx << ", " << dy << ")";
        if (std::getenv("DBG_MAP")) {
            for (std::uint32_t y = 0; y < k_height; y += 2) {
                for (std::uint32_t x = 0; x < k_width; ++x) {
                    int e = 0;
                    for (int c = 0; c < 3; ++c)
                        e = std::max(e, std::abs(out.at(x, y)[c] - truth.at(x, y)[c]));
                    std::putchar(e <= 2 ? '.' : e < 20 ? 'o' : 'X');
                }
                std::putchar('\n');
            }
        }
        std::printf("[ psnr     ] step (%d, %d): generated %.2f dB, blend %.2f dB\n", dx, dy,
                    detail::psnr(out, truth),
                    detail::psnr(detail::blend(moved(0, 0), moved(dx, dy)), truth));
    }
}

TEST_F(ColourMotionDevice, AFlatRegionHasNoConfidenceAndGivesTheBlend) {
    // The texture moving right on the left half; the right half one colour that brightens.
    constexpr std::uint32_t k_split = 48;
    const auto frame = [&](int dx, std::uint8_t flat) {
        detail::Rgba8Image image = moved(dx, 0);
        for (std::uint32_t y = 0; y < k_height; ++y) {
            for (std::uint32_t x = k_split; x < k_width; ++x) {
                std::uint8_t* p = image.at(x, y);
                p[0] = flat;
                p[1] = static_cast<std::uint8_t>(flat / 2);
                p[2] = 90;
            }
        }
        return image;
    };
    const detail::Rgba8Image a = frame(0, 100);
    const detail::Rgba8Image b = frame(4, 140);
    for (const float t : {0.5f, 0.25f}) {
        Fields f;
        const detail::Rgba8Image out = generate(a, b, &f, t);
        const detail::Rgba8Image blend = detail::blend(a, b, t);
        for (std::uint32_t y = 0; y < k_height; ++y) {
            for (std::uint32_t x = k_split + 8; x < k_width; ++x) {
                ASSERT_EQ(f.conf(0, x, y), 0.0f) << x << ", " << y;
                ASSERT_EQ(f.conf(1, x, y), 0.0f) << x << ", " << y;
                for (int c = 0; c < 4; ++c) {
                    ASSERT_NEAR(out.at(x, y)[c], blend.at(x, y)[c], 1) << x << ", " << y;
                }
            }
        }
    }
}

TEST_F(ColourMotionDevice, TheSameFramesGiveTheSameOutputBitForBit) {
    const detail::Rgba8Image a = moved(0, 0);
    const detail::Rgba8Image b = moved(5, 3);
    Fields first_fields;
    Fields second_fields;
    const detail::Rgba8Image first = generate(a, b, &first_fields);
    (void)generate(b, a);
    const detail::Rgba8Image second = generate(a, b, &second_fields);
    EXPECT_TRUE(first.pixels == second.pixels);
    EXPECT_TRUE(first_fields.motion == second_fields.motion);
    EXPECT_TRUE(first_fields.confidence == second_fields.confidence);
}

// Two records in one command buffer (two slots, as a workload with jobs in flight records
// them): the second reads what it wrote itself, never what the first left in the shared
// buffers and images, and sync validation sees no hazard between them.
TEST_F(ColourMotionDevice, BackToBackRecordsShareTheIntermediatesSafely) {
    detail::ColourInterpolatePass pass(*m_device, {k_width, k_height}, 2);
    const detail::Image da = upload_rgba8(*m_device, moved(0, 0));
    const detail::Image db = upload_rgba8(*m_device, moved(4, -2));
    const detail::Image other_a = upload_rgba8(*m_device, moved(3, 5));
    const detail::Image other_b = upload_rgba8(*m_device, moved(-5, 1));
    const detail::Image scratch = create_output(*m_device, k_width, k_height);
    const auto alone = run_pass(*m_device, *m_output, [&](VkCommandBuffer cmd) {
        ASSERT_EQ(pass.record(cmd, 0, {da.view.get()}, {db.view.get()}, m_output->view.get(),
                              {k_width, k_height}, {}),
                  VK_SUCCESS);
    });
    const auto second = run_pass(*m_device, *m_output, [&](VkCommandBuffer cmd) {
        detail::image_barrier(cmd, scratch.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_NONE, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
        ASSERT_EQ(pass.record(cmd, 1, {other_a.view.get()}, {other_b.view.get()},
                              scratch.view.get(), {k_width, k_height}, {}),
                  VK_SUCCESS);
        ASSERT_EQ(pass.record(cmd, 0, {da.view.get()}, {db.view.get()}, m_output->view.get(),
                              {k_width, k_height}, {}),
                  VK_SUCCESS);
    });
    EXPECT_TRUE(second.pixels == alone.pixels);
}

TEST_F(ColourMotionDevice, ASizeBeyondTheCapacityOrATOutOfRangeIsRefused) {
    const auto cmd_check = [&](VkExtent2D extent, float t) {
        VkResult r = VK_SUCCESS;
        const detail::Rgba8Image a = moved(0, 0);
        const detail::Image da = upload_rgba8(*m_device, a);
        detail::submit_and_wait(*m_device, detail::QueueRole::Main, [&](VkCommandBuffer cmd) {
            detail::InterpolateParams params;
            params.t = t;
            r = m_pass->record(cmd, 0, {da.view.get()}, {da.view.get()}, m_output->view.get(),
                               extent, params);
        });
        return r;
    };
    EXPECT_EQ(cmd_check({256, 16}, 0.5f), VK_ERROR_INITIALIZATION_FAILED);
    EXPECT_EQ(cmd_check({k_width, k_height}, 1.5f), VK_ERROR_INITIALIZATION_FAILED);
}

// The bench's present probe's box (bench/layer/present_probe.cpp): a checker of eight cells a
// side over a diagonal ramp, here 360 texels (45-texel cells) on a flat background.
void draw_probe_box(detail::Rgba8Image& image, int x0, int y0) {
    constexpr int k_side = 360;
    constexpr int k_cell = k_side / 8;
    for (int y = 0; y < k_side; ++y) {
        for (int x = 0; x < k_side; ++x) {
            const bool dark = ((x / k_cell) + (y / k_cell)) % 2 == 0;
            const auto ramp = static_cast<std::uint8_t>(255 * (x + y) / (2 * k_side));
            std::uint8_t* t =
                image.at(static_cast<std::uint32_t>(x0 + x), static_cast<std::uint32_t>(y0 + y));
            t[0] = dark ? ramp : static_cast<std::uint8_t>(255 - ramp);
            t[1] = dark ? 40 : 220;
            t[2] = static_cast<std::uint8_t>(dark ? 200 - ramp / 2 : 60 + ramp / 2);
            t[3] = 255;
        }
    }
}

detail::Rgba8Image probe_frame(std::uint32_t width, std::uint32_t height, int box_x) {
    detail::Rgba8Image image(width, height);
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            std::uint8_t* p = image.at(x, y);
            p[0] = 70;
            p[1] = 77;
            p[2] = 185;
            p[3] = 255;
        }
    }
    draw_probe_box(image, box_x, static_cast<int>(height / 2) - 180);
    return image;
}

class ColourMotionLargeFrames : public VulkanTest {
protected:
    [[nodiscard]] std::uint32_t virtual_devices() const override { return 1; }
};

// A repeating texture whose step between the frames is a fraction of a texel on the coarsest
// pyramid level (22 texels is 1.375 at a sixteenth) while its next period (90 texels on) falls
// on a whole one (7): a whole-texel search there matched the period better than the step, and
// the finer levels inherited it. The step is found and the middle frame generated, wherever the
// box stands.
TEST_F(ColourMotionLargeFrames, ARepeatingTextureIsFoundAtItsStepNotAtItsNextPeriod) {
    constexpr std::uint32_t k_w = 1280;
    constexpr std::uint32_t k_h = 720;
    constexpr int k_step = 11; // a frame; A to B is twice that
    detail::Device& device = open(0);
    detail::ColourInterpolatePass pass(device, {k_w, k_h});
    const detail::Image output = create_output(device, k_w, k_h);
    for (const int box_x : {100, 777}) {
        const detail::Rgba8Image a = probe_frame(k_w, k_h, box_x);
        const detail::Rgba8Image b = probe_frame(k_w, k_h, box_x + 2 * k_step);
        const detail::Rgba8Image truth = probe_frame(k_w, k_h, box_x + k_step);
        const detail::Image da = upload_rgba8(device, a);
        const detail::Image db = upload_rgba8(device, b);
        const detail::Rgba8Image out = run_pass(device, output, [&](VkCommandBuffer cmd) {
            ASSERT_EQ(pass.record(cmd, 0, {da.view.get()}, {db.view.get()}, output.view.get(),
                                  {k_w, k_h}, {}),
                      VK_SUCCESS);
        });
        // B's vectors over its box point back near the step (in a flat cell, a few texels beside
        // it give the same texels), not a period (90 texels) away.
        const std::size_t texels = std::size_t{k_w} * k_h;
        const auto halves = read_buffer(device, pass.motion().motion_buffer(), texels * 2 * 4);
        int at_step = 0;
        int box = 0;
        for (int y = static_cast<int>(k_h / 2) - 180; y < static_cast<int>(k_h / 2) + 180; ++y) {
            for (int x = box_x + 2 * k_step; x < box_x + 2 * k_step + 360; ++x) {
                const std::size_t i = texels + static_cast<std::size_t>(y) * k_w + x;
                std::uint16_t mx = 0;
                std::uint16_t my = 0;
                std::memcpy(&mx, halves.data() + i * 4, 2);
                std::memcpy(&my, halves.data() + i * 4 + 2, 2);
                at_step += std::abs(from_half(mx) + 2 * k_step) <= 16.0f &&
                                   std::abs(from_half(my)) <= 16.0f
                               ? 1
                               : 0;
                ++box;
            }
        }
        EXPECT_GE(at_step, box * 95 / 100) << "box at " << box_x;
        const double generated = detail::psnr(out, truth);
        const double blend = detail::psnr(detail::blend(a, b), truth);
        std::printf("[ psnr     ] box at %d: generated %.2f dB, blend %.2f dB\n", box_x, generated,
                    blend);
        EXPECT_GE(generated, blend + 10.0) << "box at " << box_x;
    }
}

} // namespace
} // namespace tandem::test
