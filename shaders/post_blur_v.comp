#version 450
#extension GL_GOOGLE_include_directive : require
// Vertical blur pass: the RGBA32F intermediate to the RGBA8 output.
#define OUT_FORMAT rgba8
#include "post_blur.glsl"
