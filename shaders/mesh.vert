// Vertex stage of the scene renderer: per-vertex position/normal/uv, per-instance model matrix
// and normal matrix (computed on the CPU), camera and light in push constants.
#version 450

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 3) in vec4 in_model0;
layout(location = 4) in vec4 in_model1;
layout(location = 5) in vec4 in_model2;
layout(location = 6) in vec4 in_model3;
layout(location = 7) in vec4 in_normal0;
layout(location = 8) in vec4 in_normal1;
layout(location = 9) in vec4 in_normal2;

layout(push_constant) uniform Push {
    mat4 view_proj;
    vec4 light_dir;   // xyz: direction the light travels; w: 1 = unlit (display surfaces)
    vec4 light_color;
    vec4 ambient;
    vec4 base_color;
} pc;

layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec2 out_uv;

void main() {
    mat4 model = mat4(in_model0, in_model1, in_model2, in_model3);
    mat3 normal_matrix = mat3(in_normal0.xyz, in_normal1.xyz, in_normal2.xyz);
    gl_Position = pc.view_proj * (model * vec4(in_position, 1.0));
    out_normal = normal_matrix * in_normal;
    out_uv = in_uv;
}
