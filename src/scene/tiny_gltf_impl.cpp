// The one translation unit that compiles tinygltf and stb_image / stb_image_write (header-only
// libraries from Debian's libtinygltf-dev and libstb-dev). Built without the project warnings:
// it is third-party code.
#define TINYGLTF_IMPLEMENTATION
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_NO_STDIO_WARNING
// glTF 2.0 allows PNG and JPEG images only: stb_image's other decoders are left out, and with them
// whatever a malformed BMP, GIF, PSD, TGA, HDR, PIC or PNM could make them do.
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#include <tiny_gltf.h>
