// What the layer's checks do with frames on the host: the PSNR of a frame against the frame the
// program drew (verify mode), and frames written as PPM files (the dump). Plain functions over
// bytes; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

namespace tandem::layer {

// The peak signal-to-noise ratio of `frame` against `truth` (4 bytes a texel, the same size),
// over the colour channels (alpha left out), in dB; identical frames give k_identical_db.
inline constexpr double k_identical_db = 99.0;
[[nodiscard]] double psnr_db(std::span<const std::uint8_t> frame,
                             std::span<const std::uint8_t> truth);
// The PSNR of the blend of `a` and `b` ((a + b) / 2, rounded half up, per channel) against
// `truth`: what a generated frame must beat.
[[nodiscard]] double blend_psnr_db(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                                   std::span<const std::uint8_t> truth);

// Writes `texels` (4 bytes each, in `format`'s channel order: BGRA or RGBA) as a binary PPM.
// Returns false (the caller logs it) when the file cannot be written.
[[nodiscard]] bool write_ppm(const std::string& path, std::span<const std::uint8_t> texels,
                             VkExtent2D extent, VkFormat format);

// The newest `capacity` samples of a measurement (the layer's delays and gaps, in us), kept in a
// ring: a long-running program's report holds its recent frames, in bounded memory.
class SampleRing {
public:
    static constexpr std::size_t k_capacity = 8192;
    void add(double sample);
    // Oldest first.
    [[nodiscard]] std::vector<double> in_order() const;

private:
    std::vector<double> m_samples;
    std::size_t m_next = 0; // the oldest once the ring is full
};

// Verify mode's figures on one device: each held-back frame generated from its neighbours.
struct VerifyTotals {
    std::uint64_t frames = 0; // held-back frames compared
    double generated_db_sum = 0;
    double blend_db_sum = 0;
    double generated_db_min = 0;
    double blend_db_min = 0;
    // Frames whose generated frame did not come (a job not accepted or not ready in time).
    std::uint64_t missed = 0;

    void add(double generated_db, double blend_db);
    void merge(const VerifyTotals& other);
};

} // namespace tandem::layer
