#version 450
#extension GL_GOOGLE_include_directive : require
// Horizontal blur pass: the input image to the RGBA32F intermediate.
#define OUT_FORMAT rgba32f
#include "post_blur.glsl"
