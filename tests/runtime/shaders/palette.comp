#version 450
// A compute task's test shader: texel (x, y) of generation g is palette[(x + y + g) % count],
// an RGBA8 colour packed little-endian, so a CPU reference gives the same bytes.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) readonly buffer Palette { uint colours[]; } palette;
layout(set = 0, binding = 2) readonly buffer Offset { uint offset; } shift;
layout(push_constant) uniform Push { uint generation; uint count; } push;

void main() {
    const uvec2 p = gl_GlobalInvocationID.xy;
    const ivec2 size = imageSize(out_image);
    if (p.x >= uint(size.x) || p.y >= uint(size.y)) {
        return;
    }
    const uint c = palette.colours[(p.x + p.y + push.generation + shift.offset) % push.count];
    imageStore(out_image, ivec2(p), unpackUnorm4x8(c));
}
