#include "run_post_mode.hpp"

#include <cstdio>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "harness/run_report.hpp"

namespace tandem::cli {
namespace {

// "31.25 dB": the mean of a {mean, min, max} object; "-" for null.
std::string db_text(const nlohmann::json& db) {
    if (db.is_null()) {
        return "-";
    }
    return harness::fixed(db["mean"].get<double>(), 2) + " dB";
}

// A figure of a summary ({"n", "p50", ...}) or a latency ({"count", "p50_us", ...}) scaled,
// with its unit, or "none" where it has no samples (null in the report): never 0.00 ms for
// nothing measured.
std::string number_text(const nlohmann::json& j, const char* key, double scale, int digits,
                        const char* unit) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number()) {
        return "none";
    }
    return harness::fixed(j[key].get<double>() * scale, digits) + " " + unit;
}

// Summaries and latencies of no samples carry null figures, not 0 (their count stays 0).
void null_empty_figures(nlohmann::json& j) {
    if (j.is_array()) {
        for (auto& e : j) {
            null_empty_figures(e);
        }
        return;
    }
    if (!j.is_object()) {
        return;
    }
    for (const char* count : {"n", "count"}) {
        if (j.contains(count) && j[count].is_number() && j[count].get<double>() == 0.0) {
            for (auto& [key, value] : j.items()) {
                if (key != count && value.is_number()) {
                    value = nullptr;
                }
            }
            return;
        }
    }
    for (auto& [key, value] : j.items()) {
        (void)key;
        null_empty_figures(value);
    }
}

// "interpolate", "interpolate --motion colour", "upscale".
std::string post_label(const harness::PostRunOptions& options) {
    std::string label = harness::to_string(options.kind);
    if (options.kind == harness::PostKind::Interpolate) {
        label += options.colour_motion ? " --motion colour" : " --motion engine";
    }
    return label;
}

} // namespace

int run_post_mode(Runtime& runtime, harness::RunScene& scene, const PostModeArgs& args) {
    harness::PostRunOptions options = args.options;
    const bool progress = !args.quiet && ::isatty(STDERR_FILENO) != 0;
    if (progress) {
        options.progress = [&](std::uint64_t frame, std::uint64_t generation) {
            std::fprintf(stderr, "\r  frame %llu/%llu  %s output gen %llu\033[K",
                         static_cast<unsigned long long>(frame),
                         static_cast<unsigned long long>(options.frames),
                         harness::to_string(options.kind),
                         static_cast<unsigned long long>(generation));
            std::fflush(stderr);
        };
    }
    const auto [render_w, render_h] = harness::post_render_size(options.kind, options.render_scale,
                                                                scene.width(), scene.height());
    if (!args.quiet) {
        std::fprintf(
            stderr, "run --post %s: %s, %llu frames at %s, rendered %ux%u on %s, output %ux%u\n",
            post_label(options).c_str(), args.scene_label.c_str(),
            static_cast<unsigned long long>(options.frames), args.fps_label.c_str(), render_w,
            render_h, runtime.primary_device().name.c_str(), scene.width(), scene.height());
    }
    const harness::PostRunResult result = harness::run_post(runtime, scene, options);
    if (progress) {
        std::fprintf(stderr, "\n");
    }

    nlohmann::json post = result.report;
    null_empty_figures(post);
    nlohmann::json report;
    report["scene"] = args.scene_label;
    report["frames"] = result.frames;
    report["percentile_rule"] = "nearest rank"; // every p50/p90/p99 in the report
    report["fps"] = options.fps > 0 ? nlohmann::json(options.fps) : nlohmann::json("unlimited");
    report["clock"] = options.wall_clock ? "wall" : "frames";
    report["post"] = post;
    report["pngs"] = result.pngs;
    if (!result.failure.empty()) {
        report["failure"] = result.failure;
    }
    const std::string report_path = (options.out_dir / "report.json").string();
    write_report_json(report_path, report);
    report_validation(runtime);
    if (args.json) {
        std::printf("%s\n", report.dump(2).c_str());
    }
    if (!args.quiet) {
        std::FILE* out = args.json ? stderr : stdout;
        const nlohmann::json& p = post;
        std::string kind = p["kind"].get<std::string>();
        if (p.contains("motion")) {
            kind += " (motion from " +
                    std::string(p["motion"] == "colour" ? "colour alone" : "the engine") + ")";
        }
        std::fprintf(out, "%s on %s (adapter %s), inputs via %s, output via %s\n", kind.c_str(),
                     p["device_name"].get<std::string>().c_str(), p["device"].dump().c_str(),
                     p["input_path"].get<std::string>().c_str(),
                     p["output_path"].get<std::string>().c_str());
        std::fprintf(out,
                     "%llu real frames in %.2f s: %s outputs ready (%s per real frame), %s "
                     "display frames; submit p50 %s, submit to ready p50 %s, real frame's "
                     "end to its output p50 %s, pass GPU p50 %s\n",
                     static_cast<unsigned long long>(result.frames), p["elapsed_s"].get<double>(),
                     p["ready"].dump().c_str(),
                     harness::fixed(p["outputs_per_real_frame"].get<double>(), 3).c_str(),
                     p["display_frames"].dump().c_str(),
                     number_text(p["submit_us"], "p50", 1.0, 1, "us").c_str(),
                     number_text(p["submit_to_ready_us"], "p50_us", 1e-3, 2, "ms").c_str(),
                     number_text(p["frame_end_to_ready_us"], "p50", 1e-3, 2, "ms").c_str(),
                     number_text(p["pass_gpu_us"], "p50", 1.0, 1, "us").c_str());
        const nlohmann::json& q = p["quality"];
        if (q["samples"].get<std::uint64_t>() > 0) {
            std::fprintf(out, "quality against %s: %s%s; %s: %s (%s samples)\n",
                         q["reference"].get<std::string>().c_str(), db_text(q["psnr_db"]).c_str(),
                         p.contains("motion")
                             ? (" with " + p["motion"].get<std::string>() + " motion").c_str()
                             : "",
                         q["baseline"].get<std::string>().c_str(),
                         db_text(q["baseline_psnr_db"]).c_str(), q["samples"].dump().c_str());
        }
        std::fprintf(out, "wrote %zu PNG(s) and %s\n", result.pngs.size(), report_path.c_str());
    }
    if (!result.failure.empty()) {
        std::fprintf(stderr, "tandem: error: %s\n", result.failure.c_str());
        return 1;
    }
    return 0;
}

} // namespace tandem::cli
