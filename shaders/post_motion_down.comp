#version 450
#extension GL_GOOGLE_include_directive : require
// Motion from colour, step 2: the next pyramid level, the mean of each 2x2 texels of the one
// above (an odd edge repeats its last texel).
#include "post_motion.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 1, std430) writeonly buffer Down { float down[]; };
layout(push_constant) uniform Push {
    ivec2 size; // the level read
    ivec2 down_size;
    int base;      // the level read's first float
    int down_base; // the level written's
} pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    int frame = int(gl_GlobalInvocationID.z);
    if (any(greaterThanEqual(p, pc.down_size))) {
        return;
    }
    ivec2 s = 2 * p;
    float sum = luma_at(pc.base, pc.size, frame, s) + luma_at(pc.base, pc.size, frame, s + ivec2(1, 0)) +
                luma_at(pc.base, pc.size, frame, s + ivec2(0, 1)) +
                luma_at(pc.base, pc.size, frame, s + ivec2(1, 1));
    down[pc.down_base + frame * pc.down_size.x * pc.down_size.y + p.y * pc.down_size.x + p.x] =
        0.25 * sum;
}
