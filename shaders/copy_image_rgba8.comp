#version 460
// The runtime's compute copy of an application's RGBA8 image into one of Tandem's
// (src/runtime/compute_copy.hpp): one texel per invocation, fetched unfiltered and stored as is.
// 8-bit UNORM values survive the trip through float exactly.
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform texture2D source;
layout(binding = 1, rgba8) uniform writeonly image2D target;

void main() {
    const ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(texel, imageSize(target)))) {
        return;
    }
    imageStore(target, texel, texelFetch(source, texel, 0));
}
