// ComputeProgram: one compute pipeline of the post-processing passes, with its descriptor set
// layout, pipeline layout (one set, push constants) and a descriptor pool holding one set per
// slot. A slot's set is rewritten by bind() only when the resources differ from the last ones
// bound there, so the caller must not bind a slot again while a command buffer that used it is
// pending. Sampled images use the program's immutable nearest/clamp sampler (the shaders read
// with texelFetch and filter by hand, so results do not depend on the driver's filtering).
// Set-up (constructor) throws tandem::Error; bind() and dispatch() never throw. One thread at a
// time; destroy only once no command buffer that uses it is pending.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/device.hpp"
#include "core/handle.hpp"

namespace tandem::detail {

// An image a pass reads, and the layout it is in while the pass's commands run
// (SHADER_READ_ONLY_OPTIMAL or GENERAL).
struct SampledInput {
    VkImageView view = VK_NULL_HANDLE;
    VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
};

// What one binding of a program points at: an image view (sampled or storage) or a whole buffer.
struct ProgramResource {
    VkImageView view = VK_NULL_HANDLE;
    VkImageLayout layout = VK_IMAGE_LAYOUT_GENERAL;
    VkBuffer buffer = VK_NULL_HANDLE;

    [[nodiscard]] static ProgramResource sampled(SampledInput input) noexcept {
        return {input.view, input.layout, VK_NULL_HANDLE};
    }
    [[nodiscard]] static ProgramResource storage_image(VkImageView view) noexcept {
        return {view, VK_IMAGE_LAYOUT_GENERAL, VK_NULL_HANDLE};
    }
    [[nodiscard]] static ProgramResource storage_buffer(VkBuffer buffer) noexcept {
        return {VK_NULL_HANDLE, VK_IMAGE_LAYOUT_UNDEFINED, buffer};
    }
    bool operator==(const ProgramResource&) const = default;
};

// A nearest, clamp-to-edge sampler (the programs' immutable sampler).
[[nodiscard]] Handle<VkSampler> create_point_sampler(const Device& device, const std::string& name);

inline constexpr std::size_t k_max_program_bindings = 8;

class ComputeProgram {
public:
    // `bindings[i]` is the descriptor type of binding i (COMBINED_IMAGE_SAMPLER, STORAGE_IMAGE
    // or STORAGE_BUFFER); `sampler` is used for every combined image sampler.
    ComputeProgram(const Device& device, std::span<const std::uint32_t> spirv,
                   std::span<const VkDescriptorType> bindings, std::uint32_t push_bytes,
                   std::uint32_t slots, VkSampler sampler, const std::string& name);

    [[nodiscard]] std::uint32_t slots() const noexcept {
        return static_cast<std::uint32_t>(m_sets.size());
    }
    // Points slot `slot`'s set at `resources` (one per binding, in binding order). False when
    // the slot or the count is wrong.
    [[nodiscard]] bool bind(std::uint32_t slot,
                            std::span<const ProgramResource> resources) noexcept;
    // Binds the pipeline and the slot's set, pushes `push` and dispatches `groups`.
    void dispatch(VkCommandBuffer cmd, std::uint32_t slot, const void* push,
                  std::uint32_t push_bytes, std::uint32_t groups_x, std::uint32_t groups_y,
                  std::uint32_t groups_z = 1) const noexcept;

private:
    const Device& m_device;
    std::vector<VkDescriptorType> m_types;
    Handle<VkDescriptorSetLayout> m_set_layout;
    Handle<VkPipelineLayout> m_pipeline_layout;
    Handle<VkPipeline> m_pipeline;
    Handle<VkDescriptorPool> m_pool;
    std::vector<VkDescriptorSet> m_sets;
    std::vector<std::vector<ProgramResource>> m_bound;
};

// Workgroups of the passes' shaders (local size 8x8) covering `n` invocations.
[[nodiscard]] constexpr std::uint32_t post_groups(std::uint32_t n) noexcept {
    return (n + 7) / 8;
}

} // namespace tandem::detail
