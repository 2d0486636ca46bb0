#include "layer_settings.hpp"

#include <cstdlib>
#include <string_view>

#include "layer_log.hpp"

namespace tandem::layer {
namespace {

LayerSettings parse_layer_settings(const char* multiplier, const char* report) {
    LayerSettings settings;
    settings.report_path = report != nullptr ? report : "";
    if (multiplier == nullptr) {
        settings.multiplier = 2;
    } else {
        settings.multiplier_text = multiplier;
        const std::string_view text(multiplier);
        if (text == "1" || text == "2" || text == "3") {
            settings.multiplier = text[0] - '0';
        }
    }
    if (!settings.multiplier) {
        settings.pass_through_reason = "TANDEM_FRAMEGEN_MULTIPLIER='" + settings.multiplier_text +
                                       "' is not 1, 2 or 3: frames pass through unchanged";
    } else if (*settings.multiplier == 1) {
        settings.pass_through_reason =
            "TANDEM_FRAMEGEN_MULTIPLIER=1 turns frame generation off: frames pass through "
            "unchanged";
    } else {
        settings.pass_through_reason =
            "frame generation is not implemented in this version of the layer: frames pass "
            "through unchanged";
    }
    return settings;
}

} // namespace

const LayerSettings& layer_settings() {
    static const LayerSettings settings = [] {
        LayerSettings parsed = parse_layer_settings(std::getenv("TANDEM_FRAMEGEN_MULTIPLIER"),
                                                    std::getenv("TANDEM_FRAMEGEN_REPORT"));
        if (!parsed.multiplier) {
            log_problem(parsed.pass_through_reason + " (give 1, 2 or 3)");
        }
        return parsed;
    }();
    return settings;
}

} // namespace tandem::layer
