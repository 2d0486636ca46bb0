#version 450
// Refused: the input buffer is in descriptor set 1; Tandem binds set 0 alone.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 1, binding = 1) readonly buffer Colour { uint colour; } input_colour;

void main() {
    imageStore(out_image, ivec2(gl_GlobalInvocationID.xy), unpackUnorm4x8(input_colour.colour));
}
