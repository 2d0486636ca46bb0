#include "layer_settings.hpp"

#include <cstdlib>
#include <string_view>

#include "layer_log.hpp"

namespace tandem::layer {
namespace {

// The optional settings that stand alone: verify mode and the dump.
void parse_checks(LayerSettings& settings, const char* verify, const char* dump,
                  const char* dump_frames) {
    if (verify != nullptr && *verify != '\0') {
        const std::string_view text(verify);
        settings.verify = text == "1";
        if (text != "0" && text != "1") {
            settings.problems.push_back(std::string("TANDEM_FRAMEGEN_VERIFY='") + verify +
                                        "' is not 0 or 1: verify mode stays off");
        }
    }
    settings.dump_folder = dump != nullptr ? dump : "";
    if (dump_frames != nullptr && *dump_frames != '\0') {
        char* end = nullptr;
        const long frames = std::strtol(dump_frames, &end, 10);
        if (*end == '\0' && frames >= 1 && frames <= 10000) {
            settings.dump_frames = static_cast<std::uint32_t>(frames);
        } else {
            settings.problems.push_back(std::string("TANDEM_FRAMEGEN_DUMP_FRAMES='") + dump_frames +
                                        "' is not a number of frames from 1 to 10000: 16 are "
                                        "dumped");
        }
    }
}

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
        parse_checks(parsed, std::getenv("TANDEM_FRAMEGEN_VERIFY"),
                     std::getenv("TANDEM_FRAMEGEN_DUMP"),
                     std::getenv("TANDEM_FRAMEGEN_DUMP_FRAMES"));
        if (parsed.verify && parsed.multiplier != 2) {
            parsed.problems.push_back("TANDEM_FRAMEGEN_VERIFY=1 needs the multiplier 2: verify "
                                      "mode stays off");
            parsed.verify = false;
        }
        if (!parsed.multiplier) {
            log_problem(parsed.pass_through_reason + " (give 1, 2 or 3)");
        }
        if (!parsed.wait_problem.empty()) {
            log_problem(parsed.wait_problem);
        }
        for (const std::string& problem : parsed.problems) {
            log_problem(problem);
        }
        return parsed;
    }();
    return settings;
}

} // namespace tandem::layer
