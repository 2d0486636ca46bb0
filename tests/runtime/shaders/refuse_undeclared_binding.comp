#version 450
// Refused: a storage buffer at binding 7, beyond the description's one input (binding 1).
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) readonly buffer Colour { uint colour; } input_colour;
layout(set = 0, binding = 7) readonly buffer Mask { uint mask; } input_mask;

void main() {
    const uint c = input_colour.colour & input_mask.mask;
    imageStore(out_image, ivec2(gl_GlobalInvocationID.xy), unpackUnorm4x8(c));
}
