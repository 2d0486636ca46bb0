#version 450
#extension GL_GOOGLE_include_directive : require
// Motion from colour, step 3, one pyramid level (coarsest first): per 8x8 block of frame z (A:
// z = 0, B: z = 1), the whole-texel displacement d that best matches it in the other frame
// (mean absolute luminance difference over the block). The coarsest level searches every d
// within the radius around zero; a finer one searches one texel around zero and around twice
// the vectors of the coarser block under this one's centre and its four neighbours. Among equal
// costs the first candidate wins (a fixed order), and a small penalty on the distance from the
// coarser estimate keeps flat regions still: the result depends on nothing but the inputs.
#include "post_motion.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 1, std430) buffer Vectors { ivec2 vectors[]; }; // per level, A's then B's
layout(push_constant) uniform Push {
    ivec2 size;   // this level's texels
    ivec2 blocks; // and blocks
    ivec2 coarse_blocks; // the coarser level's blocks; (0, 0) at the coarsest
    int base;            // this level's first luminance
    int vector_base;     // this level's first vector
    int coarse_vector_base;
    int radius;
} pc;

const int k_block = 8;
const float k_smoothness = 0.002; // cost per texel of distance from the coarser estimate
const float k_still = 0.005;      // mean luminance difference of a block that does not move

float block_cost(ivec2 origin, int frame, ivec2 d) {
    ivec2 end = min(origin + k_block, pc.size);
    float sum = 0.0;
    for (int y = origin.y; y < end.y; ++y) {
        for (int x = origin.x; x < end.x; ++x) {
            ivec2 p = ivec2(x, y);
            sum += abs(luma_at(pc.base, pc.size, frame, p) -
                       luma_at(pc.base, pc.size, 1 - frame, p + d));
        }
    }
    ivec2 n = end - origin;
    return sum / float(n.x * n.y);
}

ivec2 coarse_vector(int frame, ivec2 block) {
    ivec2 b = clamp(block, ivec2(0), pc.coarse_blocks - 1);
    int count = pc.coarse_blocks.x * pc.coarse_blocks.y;
    return 2 * vectors[pc.coarse_vector_base + frame * count + b.y * pc.coarse_blocks.x + b.x];
}

void main() {
    ivec2 block = ivec2(gl_GlobalInvocationID.xy);
    int frame = int(gl_GlobalInvocationID.z);
    if (any(greaterThanEqual(block, pc.blocks))) {
        return;
    }
    ivec2 origin = block * k_block;
    ivec2 predicted = ivec2(0);
    ivec2 candidates[6];
    int count = 1;
    candidates[0] = ivec2(0);
    if (pc.coarse_blocks.x > 0) {
        // The coarser block under this block's centre, then its neighbours.
        ivec2 under = (origin + k_block / 2) / 2 / k_block;
        predicted = coarse_vector(frame, under);
        candidates[1] = predicted;
        candidates[2] = coarse_vector(frame, under + ivec2(-1, 0));
        candidates[3] = coarse_vector(frame, under + ivec2(1, 0));
        candidates[4] = coarse_vector(frame, under + ivec2(0, -1));
        candidates[5] = coarse_vector(frame, under + ivec2(0, 1));
        count = 6;
    }
    ivec2 best = ivec2(0);
    float best_cost = 1e30;
    // A block that hardly changes (a still region) stays still without a search.
    if (block_cost(origin, frame, ivec2(0)) < k_still) {
        count = 0;
    }
    for (int c = 0; c < count; ++c) {
        bool repeated = false;
        for (int k = 0; k < c; ++k) {
            repeated = repeated || candidates[k] == candidates[c];
        }
        if (repeated) {
            continue; // the same neighbourhood again
        }
        for (int dy = -pc.radius; dy <= pc.radius; ++dy) {
            for (int dx = -pc.radius; dx <= pc.radius; ++dx) {
                ivec2 d = candidates[c] + ivec2(dx, dy);
                ivec2 off = abs(d - predicted);
                float cost = block_cost(origin, frame, d) + k_smoothness * float(off.x + off.y);
                if (cost < best_cost) {
                    best_cost = cost;
                    best = d;
                }
            }
        }
    }
    vectors[pc.vector_base + frame * pc.blocks.x * pc.blocks.y + block.y * pc.blocks.x + block.x] =
        best;
}
