#version 450
// The engine's own post pass over its frame: its colour, fogged past a depth. Binding 0 is the
// task's output; the task's inputs follow in their declared order (the ComputeTaskDesc has no
// buffers): binding 1 the colour, binding 2 the depth, both through Tandem's nearest sampler.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D result;
layout(set = 0, binding = 1) uniform sampler2D colour;
layout(set = 0, binding = 2) uniform sampler2D depth;
layout(push_constant) uniform Fog {
    vec4 colour;
    float start; // depths from here on are fog
} fog;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(result)))) {
        return;
    }
    const vec2 uv = (vec2(p) + 0.5) / vec2(imageSize(result));
    const float d = texture(depth, uv).r;
    imageStore(result, p, d < fog.start ? texture(colour, uv) : fog.colour);
}
