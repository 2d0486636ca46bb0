#version 450
// The task's colour input read as a readonly storage image (imageLoad), written with red and
// blue swapped.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D out_image;
layout(set = 0, binding = 1, rgba8) uniform readonly image2D colour;

void main() {
    const ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, imageSize(out_image)))) {
        return;
    }
    imageStore(out_image, p, imageLoad(colour, p).bgra);
}
