// The one translation unit that compiles tinygltf and stb_image / stb_image_write (header-only
// libraries from Debian's libtinygltf-dev and libstb-dev). Built without the project warnings:
// it is third-party code.
#define TINYGLTF_IMPLEMENTATION
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_NO_STDIO_WARNING
#include <tiny_gltf.h>
