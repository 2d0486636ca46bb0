#version 450
// Refused for an RGBA8 task: the output is declared rgba32f, a format its image cannot have.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba32f) uniform writeonly image2D out_image;

void main() {
    imageStore(out_image, ivec2(gl_GlobalInvocationID.xy), vec4(1.0, 0.5, 0.25, 1.0));
}
