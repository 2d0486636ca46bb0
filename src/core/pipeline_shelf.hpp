// PipelineShelf: the pipelines of one device, shared by every task instance that builds the same
// one. Each device has one (Device::pipelines()). A task that comes and goes thousands of times
// must not create and destroy a pipeline each time: the NVIDIA driver 580 keeps about 240 bytes
// of device memory and 330 of RSS of every pipeline it destroyed (bench/README.md,
// tandem-bench-driver-objects), lavapipe 17 bytes of heap.
//
// A pipeline is found by a key its builder chooses (everything that makes two pipelines
// different: the shader code, entry point, layouts, formats). A Shared is one user's hold on it;
// the pipeline stays while anyone holds it, and up to k_idle_kept pipelines nobody holds stay
// for the next instance (the least recently used beyond that are destroyed, at once: nobody
// holds them, so no pending command buffer uses them, as instances retire only after their GPU
// work). Thread-safe; the builder runs under the shelf's lock, so one key is built once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include <vulkan/vulkan_core.h>

#include "core/handle.hpp"

namespace tandem::detail {

class Device;

// What a builder makes: the pipeline and the layouts it was made with (the shelf owns them).
struct PipelineObjects {
    Handle<VkDescriptorSetLayout> set_layout; // may be empty (a layout owned elsewhere)
    Handle<VkPipelineLayout> layout;
    Handle<VkPipeline> pipeline;
};

// A compute pipeline of `spirv` (entry point `entry`) with one descriptor set of `bindings`
// (compute stage) and `push_bytes` of push constants, and its layouts; named `name`. Throws
// Error. What builders of compute pipelines call (the pattern, the post-processing passes).
[[nodiscard]] PipelineObjects
build_compute_pipeline(const Device& device, std::span<const std::uint32_t> spirv,
                       std::span<const VkDescriptorSetLayoutBinding> bindings,
                       std::uint32_t push_bytes, const std::string& name,
                       const char* entry = "main");

class PipelineShelf {
public:
    static constexpr std::size_t k_idle_kept = 16;

    class Shared {
    public:
        Shared() = default;
        ~Shared() { reset(); }
        Shared(const Shared&) = delete;
        Shared& operator=(const Shared&) = delete;
        Shared(Shared&& other) noexcept;
        Shared& operator=(Shared&& other) noexcept;

        [[nodiscard]] VkDescriptorSetLayout set_layout() const noexcept;
        [[nodiscard]] VkPipelineLayout layout() const noexcept;
        [[nodiscard]] VkPipeline pipeline() const noexcept;
        [[nodiscard]] explicit operator bool() const noexcept { return m_entry != nullptr; }
        void reset() noexcept;

    private:
        friend class PipelineShelf;
        struct Entry;
        Shared(PipelineShelf* shelf, Entry* entry) : m_shelf(shelf), m_entry(entry) {}
        PipelineShelf* m_shelf = nullptr;
        Entry* m_entry = nullptr;
    };

    using Build = std::function<PipelineObjects()>;

    PipelineShelf();
    ~PipelineShelf();
    PipelineShelf(const PipelineShelf&) = delete;
    PipelineShelf& operator=(const PipelineShelf&) = delete;

    // The pipeline under `key`, built with `build` (which may throw; nothing is kept then) when
    // the shelf has none.
    [[nodiscard]] Shared get(const std::string& key, const Build& build);

    // Pipelines on the shelf, held or idle; and how many builds ran (diagnostics, tests).
    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] std::uint64_t builds() const;

private:
    void release(Shared::Entry* entry) noexcept;

    mutable std::mutex m_lock;
    std::unordered_map<std::string, std::unique_ptr<Shared::Entry>> m_entries;
    std::uint64_t m_tick = 0;
    std::uint64_t m_builds = 0;
};

} // namespace tandem::detail
