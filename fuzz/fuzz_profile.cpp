// libFuzzer target: the calibration profile parser must refuse any input with tandem::Error (or
// read it), never crash; a profile it reads writes out and reads back as the same profile.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sched/profile.hpp"
#include "tandem/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto profile = tandem::detail::parse_profile(
            std::string_view(reinterpret_cast<const char*>(data), size));
        const auto written = tandem::detail::to_json(profile);
        if (tandem::detail::to_json(tandem::detail::parse_profile(written.dump())) != written) {
            std::abort();
        }
    } catch (const tandem::Error&) {
        // Refused with a message.
    }
    return 0;
}
