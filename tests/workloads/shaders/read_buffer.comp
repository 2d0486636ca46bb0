#version 450
// The task's first input read as a buffer: one uint per texel, written as its RGBA8 bytes.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) readonly buffer Texels { uint texels[]; } source;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    const ivec2 size = imageSize(out_image);
    if (any(greaterThanEqual(p, size))) {
        return;
    }
    imageStore(out_image, p, unpackUnorm4x8(source.texels[p.y * size.x + p.x]));
}
