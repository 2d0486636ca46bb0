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
