#version 450
// tandem-bench-shared-image's compute copy: each invocation moves one texel from `source` to
// `target` (same size, RGBA8), the way a copy made on the GPU's shader cores would.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, rgba8) uniform readonly image2D source;
layout(binding = 1, rgba8) uniform writeonly image2D target;

void main() {
    const ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(texel, imageSize(target)))) {
        return;
    }
    imageStore(target, texel, imageLoad(source, texel));
}
