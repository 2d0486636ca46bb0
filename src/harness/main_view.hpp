// MainView: `tandem run`'s main view on the primary. Each frame renders a RunScene's main view
// into one of its colour images with the runtime's leased task outputs on their display
// surfaces: the submission waits on every lease's semaphore, samples the leased images, and
// signals the runtime's primary timeline with the value the caller releases the leases with. On
// request the same submission copies the main image and the leased images to host memory (the
// PNGs), so nothing reads a leased image outside a submission that waited for it. The GPU time
// of every frame is measured with timestamps where the primary's main queue has them.
//
// With MainViewOutputs::ColorDepthMotion the same draw also writes each frame's depth (R32F) and
// motion vectors (RG16F, pixels back to the previous frame, from the previous frame's camera and
// transforms): the inputs a frame-generation task takes. frame_images() names a frame's three
// images, left in TRANSFER_SRC_OPTIMAL once its value is signalled, so that a task can take them
// as inputs (tandem/input.hpp); the caller's MainFrameRequest::waits keep a later frame from
// rendering into them before Tandem's copy of them ran.
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
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "harness/run_scene.hpp"
#include "tandem/lease.hpp"
#include "tandem/runtime.hpp"

namespace tandem::harness {

enum class MainViewOutputs { Color, ColorDepthMotion };

// The usage of the view's own colour images: sampleable, so that a task input copied from them
// may be copied by a compute dispatch (TaskInputDesc::application_usage).
inline constexpr VkImageUsageFlags k_main_colour_usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                                         VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                                         VK_IMAGE_USAGE_SAMPLED_BIT;

// One frame's images on the primary (frame_images), all in `layout` once the frame's value is
// signalled; depth and motion are VK_NULL_HANDLE without MainViewOutputs::ColorDepthMotion.
struct MainFrameImages {
    VkImage color = VK_NULL_HANDLE;  // RGBA8 UNORM
    VkImage depth = VK_NULL_HANDLE;  // R32F, 0..1, smaller nearer
    VkImage motion = VK_NULL_HANDLE; // RG16F, in pixels, pointing back one frame
    VkImageLayout layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkImageView color_view = VK_NULL_HANDLE; // a 2D view of `color`, sampleable
};

// Images of the caller's (images Tandem lends for a task's inputs, say) that one frame renders
// into instead of its own: of the view's extent, RGBA8 / R32F / RG16F with colour attachment and
// transfer source usage, each with a 2D view; their contents before are discarded. They are
// left in TRANSFER_SRC_OPTIMAL, like the view's own. One left VK_NULL_HANDLE is the frame's own.
struct MainFrameTargets {
    VkImage color = VK_NULL_HANDLE;
    VkImageView color_view = VK_NULL_HANDLE;
    VkImage depth = VK_NULL_HANDLE; // MainViewOutputs::ColorDepthMotion only
    VkImageView depth_view = VK_NULL_HANDLE;
    VkImage motion = VK_NULL_HANDLE;
    VkImageView motion_view = VK_NULL_HANDLE;
};

struct MainFrameRequest {
    // The leases shown this frame: external texture i of the frame is leases[i].
    std::span<const Lease> leases;
    // Per scene task: the index into `leases` its display surface shows (its newest ready
    // output); unset surfaces keep their own material.
    std::span<const std::optional<std::uint32_t>> shown;
    bool read_main = false;   // copy the main image to host memory (main_pixels)
    bool read_leases = false; // copy every leased image to host memory (lease_pixels)
    // More semaphores the frame's submission waits for (e.g. Runtime::input_timeline at the
    // value after which Tandem no longer reads the images this frame renders into).
    std::span<const VkSemaphoreSubmitInfo> waits;
    // More semaphores the frame's submission signals once it finished (e.g. a loan's
    // InputLoan::written at its written_value, when it renders into lent images).
    std::span<const VkSemaphoreSubmitInfo> signals;
    // Render into these instead of the frame's own images (frame_images then still names the
    // view's own, which this frame left alone).
    const MainFrameTargets* targets = nullptr;
    // Move every sample by this many texels (texel x samples the scene at x + 0.5 + jitter), as
    // a temporal upscaler's frames are rendered; motion vectors stay the unjittered camera's.
    float jitter_x = 0.0f;
    float jitter_y = 0.0f;
};

class MainView {
public:
    // Renders `scene` (its assets are uploaded once per device and shared with its capture
    // tasks there) at `extent`, with up to `max_leases` leases of at most `max_lease_extent`.
    // Throws tandem::Error.
    MainView(const Runtime& runtime, const RunScene& scene, VkExtent2D extent,
             std::uint32_t max_leases, VkExtent2D max_lease_extent,
             std::uint32_t frames_in_flight = 2, MainViewOutputs outputs = MainViewOutputs::Color);
    ~MainView();
    MainView(const MainView&) = delete;
    MainView& operator=(const MainView&) = delete;

    // Records and submits one frame of `scene` as it is now; returns the primary timeline value
    // it signals (release the leases with it), or 0 when nothing was submitted (see
    // last_error()). Waits on the host only for the frame whose resources it reuses.
    [[nodiscard]] std::uint64_t render(const RunScene& scene, const MainFrameRequest& request);
    [[nodiscard]] VkResult wait(std::uint64_t value, std::chrono::nanoseconds timeout) const;
    // The images of the frame that signals `value` (the newest frames_in_flight frames); throws
    // tandem::Error for an older value, whose images were rendered into again.
    [[nodiscard]] MainFrameImages frame_images(std::uint64_t value) const;

    // After wait(value): the pixels the frame that signalled `value` copied (RGBA8 rows).
    [[nodiscard]] std::vector<std::uint8_t> main_pixels(std::uint64_t value) const;
    [[nodiscard]] std::vector<std::uint8_t> lease_pixels(std::uint64_t value,
                                                         std::size_t lease) const;

    [[nodiscard]] const std::string& last_error() const noexcept;
    [[nodiscard]] VkExtent2D extent() const noexcept;
    // GPU time of the frames whose timestamps were collected, in milliseconds; empty when the
    // queue has no timestamps.
    [[nodiscard]] bool has_timestamps() const noexcept;
    [[nodiscard]] const std::vector<double>& gpu_ms() const noexcept;
    // After wait(value): when the frame that signalled `value` ended on the GPU (its last
    // timestamp), in steady-clock nanoseconds, where the primary's timestamps can be placed on
    // the host's clock (Device::has_host_timed_queries); nullopt elsewhere. The event itself,
    // not when a host thread woke to see it.
    [[nodiscard]] std::optional<std::int64_t> end_host_ns(std::uint64_t value);

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace tandem::harness
