#version 450
// Spatial upscale, step 1 (src/post/upscale.hpp): edge-directed interpolation. Each output texel
// maps to input position s (pixel centres aligned) and reads the 4x4 input texels around it.
// The luma gradients of the central 2x2 (central differences, weighted bilinearly by s) form a
// structure tensor; its dominant eigenvector is the edge normal and its coherence says how
// clearly one edge direction dominates; the ratio of central to outer differences tells a step
// (an edge) from a ramp. On an edge the texels are weighted by an anisotropic Gaussian, narrow
// across the edge and wide along it, so the edge is continued instead of stair-stepped and not
// smeared across; in flat, noisy or smoothly ramped areas Catmull-Rom bicubic is used. The
// result is clamped to the range of the central 2x2 texels (no ringing).
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_in;
layout(binding = 1, rgba16f) uniform writeonly image2D u_out;
layout(push_constant) uniform Push {
    ivec2 in_size;
    ivec2 out_size;
    float edge_low;  // gradient magnitude (luma per texel) below which the area is flat
    float edge_high; // and above which an edge gets the full directional kernel
    float across;    // sigma of the kernel across the edge, in input texels
    float along;     // and along it
} pc;

// Ratio of the central to the outer squared luma differences: about 1 on a ramp, large on a
// step between the central texels; the directional kernel fades in between these two.
const float k_step_low = 1.2;
const float k_step_high = 3.0;

float luma(vec4 c) { return dot(c.rgb, vec3(0.299, 0.587, 0.114)); }

// Catmull-Rom weights of taps -1, 0, 1, 2 for fraction f.
vec4 catmull_rom(float f) {
    float f2 = f * f;
    float f3 = f2 * f;
    return vec4(-0.5 * f3 + f2 - 0.5 * f, 1.5 * f3 - 2.5 * f2 + 1.0,
                -1.5 * f3 + 2.0 * f2 + 0.5 * f, 0.5 * f3 - 0.5 * f2);
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.out_size))) {
        return;
    }
    vec2 s = (vec2(p) + 0.5) * vec2(pc.in_size) / vec2(pc.out_size) - 0.5;
    vec2 base = floor(s);
    vec2 f = s - base;
    ivec2 b = ivec2(base);

    vec4 c[4][4];
    float l[4][4];
    for (int j = 0; j < 4; ++j) {
        for (int i = 0; i < 4; ++i) {
            ivec2 q = clamp(b + ivec2(i - 1, j - 1), ivec2(0), pc.in_size - 1);
            c[j][i] = texelFetch(u_in, q, 0);
            l[j][i] = luma(c[j][i]);
        }
    }

    vec4 wx = catmull_rom(f.x);
    vec4 wy = catmull_rom(f.y);
    vec4 bicubic = vec4(0.0);
    for (int j = 0; j < 4; ++j) {
        for (int i = 0; i < 4; ++i) {
            bicubic += wy[j] * wx[i] * c[j][i];
        }
    }

    float jxx = 0.0;
    float jxy = 0.0;
    float jyy = 0.0;
    for (int j = 1; j <= 2; ++j) {
        for (int i = 1; i <= 2; ++i) {
            float gx = 0.5 * (l[j][i + 1] - l[j][i - 1]);
            float gy = 0.5 * (l[j + 1][i] - l[j - 1][i]);
            float w = (i == 1 ? 1.0 - f.x : f.x) * (j == 1 ? 1.0 - f.y : f.y);
            jxx += w * gx * gx;
            jxy += w * gx * gy;
            jyy += w * gy * gy;
        }
    }
    float trace = jxx + jyy;
    float disc = sqrt((jxx - jyy) * (jxx - jyy) + 4.0 * jxy * jxy);
    float coherence = trace > 1e-10 ? disc / trace : 0.0;
    float strength = sqrt(0.5 * (trace + disc));
    // Eigenvector of the larger eigenvalue: the gradient direction, normal to the edge.
    vec2 v = vec2(jxx - jyy + disc, 2.0 * jxy);
    vec2 normal = dot(v, v) > 1e-20 ? normalize(v) : vec2(0.0, 1.0);
    vec2 tangent = vec2(-normal.y, normal.x);

    float ka = -0.5 / (pc.across * pc.across);
    float kb = -0.5 / (pc.along * pc.along);
    vec4 sum = vec4(0.0);
    float weights = 0.0;
    for (int j = 0; j < 4; ++j) {
        for (int i = 0; i < 4; ++i) {
            vec2 d = vec2(i - 1, j - 1) - f;
            float a = dot(d, normal);
            float t = dot(d, tangent);
            float w = exp(ka * a * a + kb * t * t);
            sum += w * c[j][i];
            weights += w;
        }
    }
    vec4 directional = sum / weights;

    // Step or ramp: a ramp changes as much between the outer texels as between the central
    // ones (bicubic reproduces it), a step concentrates its change between the central ones.
    float central = 0.0;
    float outer = 0.0;
    for (int k = 1; k <= 2; ++k) {
        float cx = l[k][2] - l[k][1];
        float cy = l[2][k] - l[1][k];
        central += cx * cx + cy * cy;
        float ox0 = l[k][1] - l[k][0];
        float ox1 = l[k][3] - l[k][2];
        float oy0 = l[1][k] - l[0][k];
        float oy1 = l[3][k] - l[2][k];
        outer += 0.5 * (ox0 * ox0 + ox1 * ox1 + oy0 * oy0 + oy1 * oy1);
    }
    float step_ratio = central / max(outer, 1e-8);

    float edge = coherence * smoothstep(pc.edge_low, pc.edge_high, strength) *
                 smoothstep(k_step_low, k_step_high, step_ratio);
    vec4 result = mix(bicubic, directional, edge);
    vec4 lo = min(min(c[1][1], c[1][2]), min(c[2][1], c[2][2]));
    vec4 hi = max(max(c[1][1], c[1][2]), max(c[2][1], c[2][2]));
    imageStore(u_out, p, clamp(result, lo, hi));
}
