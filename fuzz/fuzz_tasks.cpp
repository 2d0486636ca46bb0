// libFuzzer target: the tasks-file parser and its check against the demo scene must refuse any
// input with tandem::Error (or accept it), never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scene/demo_scene.hpp"
#include "scene/tasks.hpp"
#include "tandem/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const tandem::detail::Scene demo = tandem::detail::make_demo_scene();
    try {
        const auto tasks = tandem::detail::parse_tasks(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
        (void)tandem::detail::check_tasks(tasks, demo);
    } catch (const tandem::Error&) {
        // Refused with a message.
    }
    return 0;
}
