#version 450
// Refused for an RGBA8 input: binding 1 reads uint texels (usampler2D), the input has float ones.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) uniform usampler2D colour;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(out_image, p, vec4(texelFetch(colour, p, 0)) / 255.0);
}
