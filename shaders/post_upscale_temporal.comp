#version 450
// Temporal upscale (src/post/temporal_upscale.hpp): each output texel takes what it knew one
// frame before, found along the engine's motion vectors, and this frame's input sample nearest
// to it. The frames are rendered with a sub-pixel jitter that moves their sample positions
// (input texel x samples the scene at x + 0.5 + jitter), so over a few frames a still surface is
// sampled at every output texel's own centre: at 2x with a 2x2 jitter cycle, four frames hold
// the output-size image itself.
//
// The history (rgb, and in alpha the depth of the surface it shows) is kept while its depth lies
// within the current frame's 3x3 neighbourhood of depths (else the surface it showed is gone: a
// disocclusion). On a still texel the new sample enters with a weight that falls with its
// distance from the texel's centre (a Gaussian, `sigma` output texels), so a sample on the
// centre replaces the history and one a texel away leaves it. On a moving texel the history
// (resampled, hence softened) is clamped to the 3x3 neighbourhood's colour range and blended
// with this frame's estimate at the centre (the bilinear one, the nearest sample by its weight)
// by at least `moving_blend`. Where there is no history the output is that estimate.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_colour;  // RGBA8, input size
layout(binding = 1) uniform sampler2D u_depth;   // R32F, input size
layout(binding = 2) uniform sampler2D u_motion;  // RG16F, input texels, pointing back one frame
layout(binding = 3) uniform sampler2D u_history; // RGBA32F, output size: rgb and depth
layout(binding = 4, rgba8) uniform writeonly image2D u_out;
layout(binding = 5, rgba32f) uniform writeonly image2D u_history_out;
layout(push_constant) uniform Push {
    ivec2 in_size;
    ivec2 out_size;
    vec2 jitter;        // this frame's sample offset, input texels
    float sigma;        // the new sample's weight falls off over this many output texels
    float moving_blend; // its least weight on a moving texel
    float depth_tolerance;
    int has_history; // 0: the first frame (or reset)
}
pc;

vec4 colour_at(ivec2 q) {
    return texelFetch(u_colour, clamp(q, ivec2(0), pc.in_size - 1), 0);
}

// Bilinear by hand (the sampler is nearest): `s` in texels of `size`, centres at +0.5.
vec4 bilinear(sampler2D tex, ivec2 size, vec2 s) {
    vec2 f = s - 0.5;
    vec2 b = floor(f);
    vec2 w = f - b;
    ivec2 i = ivec2(b);
    vec4 a = texelFetch(tex, clamp(i, ivec2(0), size - 1), 0);
    vec4 c = texelFetch(tex, clamp(i + ivec2(1, 0), ivec2(0), size - 1), 0);
    vec4 d = texelFetch(tex, clamp(i + ivec2(0, 1), ivec2(0), size - 1), 0);
    vec4 e = texelFetch(tex, clamp(i + ivec2(1, 1), ivec2(0), size - 1), 0);
    return mix(mix(a, c, w.x), mix(d, e, w.x), w.y);
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.out_size))) {
        return;
    }
    vec2 ratio = vec2(pc.in_size) / vec2(pc.out_size); // input texels per output texel
    vec2 centre = (vec2(p) + 0.5) * ratio;             // this texel's centre, input texels
    // The input sample nearest to it, and how far (output texels).
    ivec2 q = clamp(ivec2(floor(centre - pc.jitter)), ivec2(0), pc.in_size - 1);
    vec2 d = (centre - (vec2(q) + 0.5 + pc.jitter)) / ratio;
    vec4 sample_now = colour_at(q);
    float depth_now = texelFetch(u_depth, q, 0).r;
    vec4 spatial = bilinear(u_colour, pc.in_size, centre - pc.jitter);

    vec3 lo = vec3(1e9);
    vec3 hi = vec3(-1e9);
    float near = 1e9;
    float far = -1e9;
    for (int j = -1; j <= 1; ++j) {
        for (int i = -1; i <= 1; ++i) {
            ivec2 n = clamp(q + ivec2(i, j), ivec2(0), pc.in_size - 1);
            vec3 c = texelFetch(u_colour, n, 0).rgb;
            lo = min(lo, c);
            hi = max(hi, c);
            float z = texelFetch(u_depth, n, 0).r;
            near = min(near, z);
            far = max(far, z);
        }
    }

    float w = exp(-0.5 * dot(d, d) / (pc.sigma * pc.sigma));
    vec2 motion = texelFetch(u_motion, q, 0).rg / ratio; // output texels
    bool moving = dot(motion, motion) > 1e-4;
    vec2 before = vec2(p) + 0.5 + motion;
    vec3 result;
    float depth = depth_now;
    bool kept = false;
    if (pc.has_history != 0 && all(greaterThanEqual(before, vec2(0.0))) &&
        all(lessThanEqual(before, vec2(pc.out_size)))) {
        vec4 history = bilinear(u_history, pc.out_size, before);
        if (history.a >= near - pc.depth_tolerance && history.a <= far + pc.depth_tolerance) {
            vec3 h = moving ? clamp(history.rgb, lo, hi) : history.rgb;
            float a = moving ? max(w, pc.moving_blend) : w;
            vec3 now = moving ? mix(spatial.rgb, sample_now.rgb, w) : sample_now.rgb;
            result = mix(h, now, a);
            depth = mix(history.a, depth_now, a);
            kept = true;
        }
    }
    if (!kept) {
        result = mix(spatial.rgb, sample_now.rgb, w);
    }
    imageStore(u_out, p, vec4(result, sample_now.a));
    imageStore(u_history_out, p, vec4(result, depth));
}
