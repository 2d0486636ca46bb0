// MainView: `tandem run`'s main view on the primary. Each frame renders a RunScene's main view
// into one of its colour images with the runtime's leased task outputs on their display
// surfaces: the submission waits on every lease's semaphore, samples the leased images, and
// signals the runtime's primary timeline with the value the caller releases the leases with. On
// request the same submission copies the main image and the leased images to host memory (the
// PNGs), so nothing reads a leased image outside a submission that waited for it. The GPU time
// of every frame is measured with timestamps where the primary's main queue has them.
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

struct MainFrameRequest {
    // The leases shown this frame: external texture i of the frame is leases[i].
    std::span<const Lease> leases;
    // Per scene task: the index into `leases` its display surface shows (its newest ready
    // output); unset surfaces keep their own material.
    std::span<const std::optional<std::uint32_t>> shown;
    bool read_main = false;   // copy the main image to host memory (main_pixels)
    bool read_leases = false; // copy every leased image to host memory (lease_pixels)
};

class MainView {
public:
    // Renders `scene` (its assets are uploaded once per device and shared with its capture
    // tasks there) at `extent`, with up to `max_leases` leases of at most `max_lease_extent`.
    // Throws tandem::Error.
    MainView(const Runtime& runtime, const RunScene& scene, VkExtent2D extent,
             std::uint32_t max_leases, VkExtent2D max_lease_extent,
             std::uint32_t frames_in_flight = 2);
    ~MainView();
    MainView(const MainView&) = delete;
    MainView& operator=(const MainView&) = delete;

    // Records and submits one frame of `scene` as it is now; returns the primary timeline value
    // it signals (release the leases with it), or 0 when nothing was submitted (see
    // last_error()). Waits on the host only for the frame whose resources it reuses.
    [[nodiscard]] std::uint64_t render(const RunScene& scene, const MainFrameRequest& request);
    [[nodiscard]] VkResult wait(std::uint64_t value, std::chrono::nanoseconds timeout) const;

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

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace tandem::harness
