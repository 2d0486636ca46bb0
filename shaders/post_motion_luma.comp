#version 450
// Motion from colour, step 1: the luminance of frames A (z = 0) and B (z = 1), level 0 of the
// pyramid (Rec. 601 weights on the stored values: only differences matter here).
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_color_a;
layout(binding = 1) uniform sampler2D u_color_b;
layout(binding = 2, std430) writeonly buffer Luma { float luma[]; };
layout(push_constant) uniform Push {
    ivec2 size;
} pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    int frame = int(gl_GlobalInvocationID.z);
    if (any(greaterThanEqual(p, pc.size))) {
        return;
    }
    vec3 rgb = frame == 0 ? texelFetch(u_color_a, p, 0).rgb : texelFetch(u_color_b, p, 0).rgb;
    luma[frame * pc.size.x * pc.size.y + p.y * pc.size.x + p.x] =
        dot(rgb, vec3(0.299, 0.587, 0.114));
}
