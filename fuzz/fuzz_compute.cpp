// libFuzzer target: compute_workload() must refuse any module or description that does not fit
// with tandem::Error, or accept it, never crash; it checks before any device is touched, so no
// Vulkan device is needed. Input: a 16-byte description header, then the module's words.
//   [0] push_constant_bytes  [1] inputs (low 4 bits: 0..15, past the limit of 8 included)
//   [2] bit 0: entry point "main" (else "other"); bit 1: workgroup size given as [3] x [4] x 1
//   [8..15] input i's size in 4-byte units
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tandem/compute.hpp"
#include "tandem/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr std::size_t k_header = 16;
    if (size < k_header) {
        return 0;
    }
    tandem::ComputeTaskDesc desc;
    desc.push_constant_bytes = data[0];
    const std::size_t inputs = data[1] & 0x0fu;
    for (std::size_t i = 0; i < inputs; ++i) {
        desc.input_bytes.push_back(std::uint32_t{data[8 + std::min<std::size_t>(i, 7)]} * 4);
    }
    desc.entry_point = (data[2] & 1u) != 0 ? "main" : "other";
    if ((data[2] & 2u) != 0) {
        desc.workgroup_size = {data[3], data[4], 1};
    }
    desc.spirv.resize((size - k_header) / 4);
    if (!desc.spirv.empty()) {
        std::memcpy(desc.spirv.data(), data + k_header, desc.spirv.size() * 4);
    }
    try {
        (void)tandem::compute_workload(desc);
    } catch (const tandem::Error&) {
        // Refused with a message.
    }
    return 0;
}
