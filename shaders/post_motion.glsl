// What the motion-from-colour shaders (src/post/colour_motion.hpp) share: the luminance pyramid
// in one buffer (per level, frame A's texels then B's, rows packed), read with the edge texel
// repeated outside the image.
layout(binding = 0, std430) readonly buffer Luma { float luma[]; };

// Frame `frame`'s luminance at `p` on a level of `size` starting at `base`, clamped to the edge.
float luma_at(int base, ivec2 size, int frame, ivec2 p) {
    ivec2 c = clamp(p, ivec2(0), size - 1);
    return luma[base + frame * size.x * size.y + c.y * size.x + c.x];
}

// The same, bilinear at a sub-texel position (texel centres at integers).
float luma_bilinear(int base, ivec2 size, int frame, vec2 pos) {
    ivec2 i = ivec2(floor(pos));
    vec2 f = pos - vec2(i);
    float top = mix(luma_at(base, size, frame, i), luma_at(base, size, frame, i + ivec2(1, 0)), f.x);
    float bottom = mix(luma_at(base, size, frame, i + ivec2(0, 1)),
                       luma_at(base, size, frame, i + ivec2(1, 1)), f.x);
    return mix(top, bottom, f.y);
}

// Mean absolute difference between frame `frame`'s texels lo..hi (inclusive) and the other
// frame's at those positions moved by a fractional d, read bilinearly.
float mean_difference_at(int base, ivec2 size, int frame, ivec2 lo, ivec2 hi, vec2 d) {
    float sum = 0.0;
    for (int y = lo.y; y <= hi.y; ++y) {
        for (int x = lo.x; x <= hi.x; ++x) {
            sum += abs(luma_at(base, size, frame, ivec2(x, y)) -
                       luma_bilinear(base, size, 1 - frame, vec2(x, y) + d));
        }
    }
    ivec2 n = hi - lo + 1;
    return sum / float(n.x * n.y);
}

// One Gauss-Newton (Lucas-Kanade) step on the squared differences of texels lo..hi (inclusive)
// against the other frame at whole-texel d: the fraction of a texel to add to d, at most half a
// texel each way (zero where the gradients do not determine it).
vec2 sub_texel_step(int base, ivec2 size, int frame, ivec2 lo, ivec2 hi, ivec2 d) {
    int other = 1 - frame;
    mat2 gtg = mat2(0.0);
    vec2 gte = vec2(0.0);
    for (int y = lo.y; y <= hi.y; ++y) {
        for (int x = lo.x; x <= hi.x; ++x) {
            ivec2 q = ivec2(x, y) + d;
            vec2 g = 0.5 * vec2(luma_at(base, size, other, q + ivec2(1, 0)) -
                                    luma_at(base, size, other, q - ivec2(1, 0)),
                                luma_at(base, size, other, q + ivec2(0, 1)) -
                                    luma_at(base, size, other, q - ivec2(0, 1)));
            float e = luma_at(base, size, other, q) - luma_at(base, size, frame, ivec2(x, y));
            gtg += outerProduct(g, g);
            gte += g * e;
        }
    }
    float det = determinant(gtg);
    if (!(det > 1e-8)) {
        return vec2(0.0);
    }
    return clamp(-(inverse(gtg) * gte), vec2(-0.5), vec2(0.5));
}
