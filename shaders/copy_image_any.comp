#version 460
// The runtime's compute copy for 8-bit colour formats without a GLSL format of their own (BGRA8):
// the same as copy_image_rgba8.comp, the store's format taken from the view (a format whose
// features include STORAGE_WRITE_WITHOUT_FORMAT).
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform texture2D source;
layout(binding = 1) uniform writeonly image2D target;

void main() {
    const ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(texel, imageSize(target)))) {
        return;
    }
    imageStore(target, texel, texelFetch(source, texel, 0));
}
