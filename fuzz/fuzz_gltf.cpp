// libFuzzer target: the glTF loader must refuse any input with tandem::Error (or load it), never
// crash, hang or touch memory it does not own. Input: a .gltf or .glb document; external URIs
// resolve nowhere (no folder), so only embedded data is read.
#include <cstddef>
#include <cstdint>

#include "scene/gltf_loader.hpp"
#include "tandem/error.hpp"
#include "tandem/log.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    tandem::set_default_log(tandem::LogLevel::Off); // the loader's warnings are not findings
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const tandem::detail::Scene scene =
            tandem::detail::load_gltf_from_memory({data, size}, "", "fuzz input");
        (void)scene.world_bounds();
    } catch (const tandem::Error&) {
        // Refused with a message: what bad input must get.
    }
    return 0;
}
