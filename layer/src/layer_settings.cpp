#include "layer_settings.hpp"

#include <string_view>

#include "layer_config.hpp"
#include "layer_log.hpp"

namespace tandem::layer {
namespace {

// Why the multiplier leaves frames as they are, in one sentence; empty when it generates.
std::string pass_through_reason(const layer_config::FramegenConfig& config) {
    const layer_config::Origin& origin = config.origin("multiplier");
    if (!config.multiplier) {
        return "TANDEM_FRAMEGEN_MULTIPLIER='" + origin.text +
               "' is not 1, 2 or 3: frames pass through unchanged";
    }
    if (*config.multiplier != 1 || config.scale < 1.0) {
        return ""; // frames generated, or at 1x scaled
    }
    const std::string which = origin.where == "TANDEM_FRAMEGEN_MULTIPLIER"
                                  ? "TANDEM_FRAMEGEN_MULTIPLIER=1"
                                  : "multiplier = 1 (" + origin.where + ")";
    return which + " turns frame generation off: frames pass through unchanged";
}

} // namespace

const LayerSettings& layer_settings() {
    static const LayerSettings settings = [] {
        const layer_config::FramegenConfig config = layer_config::load_for_current_process();
        LayerSettings read;
        read.multiplier = config.multiplier;
        read.multiplier_text = config.origin("multiplier").text;
        read.report_path = config.report_path;
        read.worker = config.worker;
        read.wait = config.wait;
        read.verify = config.verify;
        read.dump_folder = config.dump_folder;
        read.dump_frames = config.dump_frames;
        read.present_mode = config.present_mode;
        read.present_mode_origin = config.origin("present_mode").where;
        read.scale = config.scale;
        read.copies = config.copies;
        read.display = config.display;
        read.queue = config.queue;
        read.problems = config.problems;
        read.pass_through_reason = pass_through_reason(config);
        for (const std::string& problem : read.problems) {
            log_problem(problem);
        }
        if (!config.file.empty()) {
            log_info("configuration " + config.file +
                     (config.profile.empty() ? ": no profile for this program"
                                             : ": profile [program " + config.profile + "]"));
        }
        return read;
    }();
    return settings;
}

} // namespace tandem::layer
