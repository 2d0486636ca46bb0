// One axis of the separable Gaussian blur (src/post/blur.hpp). The including file defines
// OUT_FORMAT, the storage format of u_out. Taps outside the image repeat the edge texel, and the
// weights are normalised to sum to one, so a constant image stays exactly constant.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D u_in;
layout(binding = 1, OUT_FORMAT) uniform writeonly image2D u_out;
layout(push_constant) uniform Push {
    ivec2 size;
    ivec2 axis; // (1, 0) horizontal, (0, 1) vertical
    int radius;
    float sigma;
} pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.size))) {
        return;
    }
    float k = -0.5 / (pc.sigma * pc.sigma);
    vec4 sum = vec4(0.0);
    float weights = 0.0;
    for (int i = -pc.radius; i <= pc.radius; ++i) {
        float w = exp(k * float(i * i));
        ivec2 q = clamp(p + i * pc.axis, ivec2(0), pc.size - 1);
        sum += w * texelFetch(u_in, q, 0);
        weights += w;
    }
    imageStore(u_out, p, sum / weights);
}
