#include "frame_report.hpp"

#include <cstdio>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "layer_log.hpp"

namespace tandem::layer {

bool write_frame_report(const ReportContents& contents) {
    const LayerSettings& settings = *contents.settings;
    nlohmann::json report;
    report["layer"] = "VK_LAYER_TANDEM_frame_generation";
    report["program"] = contents.program;
    report["application_name"] = contents.application_name;
    report["mode"] = "pass-through";
    report["mode_reason"] = settings.pass_through_reason;
    report["multiplier_requested"] =
        settings.multiplier ? nlohmann::json(*settings.multiplier) : nlohmann::json(nullptr);
    report["multiplier_setting"] = settings.multiplier_text;

    std::uint64_t swapchains = 0;
    std::uint64_t real_frames = 0;
    std::uint64_t generated = 0;
    std::uint64_t open = 0;
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceCounts& counts : contents.devices) {
        devices.push_back({{"name", counts.name},
                           {"devices", counts.devices},
                           {"open", counts.open},
                           {"swapchains_created", counts.swapchains_created},
                           {"real_frames_presented", counts.real_frames_presented},
                           {"generated_frames", counts.generated_frames}});
        swapchains += counts.swapchains_created;
        real_frames += counts.real_frames_presented;
        generated += counts.generated_frames;
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
    report["devices_open"] = open;

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
