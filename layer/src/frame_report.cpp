#include "frame_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "layer_log.hpp"

namespace tandem::layer {

namespace {

// Verify mode's figures: the mean PSNR of the generated frames and of the blend against the
// frames held back, and what the generated ones gain over the blend.
nlohmann::json verify_json(const VerifyTotals& v) {
    if (v.frames == 0) {
        return {{"frames", 0}, {"missed", v.missed}};
    }
    const double n = static_cast<double>(v.frames);
    return {{"frames", v.frames},
            {"missed", v.missed},
            {"generated_psnr_db_mean", v.generated_db_sum / n},
            {"blend_psnr_db_mean", v.blend_db_sum / n},
            {"gain_db", (v.generated_db_sum - v.blend_db_sum) / n},
            {"generated_psnr_db_min", v.generated_db_min},
            {"blend_psnr_db_min", v.blend_db_min}};
}

// Each real frame's delay in the order presented, to 0.1 us: for plots (the newest
// SampleRing::k_capacity of each device).
nlohmann::json rounded(const std::vector<double>& delays_us) {
    nlohmann::json out = nlohmann::json::array();
    for (const double us : delays_us) {
        out.push_back(std::round(us * 10.0) / 10.0);
    }
    return out;
}

// Nearest rank, as Tandem's reports take percentiles; null without samples.
nlohmann::json percentile(std::vector<double> samples, double p) {
    if (samples.empty()) {
        return nullptr;
    }
    std::sort(samples.begin(), samples.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(samples.size())));
    return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

// A scaled swapchain's size, the program's or the window's, as [width, height]; null unscaled.
nlohmann::json extent_json(const std::optional<GenerationCounts::ScalingExtents>& scaling,
                           bool program) {
    if (!scaling) {
        return nullptr;
    }
    const VkExtent2D extent = program ? scaling->program : scaling->window;
    return nlohmann::json::array({extent.width, extent.height});
}

} // namespace

bool write_frame_report(const ReportContents& contents) {
    const LayerSettings& settings = *contents.settings;
    nlohmann::json report;
    report["layer"] = "VK_LAYER_TANDEM_frame_generation";
    report["program"] = contents.program;
    report["application_name"] = contents.application_name;
    // Generating when a device generated frames' tasks; otherwise the first reason given.
    bool generating = false;
    std::string reason = settings.pass_through_reason;
    for (const DeviceCounts& counts : contents.devices) {
        generating = generating || counts.generating;
        if (reason.empty()) {
            reason = counts.pass_through_reason;
        }
    }
    report["mode"] = generating ? "generating" : "pass-through";
    report["mode_reason"] = generating ? "" : reason;
    report["multiplier_requested"] =
        settings.multiplier ? nlohmann::json(*settings.multiplier) : nlohmann::json(nullptr);
    report["multiplier_setting"] = settings.multiplier_text;
    report["wait_ms"] = settings.wait.count();
    report["worker_setting"] = settings.worker;
    report["scale"] = settings.scale;

    std::uint64_t swapchains = 0;
    std::uint64_t real_frames = 0;
    std::uint64_t generated = 0;
    std::uint64_t skipped = 0;
    std::uint64_t open = 0;
    VerifyTotals verify;
    bool worker_lost = false;
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceCounts& counts : contents.devices) {
        devices.push_back(
            {{"name", counts.name},
             {"devices", counts.devices},
             {"open", counts.open},
             {"swapchains_created", counts.swapchains_created},
             {"real_frames_presented", counts.real_frames_presented},
             {"generated_frames", counts.generated_frames},
             {"skipped_frames", counts.skipped_frames},
             {"generating", counts.generating},
             {"program_fps", counts.program_fps},
             {"worker", counts.generation.worker},
             {"transfer_path", counts.generation.transfer_path},
             {"input_path", counts.generation.input_path},
             {"jobs", counts.generation.jobs},
             {"worker_pass_us_p50", counts.generation.pass_us_p50},
             {"input_copy_us_p50", counts.generation.input_copy_us_p50},
             {"input_copy", counts.generation.input_copied_by_compute ? "compute" : "copy command"},
             {"layer_copy", counts.generation.layer_copied_by_compute ? "compute" : "copy command"},
             {"layer_copy_us_p50", percentile(counts.copies_us, 0.5)},
             {"layer_copies", counts.copies_us.size()},
             {"real_frame_delay_us_p50", percentile(counts.delays_us, 0.5)},
             {"real_frame_delay_us_p99", percentile(counts.delays_us, 0.99)},
             {"real_frame_delays_us", rounded(counts.delays_us)},
             {"generated_to_next_present_us_p50", percentile(counts.gaps_us, 0.5)},
             {"generated_frame_delay_us_p50", percentile(counts.generated_delays_us, 0.5)},
             {"presenter_started_us_p50", percentile(counts.presenter_started_us, 0.5)},
             {"generated_noticed_us_p50", percentile(counts.generated_noticed_us, 0.5)},
             {"job_submitted_us_p50", counts.generation.job_submitted_us_p50},
             {"job_done_us_p50", counts.generation.job_done_us_p50},
             {"job_ready_us_p50", counts.generation.job_ready_us_p50},
             {"worker_lost", counts.worker_lost},
             {"worker_lost_reason", counts.worker_lost_reason},
             {"dumped", counts.dumped},
             {"upscaled_frames", counts.upscaled_frames},
             {"blitted_frames", counts.blitted_frames},
             {"display", counts.generation.display},
             {"tandem_queue", counts.generation.tandem_queue},
             {"input_copies", counts.generation.input_copies},
             {"real_frames_not_shown", counts.real_frames_not_shown},
             {"displays_taken_back", counts.displays_taken_back},
             {"program_extent", extent_json(counts.scaling, true)},
             {"window_extent", extent_json(counts.scaling, false)}});
        if (settings.verify) {
            devices.back()["verify"] = verify_json(counts.verify);
        }
        verify.merge(counts.verify);
        worker_lost = worker_lost || counts.worker_lost;
        swapchains += counts.swapchains_created;
        real_frames += counts.real_frames_presented;
        generated += counts.generated_frames;
        skipped += counts.skipped_frames;
        open += counts.open;
    }
    // The device the program presented on (the first that created a swapchain), else the first.
    std::string device_name;
    for (const DeviceCounts& counts : contents.devices) {
        if (device_name.empty() || counts.swapchains_created > 0) {
            device_name = counts.name;
            if (counts.swapchains_created > 0) {
                break;
            }
        }
    }
    report["device"] = device_name;
    report["devices"] = std::move(devices);
    report["swapchains_created"] = swapchains;
    report["real_frames_presented"] = real_frames;
    report["generated_frames"] = generated;
    report["skipped_frames"] = skipped;
    report["devices_open"] = open;
    report["worker_lost"] = worker_lost;
    report["verify"] = settings.verify ? verify_json(verify) : nlohmann::json(nullptr);
    report["dump_folder"] = settings.dump_folder;

    const std::string& path = settings.report_path;
    const std::string partial = path + ".partial";
    {
        std::ofstream out(partial, std::ios::trunc);
        out << report.dump(2) << '\n';
        out.close();
        if (!out) {
            log_problem("could not write the report to " + partial + " (TANDEM_FRAMEGEN_REPORT)");
            return false;
        }
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        log_problem("could not rename " + partial + " to " + path + ": " +
                    std::generic_category().message(errno));
        std::remove(partial.c_str());
        return false;
    }
    log_info("report written to " + path);
    return true;
}

} // namespace tandem::layer
