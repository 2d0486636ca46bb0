#include "harness/rate.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "tandem/error.hpp"

namespace tandem::harness {

double parse_rate_hz(std::string_view text) {
    std::string normalised(text);
    int marks = 0;
    for (char& c : normalised) {
        if (c == ',') {
            c = '.';
        }
        marks += c == '.' ? 1 : 0;
    }
    // strtod also accepts hex floats, "nan" and "inf"; only decimal numbers are rates.
    bool plain = !normalised.empty() && marks <= 1;
    for (char c : normalised) {
        plain = plain && ((c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == 'e' ||
                          c == 'E');
    }
    char* end = nullptr;
    const double value = plain ? std::strtod(normalised.c_str(), &end) : 0.0;
    const bool parsed = plain && end == normalised.c_str() + normalised.size();
    if (!parsed || !std::isfinite(value) || value <= 0.0) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Rate '" + std::string(text) + "' is not a positive finite number of Hz",
                    "Give a number such as 60, 37.5 or 37,5");
    }
    return value;
}

} // namespace tandem::harness
