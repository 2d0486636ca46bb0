#version 450
// Spatial upscale, step 2: contrast-adaptive sharpening of the interpolated image into the
// output. Each texel moves away from the mean of its four neighbours by `amount`, scaled down
// where the neighbourhood's contrast is already high (an edge needs little, a soft detail more),
// and is clamped to the neighbourhood's range, so nothing overshoots into halos.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_in;
layout(binding = 1, rgba8) uniform writeonly image2D u_out;
layout(push_constant) uniform Push {
    ivec2 size;
    float amount;
    float adapt; // 0: the same everywhere, 1: none at full contrast
} pc;

vec4 fetch(ivec2 q) { return texelFetch(u_in, clamp(q, ivec2(0), pc.size - 1), 0); }

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.size))) {
        return;
    }
    vec4 c = fetch(p);
    vec4 n = fetch(p + ivec2(0, -1));
    vec4 s = fetch(p + ivec2(0, 1));
    vec4 w = fetch(p + ivec2(-1, 0));
    vec4 e = fetch(p + ivec2(1, 0));
    vec4 lo = min(c, min(min(n, s), min(w, e)));
    vec4 hi = max(c, max(max(n, s), max(w, e)));
    vec3 range = hi.rgb - lo.rgb;
    float contrast = clamp(max(range.r, max(range.g, range.b)), 0.0, 1.0);
    float k = pc.amount * (1.0 - pc.adapt * contrast);
    vec4 sharpened = clamp(c + k * (c - 0.25 * (n + s + w + e)), lo, hi);
    imageStore(u_out, p, vec4(sharpened.rgb, c.a));
}
