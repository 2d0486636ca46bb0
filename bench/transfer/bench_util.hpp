// Helpers of the transfer benchmark: statistics, varying fill patterns, a busy-wait on a
// timeline (the bench times GPU work by host clock and must not oversleep), and blocking image
// upload / poison / readback for verification outside the timed parts. Benchmark thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/resources.hpp"
#include "sync/timeline_semaphore.hpp"

namespace tandem::bench {

struct Stats {
    double median = 0, min = 0, max = 0;
    std::size_t n = 0;
};
[[nodiscard]] Stats stats_of(std::vector<double> samples);
[[nodiscard]] nlohmann::json to_json(const Stats& s);

// Bytes that differ from position to position and from seed to seed.
void fill_pattern(std::uint8_t* out, std::size_t n, std::uint64_t seed);
[[nodiscard]] std::vector<std::uint8_t> pattern(std::size_t n, std::uint64_t seed);

// Spins (no sleeping) until `semaphore` reaches `value`; false on timeout or error.
[[nodiscard]] bool spin_until(const detail::TimelineSemaphore& semaphore, std::uint64_t value,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));

using Clock = std::chrono::steady_clock;
[[nodiscard]] inline double micros(Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

// Blocking, on the device's main queue. upload leaves the image in `final_layout`.
void upload_image(const detail::Device& device, VkImage image, VkExtent2D extent, VkFormat format,
                  const std::vector<std::uint8_t>& bytes, VkImageLayout final_layout);
// Clears the image to a poison value and leaves it in `final_layout`.
void poison_image(const detail::Device& device, VkImage image, VkImageLayout from,
                  VkImageLayout final_layout);
// Tightly packed contents of an image in `layout` (left in `layout`).
[[nodiscard]] std::vector<std::uint8_t> read_image(const detail::Device& device, VkImage image,
                                                   VkExtent2D extent, VkFormat format,
                                                   VkImageLayout layout);

} // namespace tandem::bench
