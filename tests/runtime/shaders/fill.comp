#version 450
// Accepted beside the refused modules: every texel of the output is the RGBA8 colour (packed
// little-endian) of the job's one input buffer, so the output is known exactly.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) readonly buffer Colour { uint colour; } input_colour;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    const ivec2 size = imageSize(out_image);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    imageStore(out_image, p, unpackUnorm4x8(input_colour.colour));
}
