// Fragment stage of the scene renderer with motion outputs: mesh.frag's colour, the fragment's
// depth as a colour (R32F, gl_FragCoord.z) and its motion in pixels pointing back one frame
// (RG16F): where the surface was on the previous frame's screen minus where it is now, the
// convention of post/interpolate.hpp. Clip y points down the image, so pixel y grows with ndc y.
#version 450

layout(set = 0, binding = 0) uniform sampler2D base_texture;

layout(push_constant) uniform Push {
    mat4 view_proj;
    vec4 light_dir;
    vec4 light_color;
    vec4 ambient;
    vec4 base_color;
} pc;

layout(set = 1, binding = 0) uniform PreviousFrame {
    mat4 previous_view_proj;
    vec4 extent;
} previous;

layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec2 in_uv;
layout(location = 2) in vec4 in_clip;
layout(location = 3) in vec4 in_previous_clip;
layout(location = 0) out vec4 out_color;
layout(location = 1) out float out_depth;
// `precise`: both positions are computed alike (no fused multiply-add in one alone), so a
// surface that did not move has motion exactly 0 on every GPU.
layout(location = 2) precise out vec2 out_motion;

vec4 shade() {
    vec4 base = texture(base_texture, in_uv) * pc.base_color;
    if (pc.light_dir.w > 0.5) {
        return vec4(base.rgb, 1.0);
    }
    vec3 n = normalize(in_normal);
    float diffuse = max(dot(n, -pc.light_dir.xyz), 0.0);
    return vec4(base.rgb * (pc.ambient.rgb + pc.light_color.rgb * diffuse), base.a);
}

vec2 pixel(vec4 clip) {
    return (clip.xy / clip.w * 0.5 + 0.5) * previous.extent.xy;
}

void main() {
    out_color = shade();
    out_depth = gl_FragCoord.z;
    // A surface point that was behind the previous camera (w <= 0) had no place on its screen:
    // no motion rather than an infinite one.
    if (in_previous_clip.w <= 0.0) {
        out_motion = vec2(0.0);
        return;
    }
    out_motion = pixel(in_previous_clip) - pixel(in_clip);
}
