#include "frame_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace tandem::layer {
namespace {

double psnr_from_squared_error(double squared_error, std::size_t samples) {
    if (samples == 0 || squared_error == 0) {
        return k_identical_db;
    }
    const double mse = squared_error / static_cast<double>(samples);
    return std::min(k_identical_db, 10.0 * std::log10(255.0 * 255.0 / mse));
}

} // namespace

double psnr_db(std::span<const std::uint8_t> frame, std::span<const std::uint8_t> truth) {
    const std::size_t size = std::min(frame.size(), truth.size()) / 4 * 4;
    double squared_error = 0;
    for (std::size_t i = 0; i < size; i += 4) {
        for (std::size_t c = 0; c < 3; ++c) {
            const double d = double(frame[i + c]) - double(truth[i + c]);
            squared_error += d * d;
        }
    }
    return psnr_from_squared_error(squared_error, size / 4 * 3);
}

double blend_psnr_db(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                     std::span<const std::uint8_t> truth) {
    const std::size_t size = std::min({a.size(), b.size(), truth.size()}) / 4 * 4;
    double squared_error = 0;
    for (std::size_t i = 0; i < size; i += 4) {
        for (std::size_t c = 0; c < 3; ++c) {
            const int blend = (int(a[i + c]) + int(b[i + c]) + 1) / 2;
            const double d = double(blend) - double(truth[i + c]);
            squared_error += d * d;
        }
    }
    return psnr_from_squared_error(squared_error, size / 4 * 3);
}

bool write_ppm(const std::string& path, std::span<const std::uint8_t> texels, VkExtent2D extent,
               VkFormat format) {
    const bool bgra = format == VK_FORMAT_B8G8R8A8_UNORM || format == VK_FORMAT_B8G8R8A8_SRGB;
    const std::size_t count = std::size_t{extent.width} * extent.height;
    if (texels.size() < count * 4) {
        return false;
    }
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"),
                                                               &std::fclose);
    if (!file) {
        return false;
    }
    std::fprintf(file.get(), "P6\n%u %u\n255\n", extent.width, extent.height);
    std::string rgb(count * 3, '\0');
    for (std::size_t i = 0; i < count; ++i) {
        rgb[i * 3 + 0] = static_cast<char>(texels[i * 4 + (bgra ? 2 : 0)]);
        rgb[i * 3 + 1] = static_cast<char>(texels[i * 4 + 1]);
        rgb[i * 3 + 2] = static_cast<char>(texels[i * 4 + (bgra ? 0 : 2)]);
    }
    return std::fwrite(rgb.data(), 1, rgb.size(), file.get()) == rgb.size();
}

void SampleRing::add(double sample) {
    if (m_samples.size() < k_capacity) {
        m_samples.push_back(sample);
    } else {
        m_samples[m_next] = sample;
        m_next = (m_next + 1) % k_capacity;
    }
}

std::vector<double> SampleRing::in_order() const {
    std::vector<double> out(m_samples.begin() + static_cast<std::ptrdiff_t>(m_next),
                            m_samples.end());
    out.insert(out.end(), m_samples.begin(),
               m_samples.begin() + static_cast<std::ptrdiff_t>(m_next));
    return out;
}

void VerifyTotals::merge(const VerifyTotals& other) {
    if (other.frames > 0) {
        generated_db_min = frames == 0 ? other.generated_db_min
                                       : std::min(generated_db_min, other.generated_db_min);
        blend_db_min =
            frames == 0 ? other.blend_db_min : std::min(blend_db_min, other.blend_db_min);
    }
    frames += other.frames;
    generated_db_sum += other.generated_db_sum;
    blend_db_sum += other.blend_db_sum;
    missed += other.missed;
}

void VerifyTotals::add(double generated_db, double blend_db) {
    generated_db_min = frames == 0 ? generated_db : std::min(generated_db_min, generated_db);
    blend_db_min = frames == 0 ? blend_db : std::min(blend_db_min, blend_db);
    generated_db_sum += generated_db;
    blend_db_sum += blend_db;
    ++frames;
}

} // namespace tandem::layer
