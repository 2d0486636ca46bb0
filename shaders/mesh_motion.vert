// Vertex stage of the scene renderer with motion outputs: mesh.vert's inputs and arithmetic
// (gl_Position, normal and uv are computed exactly as there, so the colour is the same), plus
// the instance's previous model matrix and, in set 1, the previous view_proj. Both clip
// positions go to the fragment stage undivided.
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
layout(location = 10) in vec4 in_previous_model0;
layout(location = 11) in vec4 in_previous_model1;
layout(location = 12) in vec4 in_previous_model2;
layout(location = 13) in vec4 in_previous_model3;

layout(push_constant) uniform Push {
    mat4 view_proj;
    vec4 light_dir;   // xyz: direction the light travels; w: 1 = unlit (display surfaces)
    vec4 light_color;
    vec4 ambient;
    vec4 base_color;
} pc;

layout(set = 1, binding = 0) uniform PreviousFrame {
    mat4 previous_view_proj;
    vec4 extent; // xy: width, height in pixels
} previous;

layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec2 out_uv;
// Clip positions now and one frame before, interpolated perspective-correctly (both are affine
// in the position, so that is exact) and divided per fragment.
// `precise`: no fused multiply-add in one and not the other (a GPU's compiler may fuse them
// differently), so that equal inputs give equal bits.
layout(location = 2) precise out vec4 out_clip;
layout(location = 3) precise out vec4 out_previous_clip;

void main() {
    mat4 model = mat4(in_model0, in_model1, in_model2, in_model3);
    mat4 previous_model =
        mat4(in_previous_model0, in_previous_model1, in_previous_model2, in_previous_model3);
    mat3 normal_matrix = mat3(in_normal0.xyz, in_normal1.xyz, in_normal2.xyz);
    gl_Position = pc.view_proj * (model * vec4(in_position, 1.0));
    out_normal = normal_matrix * in_normal;
    out_uv = in_uv;
    // The same expression for both: an instance that did not move under a camera that did not
    // either gets equal bits, hence motion exactly 0.
    out_clip = pc.view_proj * (model * vec4(in_position, 1.0));
    out_previous_clip = previous.previous_view_proj * (previous_model * vec4(in_position, 1.0));
}
