#include "layer_log.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tandem::layer {
namespace {

void write_line(std::string_view line) {
    // One write per line, so that lines of several threads (and the program's) never interleave
    // within a line.
    std::string text = "tandem-layer: ";
    text.append(line);
    text.push_back('\n');
    std::fwrite(text.data(), 1, text.size(), stderr);
}

bool verbose() {
    static const bool on = [] {
        const char* value = std::getenv("TANDEM_FRAMEGEN_LOG");
        return value != nullptr && std::string_view(value) == "1";
    }();
    return on;
}

} // namespace

void log_problem(std::string_view line) {
    write_line(line);
}

void log_info(std::string_view line) {
    if (verbose()) {
        write_line(line);
    }
}

} // namespace tandem::layer
