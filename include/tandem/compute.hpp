// Compute tasks from the application's SPIR-V: an engine's own compute pass (a procedural
// texture, particles, a simulation step) run on whichever device Tandem places the task.
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
// ceil(height / local_size_y) workgroups); bindings 1..N the inputs, storage buffers holding what
// each job submitted; one push-constant block of push_constant_bytes. Each job's bytes are the
// push constants followed by every input in order, copied and uploaded with the job; a job whose
// bytes do not add up is refused by submit() (Failed, TaskError::BadBytes) with a sentence, and
// nothing changes.
//
// compute_workload() validates the module with SPIRV-Tools and reflects it with SPIRV-Cross
// before any device is touched, and refuses with a tandem::Error naming what differs: invalid
// SPIR-V, a missing entry point, a workgroup size or push-constant block that does not match the
// description, and every descriptor that is not exactly the interface above (the error names
// its set and binding, what the module has there and what the description says): a descriptor
// set other than 0, a binding of another type (a sampler, a uniform buffer, an image where a
// buffer is declared) or an array of descriptors, a binding past the declared inputs, an input
// buffer whose size does not match, no output image. What only the task tells is checked when
// the task is registered (register_task throws, a move fails the preparation), before any
// pipeline is made: the output image's format qualifier must be the task's format (rgba8 for
// RGBA8, r32f for R32F, ...) or absent where the device writes that format without one, its
// texel type the format's, and the workgroup and push constants within the device's limits.
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
    std::vector<std::uint32_t> input_bytes;
};

inline constexpr std::size_t k_max_compute_inputs = 8;

// A workload factory for TaskDesc::factory running `desc`'s module. Throws tandem::Error.
[[nodiscard]] TANDEM_API WorkloadFactory compute_workload(const ComputeTaskDesc& desc);

} // namespace tandem
