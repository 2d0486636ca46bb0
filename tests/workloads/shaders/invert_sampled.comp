#version 450
// The task's colour input (TaskDesc::inputs[0], binding 1: no ComputeTaskDesc buffers) read
// through Tandem's nearest sampler at each texel's centre, written inverted.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1) uniform sampler2D colour;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(out_image)))) {
        return;
    }
    const vec4 c = texture(colour, (vec2(p) + 0.5) / vec2(textureSize(colour, 0)));
    imageStore(out_image, p, vec4(1.0 - c.rgb, c.a));
}
