// Fragment stage of the scene renderer: base colour (factor x texture), directional + ambient
// light; display surfaces (light_dir.w = 1) show their texture unlit.
#version 450

layout(set = 0, binding = 0) uniform sampler2D base_texture;

layout(push_constant) uniform Push {
    mat4 view_proj;
    vec4 light_dir;
    vec4 light_color;
    vec4 ambient;
    vec4 base_color;
} pc;

layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec2 in_uv;
layout(location = 0) out vec4 out_color;

void main() {
    vec4 base = texture(base_texture, in_uv) * pc.base_color;
    if (pc.light_dir.w > 0.5) {
        out_color = vec4(base.rgb, 1.0);
        return;
    }
    vec3 n = normalize(in_normal);
    float diffuse = max(dot(n, -pc.light_dir.xyz), 0.0);
    out_color = vec4(base.rgb * (pc.ambient.rgb + pc.light_color.rgb * diffuse), base.a);
}
