// The layer's settings, read once when the layer is first used: its configuration file's global
// section and the program's profile, with the environment over them (layer_config.hpp, the code
// `tandem layer status` reads them with; docs/layer.md, "Configuration file"):
//   TANDEM_FRAMEGEN_MULTIPLIER  1 (generation off), 2 or 3 presented frames per real frame;
//                               unset: 2. Anything else is logged once and leaves the layer in
//                               pass-through.
//   TANDEM_FRAMEGEN_REPORT      path of the JSON report (frame_report.hpp); unset: none.
//   TANDEM_FRAMEGEN_LOG         1: log what the layer does (layer_log.hpp). Not in the file.
//   TANDEM_FRAMEGEN_WAIT_MS     how long the presenter waits for a generated frame not ready
//                               once the program presented again (0..1000; unset: 0, never: a
//                               slow worker then costs the program nothing); above 0 a present
//                               also waits for the frame before it to have gone out, and while
//                               the tasks are being prepared, up to this long for them. For
//                               checks and captures that want every generated frame.
//   TANDEM_FRAMEGEN_WORKER      the worker device, as RuntimeOptions::workers takes it (a PCI
//                               address, vendor:device, a UUID prefix or part of a name); unset:
//                               "auto" (another GPU, else the program's device opened again).
//   TANDEM_FRAMEGEN_VERIFY      1: verify mode (frame_check.hpp): every other real frame is held
//                               back from the worker and generated from its neighbours, and the
//                               report gives the PSNR of each against the frame the program drew,
//                               beside the blend's. At 2x only.
//   TANDEM_FRAMEGEN_DUMP        a folder: the first TANDEM_FRAMEGEN_DUMP_FRAMES (unset: 16, at
//                               most 10000) frames presented, real and generated, are written
//                               there as PPM files in presentation order (frame_check.hpp).
//   TANDEM_FRAMEGEN_PRESENT_MODE  fifo, mailbox, immediate or fifo_relaxed in place of the
//                               program's present mode, where the surface supports it; unset: the
//                               program's.
//   TANDEM_FRAMEGEN_SCALE       the program's render scale, 0.25..1 (unset: 1, off): below 1 the
//                               program is given a swapchain that much smaller than its window,
//                               of the layer's own images, and the worker upscales each frame
//                               to the window's size (scaled_swapchain.hpp). At any multiplier.
//   TANDEM_FRAMEGEN_COPIES      how the primary copies each presented frame into Tandem's input:
//                               auto (unset: a compute dispatch on a GPU, the copy command on a
//                               CPU device), compute or command.
//   TANDEM_FRAMEGEN_DISPLAY     where frames go out: program (unset: the program's device
//                               presents them) or worker (the worker makes the real swapchain
//                               on the program's surface; the program renders into images of
//                               the layer's own, each crossing once to the worker, which
//                               presents real and generated frames). Where the worker cannot
//                               present there, the program's device does, and one line says why.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

namespace tandem::layer {

struct LayerSettings {
    // The multiplier asked for; empty when TANDEM_FRAMEGEN_MULTIPLIER held anything but 1, 2, 3.
    std::optional<int> multiplier;
    // The text it came from (the variable or the file), as given; empty for the default.
    std::string multiplier_text;
    std::string report_path;
    std::string worker = "auto";
    std::chrono::milliseconds wait{0};
    bool verify = false;
    std::string dump_folder;        // empty: no dump
    std::uint32_t dump_frames = 16; // frames dumped, real and generated
    // The program's when empty; else in place of it where the surface supports it.
    std::optional<VkPresentModeKHR> present_mode;
    std::string present_mode_origin;   // "FILE:LINE" or the variable's name
    double scale = 1.0;                // the program's render scale; 1: off
    std::string copies = "auto";       // auto, compute or command (TANDEM_FRAMEGEN_COPIES)
    std::string display = "program";   // program or worker (TANDEM_FRAMEGEN_DISPLAY)
    std::string queue = "shared";      // shared or own (TANDEM_FRAMEGEN_QUEUE)
    std::vector<std::string> problems; // bad lines and values, each logged once
    // Why the layer passes frames through unchanged, in one sentence; empty when the multiplier
    // asks for generated frames (a device may still refuse them: DeviceRecord says why).
    std::string pass_through_reason;
    // The multiplier asks for generated frames (2 or 3).
    [[nodiscard]] bool generates() const noexcept { return multiplier && *multiplier > 1; }
    // The program's swapchains are smaller than their windows, upscaled by the layer.
    [[nodiscard]] bool scales() const noexcept { return multiplier && scale < 1.0; }
    // The layer embeds a runtime on the program's device: it generates frames, or scales.
    [[nodiscard]] bool uses_runtime() const noexcept { return generates() || scales(); }
    // The worker presents the frames (display = worker), where it can.
    [[nodiscard]] bool worker_displays() const noexcept {
        return generates() && display == "worker";
    }
};

// Read on the first call (each problem is logged then, once); later calls return the same
// settings.
[[nodiscard]] const LayerSettings& layer_settings();

} // namespace tandem::layer
