// The CPU baselines and PSNR the post passes are measured with.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "post/reference.hpp"
#include "tandem/error.hpp"

namespace tandem::test {
namespace {

detail::Rgba8Image filled(std::uint32_t w, std::uint32_t h, std::uint8_t r, std::uint8_t g,
                          std::uint8_t b) {
    detail::Rgba8Image image(w, h);
    for (std::uint32_t y = 0; y < h; ++y) {
        for (std::uint32_t x = 0; x < w; ++x) {
            std::uint8_t* p = image.at(x, y);
            p[0] = r;
            p[1] = g;
            p[2] = b;
            p[3] = 255;
        }
    }
    return image;
}

TEST(PostReference, PsnrOfKnownErrors) {
    const auto a = filled(8, 4, 10, 20, 30);
    EXPECT_EQ(detail::psnr(a, a), std::numeric_limits<double>::infinity());
    // Every channel off by 1: MSE 1, PSNR 20 log10(255).
    const auto b = filled(8, 4, 11, 21, 31);
    EXPECT_NEAR(detail::psnr(a, b), 20.0 * std::log10(255.0), 1e-9);
    // Alpha is not counted.
    auto c = a;
    c.at(3, 2)[3] = 0;
    EXPECT_EQ(detail::psnr(a, c), std::numeric_limits<double>::infinity());
    EXPECT_THROW((void)detail::psnr(a, filled(4, 8, 10, 20, 30)), Error);
}

TEST(PostReference, BilinearUpscaleKeepsConstantsAndInterpolatesBetweenCentres) {
    const auto flat = filled(5, 3, 7, 100, 200);
    const auto up = detail::bilinear_upscale(flat, 13, 7);
    EXPECT_EQ(up.pixels, filled(13, 7, 7, 100, 200).pixels);

    detail::Rgba8Image ramp(2, 1);
    ramp.at(0, 0)[0] = 0;
    ramp.at(1, 0)[0] = 200;
    const auto wide = detail::bilinear_upscale(ramp, 4, 1);
    // Output centres at input positions -0.25, 0.25, 0.75, 1.25 (edges clamped).
    EXPECT_EQ(wide.at(0, 0)[0], 0);
    EXPECT_EQ(wide.at(1, 0)[0], 50);
    EXPECT_EQ(wide.at(2, 0)[0], 150);
    EXPECT_EQ(wide.at(3, 0)[0], 200);
}

TEST(PostReference, BlendIsTheRoundedWeightedMean) {
    const auto a = filled(3, 3, 0, 100, 255);
    const auto b = filled(3, 3, 255, 101, 255);
    const auto half = detail::blend(a, b);
    EXPECT_EQ(half.at(1, 1)[0], 128); // 127.5 rounds away from zero
    EXPECT_EQ(half.at(1, 1)[1], 101); // 100.5 likewise
    EXPECT_EQ(half.at(1, 1)[2], 255);
    EXPECT_EQ(detail::blend(a, b, 0.0f).pixels, a.pixels);
    EXPECT_EQ(detail::blend(a, b, 1.0f).pixels, b.pixels);
}

} // namespace
} // namespace tandem::test
