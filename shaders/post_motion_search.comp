#version 450
#extension GL_GOOGLE_include_directive : require
// Motion from colour, step 3, one pyramid level (coarsest first): per 8x8 block of frame z (A:
// z = 0, B: z = 1), the whole-texel displacement d that best matches it in the other frame (mean
// absolute luminance difference over the block, plus a small penalty on the distance from the
// coarser estimate that keeps flat regions still). The coarsest level searches every d within
// the radius around zero; a finer one searches one texel around zero and around twice the
// vectors of the coarser block under this one's centre and its four neighbours.
//
// A repeating texture needs more than the best vector: at a coarse level the true motion is a
// fraction of a texel (22 texels at full size is 1.375 at a sixteenth) and matches worse at the
// nearest whole texel than the texture's next period, which may fall on a whole texel (112 is
// 7), so the period wins there and the finer levels would inherit it. So above the finest level
// each block also keeps a second hypothesis, its next-best minimum more than a texel away, where
// the block matches well and the second nearly as well; the finer level searches around both,
// and following anything but the estimate costs a fixed switch (k_switch) rather than its
// distance, so the step wins where whole texels let it match exactly. The best is refined to a
// fraction of a texel there (one Lucas-Kanade step, kept where the bilinear match is better),
// which the finer level's prediction doubles. Among equal costs the first candidate wins (a
// fixed order): the result depends on nothing but the inputs.
#include "post_motion.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
// Per level, A's blocks then B's, each with its best vector and a second hypothesis (the best
// again where there is none worth keeping).
layout(binding = 1, std430) buffer Vectors { vec2 vectors[]; };
layout(push_constant) uniform Push {
    ivec2 size;   // this level's texels
    ivec2 blocks; // and blocks
    ivec2 coarse_blocks; // the coarser level's blocks; (0, 0) at the coarsest
    int base;            // this level's first luminance
    int vector_base;     // this level's first vector
    int coarse_vector_base;
    int radius;
    int sub_texel; // 1 above the finest level: a second hypothesis, the best refined
} pc;

const int k_block = 8;
const float k_smoothness = 0.002; // cost per texel of distance from the coarser estimate
const float k_still = 0.005;      // mean luminance difference of a block that does not move
const float k_switch = 0.008;     // cost of following another candidate than the estimate
const int k_minima = 2;           // whole-texel minima kept where sub_texel is set

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


// Hypothesis h (0: the best, 1: the second) of a coarser block, at this level's scale.
vec2 coarse_vector(int frame, ivec2 block, int h) {
    ivec2 b = clamp(block, ivec2(0), pc.coarse_blocks - 1);
    int count = pc.coarse_blocks.x * pc.coarse_blocks.y;
    int i = pc.coarse_vector_base + frame * count + b.y * pc.coarse_blocks.x + b.x;
    return 2.0 * vectors[2 * i + h];
}

ivec2 g_candidates[11]; // whole-texel centres of the neighbourhoods searched
vec2 g_predicted;        // the coarser block's best under this one

// The cost of d beyond its match, found around candidate c: its distance from the coarser
// estimate; around a neighbour's vector or a second hypothesis (c >= 2), at most the cost of
// leaving the estimate and the distance from that candidate, so that another candidate wins
// only where it matches clearly better, and then is not pulled back towards the estimate.
float prior(vec2 d, int c) {
    vec2 off = abs(d - g_predicted);
    float cost = k_smoothness * (off.x + off.y);
    if (c >= 2) {
        vec2 own = abs(d - vec2(g_candidates[c]));
        cost = min(cost, k_switch + k_smoothness * (own.x + own.y));
    }
    return cost;
}

void main() {
    ivec2 block = ivec2(gl_GlobalInvocationID.xy);
    int frame = int(gl_GlobalInvocationID.z);
    if (any(greaterThanEqual(block, pc.blocks))) {
        return;
    }
    ivec2 origin = block * k_block;
    g_predicted = vec2(0.0);
    int count = 1;
    g_candidates[0] = ivec2(0);
    if (pc.coarse_blocks.x > 0) {
        // The coarser block under this block's centre, then its neighbours, each's best and
        // second hypotheses.
        ivec2 under = (origin + k_block / 2) / 2 / k_block;
        g_predicted = coarse_vector(frame, under, 0);
        const ivec2 around[5] = ivec2[5](ivec2(0), ivec2(-1, 0), ivec2(1, 0), ivec2(0, -1),
                                          ivec2(0, 1));
        for (int h = 0; h < 2; ++h) {
            for (int n = 0; n < 5; ++n) {
                g_candidates[count++] = ivec2(round(coarse_vector(frame, under + around[n], h)));
            }
        }
    }
    // The best whole-texel minima, best first, no two within a texel of each other.
    ivec2 minima[k_minima];
    int minima_from[k_minima]; // the candidate each was found around
    float minima_cost[k_minima];
    for (int m = 0; m < k_minima; ++m) {
        minima[m] = ivec2(0);
        minima_from[m] = 0;
        minima_cost[m] = 1e30;
    }
    int kept = pc.sub_texel != 0 ? k_minima : 1;
    // A block that hardly changes (a still region) stays still without a search.
    float still = block_cost(origin, frame, ivec2(0));
    if (still < k_still) {
        count = 0;
    }
    for (int c = 0; c < count; ++c) {
        bool repeated = false;
        for (int k = 0; k < c; ++k) {
            repeated = repeated || g_candidates[k] == g_candidates[c];
        }
        if (repeated) {
            continue; // the same neighbourhood again
        }
        for (int dy = -pc.radius; dy <= pc.radius; ++dy) {
            for (int dx = -pc.radius; dx <= pc.radius; ++dx) {
                ivec2 d = g_candidates[c] + ivec2(dx, dy);
                float cost = block_cost(origin, frame, d) + prior(vec2(d), c);
                // A minimum within a texel of a kept one replaces it if better; else it goes in
                // its place in the order, the last one dropping out.
                int near = -1;
                for (int m = 0; m < kept; ++m) {
                    ivec2 gap = abs(minima[m] - d);
                    if (near < 0 && minima_cost[m] < 1e30 && max(gap.x, gap.y) <= 1) {
                        near = m;
                    }
                }
                int from = near >= 0 ? near : kept - 1;
                if (cost >= minima_cost[from]) {
                    continue;
                }
                int at = from;
                while (at > 0 && cost < minima_cost[at - 1]) {
                    minima[at] = minima[at - 1];
                    minima_from[at] = minima_from[at - 1];
                    minima_cost[at] = minima_cost[at - 1];
                    --at;
                }
                minima[at] = d;
                minima_from[at] = c;
                minima_cost[at] = cost;
            }
        }
    }
    // The best refined to a fraction of a texel where that matches better; the second kept
    // only where it matches nearly as well.
    vec2 best = vec2(minima[0]);
    vec2 second = best;
    if (pc.sub_texel != 0 && count > 0) {
        ivec2 last = min(origin + k_block, pc.size) - 1;
        vec2 refined =
            best + sub_texel_step(pc.base, pc.size, frame, origin, last, minima[0]);
        if (refined != best && mean_difference_at(pc.base, pc.size, frame, origin, last, refined) +
                                       prior(refined, minima_from[0]) <
                                   minima_cost[0]) {
            best = refined;
        }
        // The second, where the best matches well and it nearly as well.
        if (minima_cost[0] <= 0.25 * still && minima_cost[1] <= 2.0 * minima_cost[0] + k_still) {
            second = vec2(minima[1]);
        }
    }
    int i = pc.vector_base + frame * pc.blocks.x * pc.blocks.y + block.y * pc.blocks.x + block.x;
    vectors[2 * i] = best;
    vectors[2 * i + 1] = second;
}
