#version 450
#extension GL_GOOGLE_include_directive : require
// Motion from colour, step 4, per texel of frame z at full size: of the vectors of its own 8x8
// block and the eight around it, the one that best matches a 5x5 window around the texel (so a
// block across an object's edge splits along it), then one Lucas-Kanade step for the sub-texel
// part (kept only where it lowers the cost). Written in InterpolatePass's convention (pixels,
// pointing back one frame: B's vector is where its texel was in A; A's is minus where it goes in
// B, constant motion continued) with a confidence: 1 - 2 cost / (zero-motion cost), scaled down
// where moving the texel gains little over not moving it (flat, still or unmatched regions),
// where the interpolation falls back to the blend (a still window, under a quarter of that step,
// is left still without a search). The depth the interpolation resolves by is
// 1 - confidence: where two texels land on one, the better matched one wins.
#include "post_motion.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 1, std430) readonly buffer Vectors { vec2 vectors[]; }; // level 0's, whole texels
layout(binding = 2, std430) writeonly buffer Motion { uint motion[]; };   // half2, A's then B's
layout(binding = 3, std430) writeonly buffer Depth { float depth[]; };
layout(binding = 4, std430) writeonly buffer Confidence { float confidence[]; };
layout(push_constant) uniform Push {
    ivec2 size;
    ivec2 blocks;
} pc;

const int k_block = 8;
const int k_window = 2;           // 5x5
const float k_smoothness = 0.002; // cost per texel of distance from the block's own vector
const float k_noise = 0.02;       // luminance differences below this are not worth moving for

int g_frame;
ivec2 g_lo;
ivec2 g_hi;

// Mean absolute difference over the window, the other frame at whole-texel offset d.
float window_cost(ivec2 d) {
    float sum = 0.0;
    for (int y = g_lo.y; y <= g_hi.y; ++y) {
        for (int x = g_lo.x; x <= g_hi.x; ++x) {
            ivec2 q = ivec2(x, y);
            sum += abs(luma_at(0, pc.size, g_frame, q) - luma_at(0, pc.size, 1 - g_frame, q + d));
        }
    }
    ivec2 n = g_hi - g_lo + 1;
    return sum / float(n.x * n.y);
}

ivec2 block_vector(ivec2 block) {
    ivec2 b = clamp(block, ivec2(0), pc.blocks - 1);
    int i = g_frame * pc.blocks.x * pc.blocks.y + b.y * pc.blocks.x + b.x;
    return ivec2(round(vectors[2 * i])); // the best of the two hypotheses the search keeps
}


void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    g_frame = int(gl_GlobalInvocationID.z);
    if (any(greaterThanEqual(p, pc.size))) {
        return;
    }
    g_lo = max(p - k_window, ivec2(0));
    g_hi = min(p + k_window, pc.size - 1);
    uint i = uint(g_frame * pc.size.x * pc.size.y + p.y * pc.size.x + p.x);
    // Where the frames hardly differ (a still region) no motion could earn confidence: still,
    // and the search is skipped.
    float still = window_cost(ivec2(0));
    if (still < 0.25 * k_noise) {
        motion[i] = packHalf2x16(vec2(0.0));
        depth[i] = 1.0;
        confidence[i] = 0.0;
        return;
    }
    ivec2 block = p / k_block;
    ivec2 own = block_vector(block);
    // The own block's vector, then its neighbours' in a fixed order, each distinct one costed
    // once (in a smooth field they are mostly the same).
    ivec2 seen[9];
    int distinct = 1;
    seen[0] = own;
    ivec2 best = own;
    float matched = window_cost(own);
    float best_cost = matched;
    for (int by = -1; by <= 1; ++by) {
        for (int bx = -1; bx <= 1; ++bx) {
            ivec2 d = block_vector(block + ivec2(bx, by));
            bool repeated = false;
            for (int k = 0; k < distinct; ++k) {
                repeated = repeated || seen[k] == d;
            }
            if (repeated) {
                continue;
            }
            seen[distinct++] = d;
            ivec2 off = abs(d - own);
            float cost = window_cost(d);
            if (cost + k_smoothness * float(off.x + off.y) < best_cost) {
                best_cost = cost + k_smoothness * float(off.x + off.y);
                best = d;
                matched = cost;
            }
        }
    }
    vec2 v = vec2(best);
    vec2 refined =
        matched > 0.0 ? v + sub_texel_step(0, pc.size, g_frame, g_lo, g_hi, best) : v;
    if (refined != v) {
        float refined_cost = mean_difference_at(0, pc.size, g_frame, g_lo, g_hi, refined);
        if (refined_cost < matched) {
            v = refined;
            matched = refined_cost;
        }
    }
    float conf = clamp(1.0 - 2.0 * matched / max(still, k_noise), 0.0, 1.0) *
                 clamp((still - matched) / k_noise, 0.0, 1.0);

    motion[i] = packHalf2x16(g_frame == 0 ? -v : v);
    depth[i] = 1.0 - conf;
    confidence[i] = conf;
}
