#version 450
// Deterministic animated test pattern: texel (x, y) of generation g is a pure function of
// (g, x, y, width, height), so any delivered image can be checked against a CPU reference
// (src/workloads/pattern_reference.cpp computes the same values).
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0, rgba8) uniform writeonly image2D u_out;
layout(push_constant) uniform Push {
    uint generation;
    uint width;
    uint height;
} pc;

uint hash(uint v) {
    v ^= v >> 16;
    v *= 0x7feb352du;
    v ^= v >> 15;
    v *= 0x846ca68bu;
    v ^= v >> 16;
    return v;
}

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) {
        return;
    }
    uint h = hash(p.x + p.y * pc.width + pc.generation * 0x9e3779b9u);
    uvec4 c = uvec4((p.x + pc.generation) & 255u, (p.y + 2u * pc.generation) & 255u,
                    h & 255u, 255u);
    imageStore(u_out, ivec2(p), vec4(c) / 255.0);
}
