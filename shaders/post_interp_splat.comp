#version 450
// Frame interpolation, step 1 (src/post/interpolate.hpp): every texel of frame A (z = 0) and B
// (z = 1) is moved to its position at time t and claims the texel it lands on. Phase 0 keeps the
// nearest depth per target texel (atomicMin on the depth's bits: for non-negative floats the
// bit patterns order like the values); phase 1 keeps, among the sources at that depth, the
// smallest source index, so the result does not depend on the order invocations run in.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_depth_a;
layout(binding = 1) uniform sampler2D u_motion_a;
layout(binding = 2) uniform sampler2D u_depth_b;
layout(binding = 3) uniform sampler2D u_motion_b;
layout(binding = 4, std430) buffer Depths { uint depth[]; }; // A's texels, then B's
layout(binding = 5, std430) buffer Sources { uint source[]; };
layout(push_constant) uniform Push {
    ivec2 size;
    float t;
    uint phase;
    uint reversed_depth;
} pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    uint frame = gl_GlobalInvocationID.z;
    if (any(greaterThanEqual(p, pc.size))) {
        return;
    }
    float d;
    vec2 shift;
    if (frame == 0u) {
        // mv_A points to A's texel in the frame before A: constant motion continues the other way.
        d = texelFetch(u_depth_a, p, 0).r;
        shift = -pc.t * texelFetch(u_motion_a, p, 0).rg;
    } else {
        // mv_B points to B's texel in A: at time t it is (1 - t) of the way back there.
        d = texelFetch(u_depth_b, p, 0).r;
        shift = (1.0 - pc.t) * texelFetch(u_motion_b, p, 0).rg;
    }
    if (any(isnan(shift)) || any(isinf(shift))) {
        return;
    }
    ivec2 q = ivec2(floor(vec2(p) + 0.5 + shift));
    if (any(lessThan(q, ivec2(0))) || any(greaterThanEqual(q, pc.size))) {
        return;
    }
    float key = clamp(pc.reversed_depth != 0u ? 1.0 - d : d, 0.0, 1.0);
    uint bits = floatBitsToUint(isnan(key) ? 1.0 : key);
    uint n = uint(pc.size.x * pc.size.y);
    uint slot = frame * n + uint(q.y * pc.size.x + q.x);
    if (pc.phase == 0u) {
        atomicMin(depth[slot], bits);
    } else if (depth[slot] == bits) {
        atomicMin(source[slot], uint(p.y * pc.size.x + p.x));
    }
}
