#include "layer_settings.hpp"

#include <cstdlib>
#include <string_view>

#include "layer_log.hpp"

namespace tandem::layer {
namespace {

LayerSettings parse_layer_settings(const char* multiplier, const char* report, const char* worker,
                                   const char* wait) {
    LayerSettings settings;
    settings.report_path = report != nullptr ? report : "";
    if (worker != nullptr && *worker != '\0') {
        settings.worker = worker;
    }
    if (wait != nullptr && *wait != '\0') {
        char* end = nullptr;
        const long ms = std::strtol(wait, &end, 10);
        if (*end == '\0' && ms >= 0 && ms <= 1000) {
            settings.wait = std::chrono::milliseconds(ms);
        } else {
            settings.wait_problem = std::string("TANDEM_FRAMEGEN_WAIT_MS='") + wait +
                                    "' is not a number of milliseconds from 0 to 1000: 0 is used";
        }
    }
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
    }
    return settings;
}

} // namespace

const LayerSettings& layer_settings() {
    static const LayerSettings settings = [] {
        LayerSettings parsed = parse_layer_settings(
            std::getenv("TANDEM_FRAMEGEN_MULTIPLIER"), std::getenv("TANDEM_FRAMEGEN_REPORT"),
            std::getenv("TANDEM_FRAMEGEN_WORKER"), std::getenv("TANDEM_FRAMEGEN_WAIT_MS"));
        if (!parsed.multiplier) {
            log_problem(parsed.pass_through_reason + " (give 1, 2 or 3)");
        }
        if (!parsed.wait_problem.empty()) {
            log_problem(parsed.wait_problem);
        }
        return parsed;
    }();
    return settings;
}

} // namespace tandem::layer
