// A program built with `pkg-config --cflags --libs tandem` alone, against the installed shared
// library: it calls into libtandem.so without a GPU (the version, the pattern reference, SPIR-V
// validation by the SPIRV-Tools linked inside it) and catches a tandem::Error thrown there.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <tandem/tandem.hpp>

int main() {
    const std::string expected = std::to_string(TANDEM_VERSION_MAJOR) + "." +
                                 std::to_string(TANDEM_VERSION_MINOR) + "." +
                                 std::to_string(TANDEM_VERSION_PATCH);
    if (expected != tandem::version()) {
        std::fprintf(stderr, "library version %s, headers %s\n", tandem::version(),
                     expected.c_str());
        return 1;
    }
    // Texel (0, 0) of generation 0: R = x + g, G = y + 2g, B = a hash, A = 255.
    if ((tandem::pattern_texel(0, 0, 0, 16) >> 24) != 0xFF) {
        std::fprintf(stderr, "pattern_texel gave an alpha other than 255\n");
        return 1;
    }
    tandem::ComputeTaskDesc desc;
    desc.spirv = {0x07230203u, 0x00010000u, 0u, 1u, 0u}; // a header and nothing else
    try {
        (void)tandem::compute_workload(desc);
        std::fprintf(stderr, "a module without an entry point was accepted\n");
        return 1;
    } catch (const tandem::Error& e) {
        std::printf("tandem %s: refused as expected: %s\n", tandem::version(), e.what());
    }
    return 0;
}
