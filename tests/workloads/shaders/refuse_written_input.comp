#version 450
// Refused: the task's input at binding 1 is a storage image not declared readonly.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1, rgba8) uniform image2D colour;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(colour, p, vec4(0.0));
    imageStore(out_image, p, imageLoad(colour, p));
}
