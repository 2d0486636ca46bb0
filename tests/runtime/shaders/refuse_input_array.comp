#version 450
// Refused: binding 1 is an array of two storage buffers; each input is one.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) readonly buffer Colour { uint colour; } input_colour[2];

void main() {
    const uint c = input_colour[0].colour ^ input_colour[1].colour;
    imageStore(out_image, ivec2(gl_GlobalInvocationID.xy), unpackUnorm4x8(c));
}
