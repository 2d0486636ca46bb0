#include "post/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tandem/error.hpp"

namespace tandem::detail {
namespace {

void check_same_size(const Rgba8Image& a, const Rgba8Image& b, const char* what) {
    if (a.width != b.width || a.height != b.height ||
        a.pixels.size() != static_cast<std::size_t>(a.width) * a.height * 4 ||
        b.pixels.size() != a.pixels.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    std::string(what) + ": images of " + std::to_string(a.width) + "x" +
                        std::to_string(a.height) + " and " + std::to_string(b.width) + "x" +
                        std::to_string(b.height) + " (or pixel data of another size)",
                    "Pass two RGBA8 images of the same size");
    }
}

std::uint8_t to_byte(float v) noexcept {
    return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
}

} // namespace

double psnr(const Rgba8Image& a, const Rgba8Image& b) {
    check_same_size(a, b, "psnr");
    if (a.pixels.empty()) {
        throw Error(ErrorCategory::InvalidArgument, "psnr: empty images",
                    "Pass images of at least one pixel");
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < a.pixels.size(); i += 4) {
        for (std::size_t c = 0; c < 3; ++c) {
            const double d = static_cast<double>(a.pixels[i + c]) - b.pixels[i + c];
            sum += d * d;
        }
    }
    if (sum == 0.0) {
        return std::numeric_limits<double>::infinity();
    }
    const double mse = sum / (static_cast<double>(a.width) * a.height * 3.0);
    return 10.0 * std::log10(255.0 * 255.0 / mse);
}

Rgba8Image bilinear_upscale(const Rgba8Image& in, std::uint32_t width, std::uint32_t height,
                            float jitter_x, float jitter_y) {
    if (in.width == 0 || in.height == 0 || width == 0 || height == 0) {
        throw Error(ErrorCategory::InvalidArgument, "bilinear_upscale: empty image",
                    "Pass non-empty sizes");
    }
    Rgba8Image out(width, height);
    const float sx = static_cast<float>(in.width) / static_cast<float>(width);
    const float sy = static_cast<float>(in.height) / static_cast<float>(height);
    const auto max_x = static_cast<int>(in.width) - 1;
    const auto max_y = static_cast<int>(in.height) - 1;
    for (std::uint32_t y = 0; y < height; ++y) {
        const float fy = (static_cast<float>(y) + 0.5f) * sy - 0.5f - jitter_y;
        const float y0f = std::floor(fy);
        const float wy = fy - y0f;
        const auto y0 = static_cast<int>(y0f);
        const auto ya = static_cast<std::uint32_t>(std::clamp(y0, 0, max_y));
        const auto yb = static_cast<std::uint32_t>(std::clamp(y0 + 1, 0, max_y));
        for (std::uint32_t x = 0; x < width; ++x) {
            const float fx = (static_cast<float>(x) + 0.5f) * sx - 0.5f - jitter_x;
            const float x0f = std::floor(fx);
            const float wx = fx - x0f;
            const auto x0 = static_cast<int>(x0f);
            const auto xa = static_cast<std::uint32_t>(std::clamp(x0, 0, max_x));
            const auto xb = static_cast<std::uint32_t>(std::clamp(x0 + 1, 0, max_x));
            const std::uint8_t* p00 = in.at(xa, ya);
            const std::uint8_t* p10 = in.at(xb, ya);
            const std::uint8_t* p01 = in.at(xa, yb);
            const std::uint8_t* p11 = in.at(xb, yb);
            std::uint8_t* o = out.at(x, y);
            for (int c = 0; c < 4; ++c) {
                const float top = p00[c] + wx * (static_cast<float>(p10[c]) - p00[c]);
                const float bottom = p01[c] + wx * (static_cast<float>(p11[c]) - p01[c]);
                o[c] = to_byte(top + wy * (bottom - top));
            }
        }
    }
    return out;
}

Rgba8Image blend(const Rgba8Image& a, const Rgba8Image& b, float t) {
    check_same_size(a, b, "blend");
    Rgba8Image out(a.width, a.height);
    for (std::size_t i = 0; i < a.pixels.size(); ++i) {
        out.pixels[i] = to_byte((1.0f - t) * a.pixels[i] + t * b.pixels[i]);
    }
    return out;
}

} // namespace tandem::detail
