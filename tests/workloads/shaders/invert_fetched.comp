#version 450
#extension GL_EXT_samplerless_texture_functions : require
// The task's first input (a chain's producer output, say) read with texelFetch, written
// inverted.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) uniform texture2D source;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(out_image)))) {
        return;
    }
    const vec4 c = texelFetch(source, p, 0);
    imageStore(out_image, p, vec4(1.0 - c.rgb, c.a));
}
