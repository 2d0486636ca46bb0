#version 450
// The real frame's task on the worker when the worker presents (display = worker): the program's
// frame, Tandem's input, written to the task's output unchanged, which the worker then copies
// into its swapchain. A compute task of the layer's own (tandem/compute.hpp): binding 0 the
// output, binding 1 the task's input.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D result;
layout(set = 0, binding = 1) uniform sampler2D frame;

void main() {
    const ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(texel, imageSize(result)))) {
        return;
    }
    imageStore(result, texel, texelFetch(frame, texel, 0));
}
