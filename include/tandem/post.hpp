// Post-processing tasks built into Tandem, on the public Workload interface with task inputs
// (tandem/input.hpp): the application renders a frame on the primary, a task on a worker (or
// the primary) processes it, and the result comes back as the task's output.
//
//   blur         a separable Gaussian blur of one RGBA8 colour input, the same size.
//   upscale      a spatial upscaler (Lanczos-3 clamped against ringing, then contrast-adaptive
//                sharpening): one RGBA8 colour input at the render size, the output at the
//                task's size (any ratio).
//                Given also the frame's depth and motion vectors (temporal_upscale_task), a
//                temporal upscaler: the frames are rendered with a sub-pixel jitter (each job's
//                TemporalUpscaleSettings says the frame's) and accumulated along the motion
//                vectors, so that a still surface is sampled at every output texel over a few
//                frames (at 2x, a cycle of the four quarter-texel jitters gives the output-size
//                render itself); a surface uncovered (its depth not in the neighbourhood's)
//                starts again from the frame, and a moving one keeps its history clamped to the
//                frame's neighbourhood. temporal_jitter() gives a cycle.
//   interpolate  frame generation: inputs colour (RGBA8), depth (R32F, 0..1, smaller nearer
//                unless reversed) and motion vectors (RG16F, in pixels, pointing back one
//                frame: where the surface seen at a texel was in the frame before, minus the
//                texel). Each job's output is the frame between the previous job's inputs and
//                this one's (at InterpolateSettings::t): both frames warped towards it by their
//                motion, disocclusions resolved by depth, holes filled from the background. The
//                first job on a device (nothing before it there) gives its own colour.
//                From colour alone (interpolate_colour_task: one RGBA8 input, for a program that
//                gives no depth and no motion vectors), the motion is estimated from the two
//                frames (coarse-to-fine block matching on their luminance, refined per texel
//                with a sub-texel step) with a confidence per texel; where the confidence is low
//                (flat, still or unmatched regions) the output falls back to the blend
//                (1 - t) previous + t this. The same InterpolateSettings (t and fill_radius
//                used; depth_tolerance and reversed_depth checked, not used), the same first job.
//
// clang-format off
//     tandem::TaskDesc desc = tandem::interpolate_task("frame-gen", 1920, 1080);
//     desc.placement = tandem::Placement::parse("worker").value();
//     tandem::TaskId task = runtime.register_task(desc);
//     // every real frame:
//     std::array<tandem::InputImage, 3> in{color, depth, motion};
//     tandem::InterpolateSettings half;               // t = 0.5
//     (void)runtime.submit(task, tandem::settings_bytes(half), in);
// clang-format on
//
// Each job's bytes are empty (the defaults) or one settings struct of the task's kind; any
// other size, or a value out of range, fails that submit (TaskError::BadBytes). The task's
// output is RGBA8 UNORM; registration refuses a description whose inputs, sizes or format do
// not fit the kind (start from the *_task helpers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tandem/export.hpp"
#include "tandem/task.hpp"
#include "tandem/workload.hpp"

namespace tandem {

struct BlurSettings {
    std::uint32_t radius = 2; // taps each side, 0..64
    float sigma = 0.0f;       // <= 0: radius / 2
};

struct UpscaleSettings {
    float sharpness = 0.25f; // 0..2: the sharpening's strength (0: none)
    float adapt = 0.5f;      // 0..1: how much full contrast reduces it
};

// A temporal upscale job's frame: its jitter, in render texels (input texel x sampled the scene
// at x + 0.5 + jitter: a projection offset of -2 * jitter / render size in clip space), and
// when to forget what came before (a camera cut).
struct TemporalUpscaleSettings {
    float jitter_x = 0.0f; // -0.5..0.5
    float jitter_y = 0.0f;
    float moving_blend = 0.5f;     // 0..1: the least weight of the new frame where things move
    float depth_tolerance = 1e-6f; // history kept within this of the neighbourhood's depths
                                   // (depth buffer units: distant surfaces differ by little)
    std::uint32_t reset = 0;       // 1: forget the history
};

// Frame `frame`'s jitter for upscaling from `input` to `output` texels (one axis each): for an
// integer ratio n, a cycle of the n x n offsets that put the samples on output texel centres;
// otherwise a Halton (2, 3) sequence. In render texels, as TemporalUpscaleSettings takes them.
struct TemporalJitter {
    float x = 0.0f;
    float y = 0.0f;
};
[[nodiscard]] TANDEM_API TemporalJitter temporal_jitter(std::uint64_t frame,
                                                        std::uint32_t input_width,
                                                        std::uint32_t input_height,
                                                        std::uint32_t width, std::uint32_t height);

struct InterpolateSettings {
    float t = 0.5f;                   // 0: the previous frame, 1: this one
    float depth_tolerance = 0.01f;    // a hole is filled from texels within this of the farthest
                                      // depth around it (the background)
    std::uint32_t fill_radius = 4;    // how far a hole looks for background, 0..16 texels
    std::uint32_t reversed_depth = 0; // 1: depth 1 is nearest
};

// A settings struct as a job's bytes.
template <typename Settings>
[[nodiscard]] std::span<const std::byte> settings_bytes(const Settings& settings) noexcept {
    return std::as_bytes(std::span(&settings, 1));
}

// The workloads, for TaskDesc::factory (the *_task helpers set them).
[[nodiscard]] TANDEM_API WorkloadFactory blur_workload();
[[nodiscard]] TANDEM_API WorkloadFactory upscale_workload();
[[nodiscard]] TANDEM_API WorkloadFactory interpolate_workload();
[[nodiscard]] TANDEM_API WorkloadFactory interpolate_colour_workload();

// Task descriptions of each kind, named `name`, with their inputs and output, placed auto.
[[nodiscard]] TANDEM_API TaskDesc blur_task(const std::string& name, std::uint32_t width,
                                            std::uint32_t height);
// Input at `input_width` x `input_height` (the render size), output at `width` x `height`.
[[nodiscard]] TANDEM_API TaskDesc upscale_task(const std::string& name, std::uint32_t input_width,
                                               std::uint32_t input_height, std::uint32_t width,
                                               std::uint32_t height);
[[nodiscard]] TANDEM_API TaskDesc interpolate_task(const std::string& name, std::uint32_t width,
                                                   std::uint32_t height);
// Frame generation from colour alone: one RGBA8 input, the output the same size. The input may be
// chained from an output kept on the same worker (TaskDesc::keep_output_on_worker), which it
// reads in place.
[[nodiscard]] TANDEM_API TaskDesc interpolate_colour_task(const std::string& name,
                                                          std::uint32_t width,
                                                          std::uint32_t height);
// The temporal upscaler: inputs colour (RGBA8), depth (R32F) and motion vectors (RG16F, in
// render texels, pointing back one frame), all at `input_width` x `input_height`; the output at
// `width` x `height`. Each job's bytes: empty or one TemporalUpscaleSettings.
[[nodiscard]] TANDEM_API TaskDesc temporal_upscale_task(const std::string& name,
                                                        std::uint32_t input_width,
                                                        std::uint32_t input_height,
                                                        std::uint32_t width, std::uint32_t height);

} // namespace tandem
