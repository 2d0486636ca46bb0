#version 450
// The engine's procedural texture: integer ripples around a centre that moves with the frame,
// tinted by a palette the engine uploads with each job. Integer maths only, so the program's
// CPU reference gives the same bytes.
layout(local_size_x = 16, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) readonly buffer Palette { uint colours[8]; } palette;
layout(push_constant) uniform Push { uint frame; uint cx; uint cy; } push;

void main() {
    const uvec2 p = gl_GlobalInvocationID.xy;
    const ivec2 size = imageSize(out_image);
    if (p.x >= uint(size.x) || p.y >= uint(size.y)) {
        return;
    }
    const uint dx = p.x > push.cx ? p.x - push.cx : push.cx - p.x;
    const uint dy = p.y > push.cy ? p.y - push.cy : push.cy - p.y;
    const uint ring = (dx * dx + dy * dy + push.frame * 97u) / 64u;
    imageStore(out_image, ivec2(p), unpackUnorm4x8(palette.colours[ring % 8u]));
}
