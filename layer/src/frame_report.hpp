// The JSON report the layer writes when TANDEM_FRAMEGEN_REPORT names a file: at every
// vkDestroyDevice, and at process exit while a device is still open. docs/layer.md describes its
// fields. The file is written next to its final name and renamed, so that a reader never sees
// half of one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frame_generation.hpp"
#include "layer_settings.hpp"

namespace tandem::layer {

struct DeviceCounts {
    std::string name;
    std::uint64_t devices = 0; // how many devices of this name were opened (and counted here)
    std::uint64_t open = 0;    // of those, still open when the report was written
    std::uint64_t swapchains_created = 0;
    std::uint64_t real_frames_presented = 0;
    std::uint64_t generated_frames = 0;
    std::uint64_t skipped_frames = 0; // generated frames not ready in time, so not presented
    bool generating = false;          // frame generation ran on a device of this name
    std::string pass_through_reason;  // else why not, when a device said
    double program_fps = 0; // real frames per second between the program's first and last present
    GenerationSummary generation;  // the last swapchain's figures (empty without generation)
    std::vector<double> delays_us; // GenerationCounts::delays_us
    std::vector<double> gaps_us;   // GenerationCounts::gaps_us
    std::vector<double> copies_us; // GenerationCounts::copies_us
    std::vector<double> generated_delays_us;  // GenerationCounts::generated_delays_us
    std::vector<double> presenter_started_us; // GenerationCounts::presenter_started_us
    std::vector<double> generated_noticed_us; // GenerationCounts::generated_noticed_us
    bool worker_lost = false;
    std::string worker_lost_reason;
    VerifyTotals verify;
    std::uint64_t dumped = 0; // files' indices written by the dump
    // Scaling: real frames upscaled on the worker and by the primary's blit, and the last
    // scaled swapchain's sizes.
    std::uint64_t upscaled_frames = 0;
    std::uint64_t blitted_frames = 0;
    // On the worker's display: real frames the worker did not have in time, not shown.
    std::uint64_t real_frames_not_shown = 0;
    // Swapchains shown by the worker whose display the program's device took back when the
    // worker was lost.
    std::uint64_t displays_taken_back = 0;
    std::optional<GenerationCounts::ScalingExtents> scaling;
};

struct ReportContents {
    std::string program;          // the executable's name
    std::string application_name; // VkApplicationInfo::pApplicationName of the last instance
    std::vector<DeviceCounts> devices;
    const LayerSettings* settings = nullptr;
};

// Writes the report to settings.report_path; on failure logs one line and returns false.
bool write_frame_report(const ReportContents& contents);

} // namespace tandem::layer
