#version 450
// Frame interpolation, step 2: per texel of the generated frame, the candidates warped from A
// and from B. Both present at depths within the tolerance: the same surface, blended by t.
// Otherwise the nearer one wins, or the only one. Neither: a hole (depth -1), for step 3.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_color_a;
layout(binding = 1) uniform sampler2D u_color_b;
layout(binding = 2, std430) readonly buffer Depths { uint depth[]; };
layout(binding = 3, std430) readonly buffer Sources { uint source[]; };
layout(binding = 4, rgba16f) uniform writeonly image2D u_resolved;
layout(binding = 5, std430) writeonly buffer Resolved { float resolved_depth[]; };
layout(push_constant) uniform Push {
    ivec2 size;
    float t;
    float tolerance;
} pc;

const uint k_none = 0xffffffffu;

void main() {
    ivec2 q = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(q, pc.size))) {
        return;
    }
    uint n = uint(pc.size.x * pc.size.y);
    uint i = uint(q.y * pc.size.x + q.x);
    uint from_a = source[i];
    uint from_b = source[n + i];
    vec4 color = vec4(0.0);
    float d = -1.0;
    if (from_a != k_none) {
        color = texelFetch(u_color_a, ivec2(from_a % uint(pc.size.x), from_a / uint(pc.size.x)), 0);
        d = uintBitsToFloat(depth[i]);
    }
    if (from_b != k_none) {
        vec4 color_b =
            texelFetch(u_color_b, ivec2(from_b % uint(pc.size.x), from_b / uint(pc.size.x)), 0);
        float d_b = uintBitsToFloat(depth[n + i]);
        if (from_a == k_none || d_b < d - pc.tolerance) {
            color = color_b;
            d = d_b;
        } else if (abs(d_b - d) <= pc.tolerance) {
            color = mix(color, color_b, pc.t);
            d = min(d, d_b);
        }
    }
    imageStore(u_resolved, q, color);
    resolved_depth[i] = d;
}
