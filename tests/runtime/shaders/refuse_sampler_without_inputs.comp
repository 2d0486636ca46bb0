#version 450
// Refused: binding 1 is a combined image sampler while the description declares no inputs (the
// module that once built a pipeline layout without that binding).
layout(local_size_x = 8, local_size_y = 4, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) uniform sampler2D source;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(out_image, p, texelFetch(source, p, 0));
}
