#version 450
// A producer for chains: every texel a hash of its position and the job's frame.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(push_constant) uniform Push { uint frame; } push;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(out_image)))) {
        return;
    }
    const uint texel = uint(p.x) * 0x01030507u ^ uint(p.y) * 0x0b0d1113u ^ push.frame * 0x9e3779b9u;
    imageStore(out_image, p, unpackUnorm4x8(texel));
}
