// PatternWorkload: the built-in compute workload. Texel (x, y) of generation g is a pure function
// of (g, x, y, width, height) (shaders/pattern.comp), so any delivered image can be checked
// byte for byte against pattern_reference(). RGBA8 only. One descriptor set per slot, rewritten
// only when the slot's image view changes (never while a command buffer using it is pending:
// the runtime re-records a slot only after its previous work completed).
//
// The shader stores vec4(c) / 255.0 for integer c in 0..255; UNORM conversion rounds to nearest,
// and c / 255.0f * 255 lies within one float ulp of c, so every channel round-trips to c exactly
// (test_pattern checks every texel on the device against the reference).
#pragma once

#include <cstdint>
#include <vector>

#include "core/handle.hpp"
#include "core/pipeline_shelf.hpp"
#include "workloads/workload.hpp"

namespace tandem::detail {

// The generation the shader sees: the low 32 bits (push constants are 32-bit).
[[nodiscard]] constexpr std::uint32_t pattern_generation(std::uint64_t generation) noexcept {
    return static_cast<std::uint32_t>(generation & 0xffffffffu);
}

// RGBA8 bytes of texel (x, y), exactly as the shader writes them.
[[nodiscard]] std::uint32_t pattern_texel(std::uint64_t generation, std::uint32_t x,
                                          std::uint32_t y, std::uint32_t width) noexcept;

// The whole image, tightly packed rows of RGBA8 (width * height * 4 bytes).
[[nodiscard]] std::vector<std::uint8_t>
pattern_reference(std::uint64_t generation, std::uint32_t width, std::uint32_t height);

// Index of the first texel of `pixels` (tightly packed RGBA8) that differs from generation
// `generation`'s reference, or -1 when all match.
[[nodiscard]] std::int64_t pattern_mismatch(const std::uint8_t* pixels, std::uint64_t generation,
                                            std::uint32_t width, std::uint32_t height) noexcept;

class PatternWorkload final : public Workload {
public:
    PatternWorkload(const Device& device, const WorkloadParams& params);

    [[nodiscard]] VkImageUsageFlags target_usage() const noexcept override {
        return VK_IMAGE_USAGE_STORAGE_BIT;
    }
    [[nodiscard]] WorkloadOutput output() const noexcept override { return {}; }
    [[nodiscard]] VkResult record(VkCommandBuffer cmd, std::uint32_t slot,
                                  const WorkloadTarget& target, std::uint64_t generation,
                                  std::span<const std::byte> snapshot) noexcept override;

private:
    const Device& m_device;
    PipelineShelf::Shared m_pipeline; // shared by the device's pattern tasks
    Handle<VkDescriptorPool> m_pool;
    std::vector<VkDescriptorSet> m_sets;
    std::vector<VkImageView> m_bound_views;
};

} // namespace tandem::detail
