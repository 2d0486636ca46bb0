#version 450
// Frame interpolation, step 3: resolved texels are copied to the output; a hole (seen by neither
// frame: disoccluded in both, or a crack between splats) takes the mean of the farthest texels
// around it (within the tolerance of the farthest depth in a (2r+1)^2 window, weighted by
// distance): what a moving object uncovers is background, so the nearer neighbours are not used.
// A hole with no resolved texel in its window falls back to the blend of A and B.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0, rgba16f) uniform readonly image2D u_resolved;
layout(binding = 1, std430) readonly buffer Resolved { float resolved_depth[]; };
layout(binding = 2) uniform sampler2D u_color_a;
layout(binding = 3) uniform sampler2D u_color_b;
layout(binding = 4, rgba8) uniform writeonly image2D u_out;
layout(push_constant) uniform Push {
    ivec2 size;
    float t;
    float tolerance;
    int radius;
} pc;

void main() {
    ivec2 q = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(q, pc.size))) {
        return;
    }
    if (resolved_depth[q.y * pc.size.x + q.x] >= 0.0) {
        imageStore(u_out, q, imageLoad(u_resolved, q));
        return;
    }
    ivec2 lo = max(q - pc.radius, ivec2(0));
    ivec2 hi = min(q + pc.radius, pc.size - 1);
    float farthest = -1.0;
    for (int y = lo.y; y <= hi.y; ++y) {
        for (int x = lo.x; x <= hi.x; ++x) {
            farthest = max(farthest, resolved_depth[y * pc.size.x + x]);
        }
    }
    if (farthest < 0.0) {
        imageStore(u_out, q, mix(texelFetch(u_color_a, q, 0), texelFetch(u_color_b, q, 0), pc.t));
        return;
    }
    vec4 sum = vec4(0.0);
    float weights = 0.0;
    for (int y = lo.y; y <= hi.y; ++y) {
        for (int x = lo.x; x <= hi.x; ++x) {
            if (resolved_depth[y * pc.size.x + x] >= farthest - pc.tolerance) {
                ivec2 o = ivec2(x, y) - q;
                float w = 1.0 / float(1 + o.x * o.x + o.y * o.y);
                sum += w * imageLoad(u_resolved, ivec2(x, y));
                weights += w;
            }
        }
    }
    imageStore(u_out, q, sum / weights);
}
