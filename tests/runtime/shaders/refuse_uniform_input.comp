#version 450
// Refused: binding 1 is a uniform buffer where the description's input is a storage buffer.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) uniform Colour { uvec4 colour; } input_colour;

void main() {
    imageStore(out_image, ivec2(gl_GlobalInvocationID.xy), unpackUnorm4x8(input_colour.colour.x));
}
