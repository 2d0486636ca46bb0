// The layer's settings, read once from the environment when the layer is first used:
//   TANDEM_FRAMEGEN_MULTIPLIER  1 (generation off), 2 or 3 presented frames per real frame;
//                               unset: 2. Anything else is logged once and leaves the layer in
//                               pass-through.
//   TANDEM_FRAMEGEN_REPORT      path of the JSON report (frame_report.hpp); unset: none.
//   TANDEM_FRAMEGEN_LOG         1: log what the layer does (layer_log.hpp).
//   TANDEM_FRAMEGEN_WAIT_MS     how long the presenter waits for a generated frame not ready
//                               once the program presented again (0..1000; unset: 0, never: a
//                               slow worker then costs the program nothing); above 0 a present
//                               also waits for the frame before it to have gone out. For checks
//                               and captures that want every generated frame.
//   TANDEM_FRAMEGEN_WORKER      the worker device, as RuntimeOptions::workers takes it (part of
//                               a name, a UUID prefix); unset: "auto" (another GPU, else the
//                               program's device opened again).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace tandem::layer {

struct LayerSettings {
    // The multiplier asked for; empty when the variable held something other than 1, 2 or 3.
    std::optional<int> multiplier;
    // The variable's text as given; empty when unset.
    std::string multiplier_text;
    std::string report_path;
    std::string worker = "auto";
    std::chrono::milliseconds wait{0};
    std::string wait_problem; // a bad TANDEM_FRAMEGEN_WAIT_MS, logged once
    // Why the layer passes frames through unchanged, in one sentence; empty when the multiplier
    // asks for generated frames (a device may still refuse them: DeviceRecord says why).
    std::string pass_through_reason;
    // The multiplier asks for generated frames (2 or 3).
    [[nodiscard]] bool generates() const noexcept { return multiplier && *multiplier > 1; }
};

// Parsed on the first call (a bad multiplier is logged then, once); later calls return the same
// settings.
[[nodiscard]] const LayerSettings& layer_settings();

} // namespace tandem::layer
