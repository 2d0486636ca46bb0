#version 450
// Frame interpolation, step 2: per texel of the generated frame, the candidates warped from A
// and from B. Where both frames reached it, their colours are blended by t whatever their depths:
// a disagreement there is, with linear motion, the splat's rounding at a silhouette, where either
// could be right, and the blend costs half the error of the wrong pick. One frame: its colour.
// Neither: a hole (depth -1), for step 3. A candidate's colour is read where its surface was at
// the target texel's centre (the target minus the candidate's own shift, a sub-texel position),
// bilinear: the splat rounded the position to a texel, the colour is not rounded with it.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_color_a;
layout(binding = 1) uniform sampler2D u_color_b;
layout(binding = 2, std430) readonly buffer Depths { uint depth[]; };
layout(binding = 3, std430) readonly buffer Sources { uint source[]; };
layout(binding = 4, rgba16f) uniform writeonly image2D u_resolved;
layout(binding = 5, std430) writeonly buffer Resolved { float resolved_depth[]; };
layout(binding = 6) uniform sampler2D u_motion_a;
layout(binding = 7) uniform sampler2D u_motion_b;
layout(push_constant) uniform Push {
    ivec2 size;
    float t;
} pc;

const uint k_none = 0xffffffffu;

// Bilinear at pos, texel centres at integers, clamped to the frame.
vec4 bilinear(sampler2D color, vec2 pos) {
    ivec2 base = ivec2(floor(pos));
    vec2 f = pos - vec2(base);
    ivec2 hi = pc.size - 1;
    vec4 top = mix(texelFetch(color, clamp(base, ivec2(0), hi), 0),
                   texelFetch(color, clamp(base + ivec2(1, 0), ivec2(0), hi), 0), f.x);
    vec4 bottom = mix(texelFetch(color, clamp(base + ivec2(0, 1), ivec2(0), hi), 0),
                      texelFetch(color, clamp(base + ivec2(1, 1), ivec2(0), hi), 0), f.x);
    return mix(top, bottom, f.y);
}

ivec2 texel(uint index) {
    return ivec2(index % uint(pc.size.x), index / uint(pc.size.x));
}

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
        // A's texel moved by -t mv_A: the surface at q was at q + t mv_A in A.
        vec2 mv = texelFetch(u_motion_a, texel(from_a), 0).rg;
        color = bilinear(u_color_a, vec2(q) + pc.t * mv);
        d = uintBitsToFloat(depth[i]);
    }
    if (from_b != k_none) {
        // B's texel moved by (1 - t) mv_B: the surface at q was at q - (1 - t) mv_B in B.
        vec2 mv = texelFetch(u_motion_b, texel(from_b), 0).rg;
        vec4 color_b = bilinear(u_color_b, vec2(q) - (1.0 - pc.t) * mv);
        float d_b = uintBitsToFloat(depth[n + i]);
        color = from_a == k_none ? color_b : mix(color, color_b, pc.t);
        d = from_a == k_none ? d_b : min(d, d_b);
    }
    imageStore(u_resolved, q, color);
    resolved_depth[i] = d;
}
