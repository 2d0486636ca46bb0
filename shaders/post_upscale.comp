#version 450
// Spatial upscale, step 1 (src/post/upscale.hpp): Lanczos-3 interpolation with an anti-ringing
// clamp. Each output texel maps to input position s (pixel centres aligned) and weighs the 6x6
// input texels around it by the separable Lanczos-3 kernel (normalised per axis, so flat areas
// stay exact). The result is clamped to the range of the central 2x2 texels: the kernel's
// negative lobes keep edges sharp, the clamp removes the halos they would ring into. Why this
// kernel (measured against Catmull-Rom and an edge-directed one): src/post/upscale.hpp.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_in;
layout(binding = 1, rgba16f) uniform writeonly image2D u_out;
layout(push_constant) uniform Push {
    ivec2 in_size;
    ivec2 out_size;
} pc;

const float k_pi = 3.14159265358979;

// Lanczos-3 weight at distance x (in input texels).
float lanczos3(float x) {
    x = abs(x);
    if (x < 1e-5) {
        return 1.0;
    }
    if (x >= 3.0) {
        return 0.0;
    }
    float px = k_pi * x;
    return 3.0 * sin(px) * sin(px / 3.0) / (px * px);
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

    // Taps -2..3 around base on each axis.
    float wx[6];
    float wy[6];
    float sum_x = 0.0;
    float sum_y = 0.0;
    for (int k = 0; k < 6; ++k) {
        wx[k] = lanczos3(float(k - 2) - f.x);
        wy[k] = lanczos3(float(k - 2) - f.y);
        sum_x += wx[k];
        sum_y += wy[k];
    }

    vec4 result = vec4(0.0);
    vec4 lo = vec4(1e9);
    vec4 hi = vec4(-1e9);
    for (int j = 0; j < 6; ++j) {
        vec4 row = vec4(0.0);
        for (int i = 0; i < 6; ++i) {
            ivec2 q = clamp(b + ivec2(i - 2, j - 2), ivec2(0), pc.in_size - 1);
            vec4 c = texelFetch(u_in, q, 0);
            row += wx[i] * c;
            if ((i == 2 || i == 3) && (j == 2 || j == 3)) {
                lo = min(lo, c);
                hi = max(hi, c);
            }
        }
        result += wy[j] * row;
    }
    result /= sum_x * sum_y;
    imageStore(u_out, p, clamp(result, lo, hi));
}
