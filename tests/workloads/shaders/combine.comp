#version 450
#extension GL_EXT_samplerless_texture_functions : require
// An engine's pass over its colour and depth: one ComputeTaskDesc buffer (the threshold, binding
// 1), then the task's inputs from binding 2: colour (texture2D, texelFetch), depth (R32F,
// sampler2D) and a buffer input (the fog colour). Texels nearer than the threshold keep their
// colour; the others take the fog colour.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) readonly buffer Settings { float threshold; } settings;
layout(set = 0, binding = 2) uniform texture2D colour;
layout(set = 0, binding = 3) uniform sampler2D depth;
layout(set = 0, binding = 4) readonly buffer Fog { uint rgba; } fog;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(out_image)))) {
        return;
    }
    const float d = texture(depth, (vec2(p) + 0.5) / vec2(textureSize(depth, 0))).r;
    const vec4 c = d < settings.threshold ? texelFetch(colour, p, 0) : unpackUnorm4x8(fog.rgba);
    imageStore(out_image, p, c);
}
