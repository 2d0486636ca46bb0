// CPU baselines and the metric the post passes are judged by: PSNR over RGB, a bilinear upscale
// (what a plain scaler gives) and a blend of two frames (what frame generation without motion
// gives). Images are tightly packed RGBA8 rows. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tandem::detail {

struct Rgba8Image {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::vector<std::uint8_t> pixels; // width * height * 4 bytes

    Rgba8Image() = default;
    Rgba8Image(std::uint32_t w, std::uint32_t h)
        : width(w), height(h), pixels(static_cast<std::size_t>(w) * h * 4) {}
    [[nodiscard]] std::uint8_t* at(std::uint32_t x, std::uint32_t y) noexcept {
        return pixels.data() + (static_cast<std::size_t>(y) * width + x) * 4;
    }
    [[nodiscard]] const std::uint8_t* at(std::uint32_t x, std::uint32_t y) const noexcept {
        return pixels.data() + (static_cast<std::size_t>(y) * width + x) * 4;
    }
};

// Peak signal-to-noise ratio in dB over the R, G and B channels (alpha ignored), peak 255:
// 10 log10(255^2 / MSE). +infinity for identical images. Throws tandem::Error when the sizes
// differ or the images are empty.
[[nodiscard]] double psnr(const Rgba8Image& a, const Rgba8Image& b);

// Bilinear resampling to width x height with pixel centres aligned (output texel x samples input
// position (x + 0.5) * in_width / width - 0.5), edges clamped, rounded to nearest. An input
// rendered with a jitter (its texel x sampled the scene at x + 0.5 + jitter) is resampled where
// its samples are: the positions move by -jitter.
[[nodiscard]] Rgba8Image bilinear_upscale(const Rgba8Image& in, std::uint32_t width,
                                          std::uint32_t height, float jitter_x = 0.0f,
                                          float jitter_y = 0.0f);

// (1 - t) a + t b per channel, rounded to nearest (t = 0.5: the 50/50 blend of two frames).
// Throws tandem::Error when the sizes differ.
[[nodiscard]] Rgba8Image blend(const Rgba8Image& a, const Rgba8Image& b, float t = 0.5f);

} // namespace tandem::detail
