#version 450
// The layer's copy of a worker's frame (Tandem's RGBA8 image) into a swapchain image read through
// an RGBA8 view (layer/src/frame_copy.hpp): one texel per invocation, its bytes unchanged, as
// vkCmdCopyImage moves them. Vulkan 1.2: the workgroup size needs no maintenance4.
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform texture2D source;
layout(binding = 1, rgba8) uniform writeonly image2D target;

void main() {
    const ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(texel, imageSize(target)))) {
        return;
    }
    imageStore(target, texel, texelFetch(source, texel, 0));
}
