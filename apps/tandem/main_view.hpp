// MainView: `tandem run`'s main view on the primary. Each frame renders a FrameSnapshot into one
// of its colour images with the runtime's leased task outputs on their display surfaces: the
// submission waits on every lease's semaphore, samples the leased images, and signals the
// runtime's primary timeline with the value the caller releases the leases with. On request the
// same submission copies the main image and the leased images to host memory (the PNGs), so
// nothing reads a leased image outside a submission that waited for it. The GPU time of every
// frame is measured with timestamps where the primary's main queue has them.
//
// It is built on what any application gets from the runtime (Runtime::primary_vulkan: the
// primary's instance, device and queue with its lock), like an engine's own renderer.
// Threads: the application's frame loop only; it is the only signaller of the primary timeline.
// Lifetime: destroy before the runtime; the destructor waits for its submissions.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/device.hpp"
#include "core/handle.hpp"
#include "core/instance.hpp"
#include "core/resources.hpp"
#include "render/mesh_cache.hpp"
#include "render/renderer.hpp"
#include "render/scene_capture.hpp"
#include "tandem/lease.hpp"
#include "tandem/runtime.hpp"

namespace tandem::cli {

struct MainFrameRequest {
    // The leases shown this frame: external texture i of the snapshot is leases[i].
    std::span<const Lease> leases;
    bool read_main = false;   // copy the main image to host memory (main_pixels)
    bool read_leases = false; // copy every leased image to host memory (lease_pixels)
};

class MainView {
public:
    MainView(const PrimaryVulkan& primary, VkSemaphore timeline,
             const std::shared_ptr<const detail::SceneAssets>& assets, VkExtent2D extent,
             std::uint32_t max_leases, VkExtent2D max_lease_extent,
             std::uint32_t frames_in_flight = 2);
    ~MainView();
    MainView(const MainView&) = delete;
    MainView& operator=(const MainView&) = delete;

    // Records and submits one frame; returns the primary timeline value it signals (release the
    // leases with it), or 0 when nothing was submitted (see last_error()). Waits on the host
    // only for the frame whose resources it reuses.
    [[nodiscard]] std::uint64_t render(const detail::FrameSnapshot& snapshot,
                                       const MainFrameRequest& request);
    [[nodiscard]] VkResult wait(std::uint64_t value, std::chrono::nanoseconds timeout) const;

    // After wait(value): the pixels the frame that signalled `value` copied (RGBA8 rows).
    [[nodiscard]] std::vector<std::uint8_t> main_pixels(std::uint64_t value) const;
    [[nodiscard]] std::vector<std::uint8_t> lease_pixels(std::uint64_t value,
                                                         std::size_t lease) const;

    [[nodiscard]] const std::string& last_error() const noexcept { return m_error; }
    [[nodiscard]] VkExtent2D extent() const noexcept { return m_extent; }
    // GPU time of the frames whose timestamps were collected, in milliseconds; empty when the
    // queue has no timestamps.
    [[nodiscard]] bool has_timestamps() const noexcept { return m_timestamp_period_ns > 0; }
    [[nodiscard]] const std::vector<double>& gpu_ms() const noexcept { return m_gpu_ms; }

private:
    struct Frame {
        detail::Image color;
        std::unique_ptr<detail::RenderTarget> target;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        detail::Buffer main_readback;
        std::vector<detail::Buffer> lease_readback;
        std::vector<VkExtent2D> lease_extents;
        std::uint64_t value = 0;
        bool timed = false;
    };
    [[nodiscard]] const Frame* frame_of(std::uint64_t value) const noexcept;
    void collect_timestamps(Frame& frame, std::size_t index);

    // The primary as Tandem's own helpers (renderer, resources) take it: adopted, not owned.
    std::unique_ptr<detail::Instance> m_instance;
    std::vector<detail::Adapter> m_adapters;
    std::unique_ptr<detail::Device> m_primary;
    const detail::Device& m_device;
    VkSemaphore m_timeline;
    VkExtent2D m_extent;
    std::shared_ptr<detail::MeshCache> m_cache; // shared with scene-capture tasks on the primary
    detail::Renderer m_renderer;
    detail::CommandPool m_pool;
    detail::Handle<VkQueryPool> m_queries;
    double m_timestamp_period_ns = 0;
    std::uint64_t m_timestamp_mask = 0;
    std::vector<Frame> m_frames;
    std::uint64_t m_value = 0;
    std::vector<double> m_gpu_ms;
    std::string m_error;
};

} // namespace tandem::cli
