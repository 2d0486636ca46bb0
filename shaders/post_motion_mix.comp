#version 450
// Motion from colour, step 5: the interpolated frame where the motion is trusted, the blend of A
// and B where it is not, mixed by the larger confidence of either frame's texels around the
// output texel (a texel that a matched surface left or reached keeps the interpolation).
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_color_a;
layout(binding = 1) uniform sampler2D u_color_b;
layout(binding = 2, rgba8) uniform readonly image2D u_interpolated;
layout(binding = 3, std430) readonly buffer Confidence { float confidence[]; }; // A's then B's
layout(binding = 4, rgba8) uniform writeonly image2D u_out;
layout(push_constant) uniform Push {
    ivec2 size;
    float t;
} pc;

void main() {
    ivec2 q = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(q, pc.size))) {
        return;
    }
    int n = pc.size.x * pc.size.y;
    float conf = 0.0;
    for (int y = max(q.y - 1, 0); y <= min(q.y + 1, pc.size.y - 1); ++y) {
        for (int x = max(q.x - 1, 0); x <= min(q.x + 1, pc.size.x - 1); ++x) {
            int i = y * pc.size.x + x;
            conf = max(conf, max(confidence[i], confidence[n + i]));
        }
    }
    vec4 blend = mix(texelFetch(u_color_a, q, 0), texelFetch(u_color_b, q, 0), pc.t);
    imageStore(u_out, q, conf <= 0.0 ? blend : mix(blend, imageLoad(u_interpolated, q), conf));
}
