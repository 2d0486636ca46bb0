// Compute tasks from the application's SPIR-V: an engine's own compute pass (a procedural
// texture, particles, a simulation step, a post pass over its own frame) run on whichever device
// Tandem places the task.
//
// clang-format off
//     tandem::ComputeTaskDesc compute;
//     compute.spirv = my_shader_words;                  // GLCompute, entry point "main"
//     compute.push_constant_bytes = 8;                  // the first 8 submitted bytes
//     compute.input_bytes = {1024};                     // one storage buffer: the next 1024 bytes
//     tandem::TaskDesc desc;
//     desc.factory = tandem::compute_workload(compute); // throws Error for a module that does not fit
//     ...
//     runtime.submit(task, bytes);                      // 8 + 1024 bytes per job
// clang-format on
//
// The shader's interface, in descriptor set 0: binding 0 the output, a storage image of the
// task's format and size (written by imageStore; Tandem dispatches ceil(width / local_size_x) x
// ceil(height / local_size_y) workgroups); bindings 1..N the ComputeTaskDesc's inputs, storage
// buffers holding what each job submitted; then bindings N+1.. the task's inputs
// (TaskDesc::inputs, tandem/input.hpp) in their declared order, the application's images, chained
// inputs and buffer inputs alike; one push-constant block of push_constant_bytes. Each job's
// bytes are the push constants followed by every ComputeTaskDesc input in order, copied and
// uploaded with the job; a job whose bytes do not add up is refused by submit() (Failed,
// TaskError::BadBytes) with a sentence, and nothing changes.
//
// A task's image input is read as the module declares it: a sampler2D (Tandem's sampler:
// nearest, clamp to edge, normalised coordinates: texture() at a texel's centre is that texel),
// a texture2D (texelFetch, GL_EXT_samplerless_texture_functions), both reading the input in
// place, or a readonly image2D (imageLoad) with the input's format qualifier (or none, where the
// device reads the format without one): the job then copies the input into a storage image of
// the workload's first (Tandem's input images are made for sampling) and leaves the input in the
// layout it arrived in. A chained input is read in place only: sampler2D or texture2D. A buffer
// input (TaskInputDesc::buffer_size) is a readonly buffer block of its size. A binding the module
// does not declare is not bound; the module may read only some inputs. An engine's post pass:
//
// clang-format off
//     layout(local_size_x = 8, local_size_y = 8) in;
//     layout(set = 0, binding = 0, rgba8) uniform writeonly image2D result;
//     layout(set = 0, binding = 1) uniform sampler2D colour;   // desc.inputs[0], RGBA8
//     layout(set = 0, binding = 2) uniform sampler2D depth;    // desc.inputs[1], R32F
//     void main() { ... imageStore(result, p, fogged(texture(colour, uv), texture(depth, uv).r)); }
//
//     desc.inputs = {{.name = "colour"}, {.name = "depth", .format = VK_FORMAT_R32_SFLOAT}};
//     desc.factory = tandem::compute_workload(compute);       // compute.input_bytes empty
//     tandem::InputImage frame[] = {colour_input, depth_input};
//     (void)runtime.submit(task, {}, frame);                   // examples/postpass
// clang-format on
//
// compute_workload() validates the module with SPIRV-Tools and reflects it with SPIRV-Cross
// before any device is touched, and refuses with a tandem::Error naming what differs: invalid
// SPIR-V, a missing entry point, a workgroup size or push-constant block that does not match the
// description, and every descriptor that is not the interface above (the error names its set
// and binding, what the module has there and what the description says): a descriptor set
// other than 0, a binding of another type (a separate sampler, a uniform buffer, an image where
// a buffer is declared, a storage image input not declared readonly) or an array of descriptors,
// a binding past the declared inputs and the 8 a task may have, an input buffer whose size does
// not match, no output image. What only the task tells is checked when the task is registered
// (register_task throws, a move fails the preparation), before any pipeline is made: the output
// image's format qualifier must be the task's format (rgba8 for RGBA8, r32f for R32F, ...) or
// absent where the device writes that format without one, its texel type the format's, the
// workgroup and push constants within the device's limits; each binding of a task input must
// name one the task has and fit it (an image for an image, a buffer block of its size for a
// buffer, a storage image of its format the device can read, never for a chained input).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tandem/export.hpp"
#include "tandem/workload.hpp"

namespace tandem {

struct ComputeTaskDesc {
    std::vector<std::uint32_t> spirv; // the module's words
    std::string entry_point = "main";
    // The module's LocalSize; zero: whatever the module declares. Checked when given.
    std::array<std::uint32_t, 3> workgroup_size{0, 0, 0};
    // Size of the module's push-constant block (0: it has none), taken from each job's bytes.
    std::uint32_t push_constant_bytes = 0;
    // Sizes of the storage buffers at bindings 1..N (at most 8), in bytes. A buffer whose block
    // ends in a runtime array takes any size that holds whole elements after the fixed part.
    // The task's own inputs (TaskDesc::inputs) follow at bindings N+1.. (see above).
    std::vector<std::uint32_t> input_bytes;
};

inline constexpr std::size_t k_max_compute_inputs = 8;

// A workload factory for TaskDesc::factory running `desc`'s module. Throws tandem::Error.
[[nodiscard]] TANDEM_API WorkloadFactory compute_workload(const ComputeTaskDesc& desc);

} // namespace tandem
