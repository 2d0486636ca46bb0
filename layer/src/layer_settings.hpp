// The layer's settings, read once from the environment when the layer is first used:
//   TANDEM_FRAMEGEN_MULTIPLIER  1 (generation off), 2 or 3 presented frames per real frame;
//                               unset: 2. Anything else is logged once and leaves the layer in
//                               pass-through.
//   TANDEM_FRAMEGEN_REPORT      path of the JSON report (frame_report.hpp); unset: none.
//   TANDEM_FRAMEGEN_LOG         1: log what the layer does (layer_log.hpp).
#pragma once

#include <optional>
#include <string>

namespace tandem::layer {

struct LayerSettings {
    // The multiplier asked for; empty when the variable held something other than 1, 2 or 3.
    std::optional<int> multiplier;
    // The variable's text as given; empty when unset.
    std::string multiplier_text;
    std::string report_path;
    // Why the layer passes frames through unchanged, in one sentence (every version so far).
    std::string pass_through_reason;
};

// Parsed on the first call (a bad multiplier is logged then, once); later calls return the same
// settings.
[[nodiscard]] const LayerSettings& layer_settings();

} // namespace tandem::layer
