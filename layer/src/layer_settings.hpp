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
//   TANDEM_FRAMEGEN_WORKER      the worker device, as RuntimeOptions::workers takes it (a PCI
//                               address, vendor:device, a UUID prefix or part of a name); unset:
//                               "auto" (another GPU, else the program's device opened again).
//   TANDEM_FRAMEGEN_VERIFY      1: verify mode (frame_verify.hpp): every other real frame is held
//                               back from the worker and generated from its neighbours, and the
//                               report gives the PSNR of each against the frame the program drew,
//                               beside the blend's. At 2x only.
//   TANDEM_FRAMEGEN_DUMP        a folder: the first TANDEM_FRAMEGEN_DUMP_FRAMES (unset: 16, at
//                               most 10000) frames presented, real and generated, are written
//                               there as PPM files in presentation order (frame_dump.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
    bool verify = false;
    std::string dump_folder;           // empty: no dump
    std::uint32_t dump_frames = 16;    // frames dumped, real and generated
    std::vector<std::string> problems; // other bad values, each logged once
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
