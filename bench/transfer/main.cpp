// tandem-bench-transfer: throughput and latency of every transfer path a worker -> primary pair
// allows, against image size, banded and unbanded, next to the ceiling measured in the same run
// (plain vkCmdCopyBuffer device -> host and host -> device on each device, through buffers no
// cache holds, and refused when faster than the PCIe link). Each path is divided by the copies it
// really makes (a side in place makes none), timed alike (first completion to last). Median
// (nearest rank) of --runs, data verified after every run and every transfer of an untimed stream
// carrying its own bytes, a table on stdout and the BENCH.md JSON with --json.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ceiling.hpp"
#include "core/capabilities.hpp"
#include "core/copy_queue.hpp"
#include "core/device.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "core/resources.hpp"
#include "cuda_ceiling.hpp"
#include "harness/cpu_threads.hpp"
#include "on_device_ceiling.hpp"
#include "path_bench.hpp"
#include "tandem/error.hpp"
#include "tandem/log.hpp"
#include "transfer/cuda_peer_check.hpp"

namespace tb = tandem::bench;
namespace td = tandem::detail;
using tandem::TransferPath;

namespace {

struct Size {
    std::uint32_t w = 0, h = 0;
    [[nodiscard]] std::string name() const { return std::to_string(w) + "x" + std::to_string(h); }
};

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::string item;
    for (char c : text + ",") {
        if (c == ',') {
            if (!item.empty()) {
                out.push_back(item);
            }
            item.clear();
        } else if (c != ' ') {
            item += c;
        }
    }
    return out;
}

std::vector<Size> parse_sizes(const std::string& text) {
    std::vector<Size> out;
    for (const auto& item : split(text)) {
        Size s;
        char x = 0;
        if (std::sscanf(item.c_str(), "%u%c%u", &s.w, &x, &s.h) != 3 || (x != 'x' && x != 'X') ||
            s.w == 0 || s.h == 0 || s.w > 16384 || s.h > 16384) {
            throw tandem::Error("--sizes: '" + item + "' is not WIDTHxHEIGHT",
                                "Give sizes such as 64x64,1920x1080");
        }
        out.push_back(s);
    }
    return out;
}

struct Ceilings {
    tb::CopyCeiling worker_d2h, worker_h2d, primary_d2h, primary_h2d;
    // The same copies with an RGBA8 image on the device side (what the paths copy), for the
    // report: how far the image copies themselves fall short of the buffer ceiling.
    tb::CopyCeiling worker_d2h_image, primary_h2d_image;
};

struct Row {
    TransferPath path;
    Size size;
    bool banded;
    tb::PathResult result;
    // The copies the path really makes, timed as the path is (steady: first completion to
    // last). Host paths: min(worker d2h, primary h2d) and worker d2h + primary h2d latency;
    // with one side in place, the other side's copy alone (the in-place side makes none); with
    // both in place, none (no ratio). Device-local paths (same-device, shared-memory): the path's
    // own copies within the device, on the queue it copies on (on_device_ceiling.hpp). The
    // cuda-peer path: the slower of its Vulkan copies (the same on-device copy as
    // shared-memory's) and CUDA's own copy of the bytes between cuMemAlloc buffers on the two
    // GPUs (cuda_ceiling.hpp), each measured alone.
    double ceiling_gbps = 0;
    double ceiling_whole_gbps = 0; // the same copies from the release to the last completion
    double raw_latency_us = 0;
    bool own_ceiling = false; // one of the device-local ceilings
    std::string ceiling = "min(worker d2h, primary h2d)";
    double cuda_copy_gbps = 0; // cuda-peer: CUDA's copy alone, reported beside the ceiling
    // A host copy of the ceiling measured above the PCIe link it crosses: a cache, not the link,
    // so no ratio against it is a result (ceiling.hpp, pcie_link).
    std::string ceiling_error;
};

// The paths whose Vulkan copies stay within one GPU, compared with an on-device copy.
bool device_local(TransferPath path) {
    return path == TransferPath::SameDevice || path == TransferPath::SharedMemory ||
           path == TransferPath::CudaPeer;
}

// Whether a measured host copy ran faster than the PCIe link it crosses can carry.
std::string above_link(const tb::CopyCeiling& copy, const std::optional<tb::PcieLink>& link,
                       const char* what) {
    if (!link || tb::steady_rate(copy) <= link->gbps * 1.02) {
        return {};
    }
    char text[256];
    std::snprintf(text, sizeof text, "%s measured %.1f GB/s, above its PCIe link (%s: %.1f GB/s)",
                  what, tb::steady_rate(copy), link->text.c_str(), link->gbps);
    return text;
}

// A host path's ceiling: the copies it makes (in place, a side makes none).
void host_ceiling(Row& row, const Ceilings& c, const std::optional<tb::PcieLink>& worker_link,
                  const std::optional<tb::PcieLink>& primary_link) {
    const bool read = row.result.read_in_place;
    const bool written = row.result.written_in_place;
    const std::string d2h = above_link(c.worker_d2h, worker_link, "worker d2h");
    const std::string h2d = above_link(c.primary_h2d, primary_link, "primary h2d");
    if (row.path == TransferPath::ZeroCopy) {
        row.ceiling = "none: one allocation on both sides, no copy is made";
        return;
    }
    if (read && written) {
        row.ceiling = "none: both sides in place, no copy is made";
        return;
    }
    // One side in place: the other side's copy alone.
    const auto alone = [&row](const tb::CopyCeiling& copy, const char* name,
                              const std::string& error) {
        row.ceiling = name;
        row.ceiling_gbps = tb::steady_rate(copy);
        row.ceiling_whole_gbps = copy.gbps.median;
        row.raw_latency_us = copy.latency_us.median;
        row.ceiling_error = error;
    };
    if (read) {
        alone(c.worker_d2h, "worker d2h alone (the primary reads in place)", d2h);
        return;
    }
    if (written) {
        alone(c.primary_h2d, "primary h2d alone (the worker writes in place)", h2d);
        return;
    }
    row.ceiling_gbps = std::min(tb::steady_rate(c.worker_d2h), tb::steady_rate(c.primary_h2d));
    row.ceiling_whole_gbps = std::min(c.worker_d2h.gbps.median, c.primary_h2d.gbps.median);
    row.raw_latency_us = c.worker_d2h.latency_us.median + c.primary_h2d.latency_us.median;
    row.ceiling_error = d2h.empty() ? h2d : (h2d.empty() ? d2h : d2h + "; " + h2d);
}

// A ratio against a ceiling; 0 where there is none.
double ratio(double measured, double ceiling) {
    return ceiling > 0 ? measured / ceiling : 0.0;
}

std::string num(double v, int precision = 2) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v);
    return buf;
}

// Each band's GPU times, microseconds after the release.
nlohmann::json band_gpu_json(const std::vector<tb::BandGpuUs>& bands) {
    nlohmann::json out = nlohmann::json::array();
    for (const tb::BandGpuUs& g : bands) {
        out.push_back({{"worker_begin", g.worker_begin},
                       {"worker_end", g.worker_end},
                       {"primary_begin", g.primary_begin},
                       {"primary_end", g.primary_end}});
    }
    return out;
}

// Microsecond figures, one decimal, comma-separated.
std::string join_us(const std::vector<double>& values) {
    std::string out;
    for (const double us : values) {
        out += (out.empty() ? "" : ", ") + num(us, 1);
    }
    return out;
}

// "5x216r" for even bands (the last may be shorter), else the heights: "160/287/249/211/173r".
std::string bands_text(const std::vector<std::uint32_t>& heights) {
    if (heights.empty()) {
        return "-";
    }
    const bool even = std::all_of(heights.begin(), heights.end() - 1,
                                  [&](std::uint32_t h) { return h == heights.front(); }) &&
                      heights.back() <= heights.front();
    if (even) {
        return std::to_string(heights.size()) + "x" + std::to_string(heights.front()) + "r";
    }
    std::string text;
    for (const std::uint32_t h : heights) {
        text += (text.empty() ? "" : "/") + std::to_string(h);
    }
    return text + "r";
}

nlohmann::json ceiling_json(const tb::CopyCeiling& c) {
    return {{"gbps", tb::to_json(c.gbps)},
            {"steady_gbps", tb::to_json(c.steady_gbps)},
            {"latency_us", tb::to_json(c.latency_us)},
            {"verified", c.verified},
            {"host_memory_device_local",
             (c.host_memory_flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0}};
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"tandem-bench-transfer: cross-device transfer paths against the copy ceiling"};
    std::string primary_sel = "auto";
    std::string workers_sel = "auto";
    std::string virtual_devices;
    std::string validation = "off";
    std::string sizes_text = "64x64,256x256,512x512,1280x720,1920x1080,2560x1440,3840x2160";
    std::string paths_text = "all";
    std::string format_text = "RGBA8";
    std::string json_file;
    std::uint32_t runs = 15;
    std::uint32_t band_rows = 0;
    std::vector<std::uint32_t> band_heights;
    std::vector<std::uint32_t> band_split;
    bool concurrent = false;
    bool cuda_check = false;
    bool watch_worker = false;
    bool gpu_times = false;
    bool write_in_place = false;
    bool read_in_place = false;
    std::string hand_off = "submit";
    std::string cuda_copies = "stream";
    std::uint32_t slots = 3;
    std::uint32_t batch = 0;
    std::uint32_t lead_us = 1000;
    std::uint32_t bridge_spin_us = 1000;
    std::string log_level = "warn";
    app.add_option("--primary", primary_sel, "Primary adapter: auto, index, UUID or name part")
        ->capture_default_str();
    app.add_option("--workers", workers_sel,
                   "Worker adapter (the first one selected is measured): auto, index, UUID or "
                   "name part")
        ->capture_default_str();
    app.add_option("--virtual-devices", virtual_devices,
                   "Open each physical device as N adapters (default: $TANDEM_VIRTUAL_DEVICES, "
                   "else 1)");
    app.add_option("--sizes", sizes_text, "Image sizes, WxH, comma-separated")
        ->capture_default_str();
    app.add_option("--paths", paths_text,
                   "Paths to measure: all, or a list of " + tandem::transfer_path_names(", ") +
                       " (only those the pair allows run)")
        ->capture_default_str();
    app.add_option("--format", format_text, "RGBA8, BGRA8, RGBA16F or R32F")->capture_default_str();
    app.add_option("--runs", runs, "Runs per point; the median is reported")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));
    app.add_option("--band-rows", band_rows,
                   "Rows per band of the banded rows (0: the path chooses)")
        ->capture_default_str();
    app.add_option("--band-heights", band_heights,
                   "Banded rows: bands of these heights, top to bottom, comma-separated (they must "
                   "add up to the height of every size measured; wins over --band-rows)")
        ->delimiter(',');
    app.add_option("--band-hand-off", hand_off,
                   "How the host bridge hands each band to the primary: submit (a submission "
                   "once the worker has finished it) or signal (the primary's copies submitted "
                   "ahead, each released by a host-signalled gate)")
        ->capture_default_str()
        ->check(CLI::IsMember({"submit", "signal"}));
    app.add_option("--cuda-copies", cuda_copies,
                   "How the cuda-peer path's CUDA copies are ordered: stream (queued on CUDA "
                   "streams that wait for the worker's bands and signal the primary's copies, "
                   "all on the GPUs) or host-step (the host bridge runs each copy once the worker "
                   "finished its band and waits for it, then hands the band on with "
                   "--band-hand-off)")
        ->capture_default_str()
        ->check(CLI::IsMember({"stream", "host-step"}));
    app.add_option("--band-split", band_split,
                   "Only measure what cutting one 1920x1080 RGBA8 copy into N pieces costs a copy "
                   "engine, for each N given: the worker's download and the primary's upload, "
                   "with a submission, an event (where the copy queue's family has events: "
                   "graphics or compute) or a barrier between pieces, and with a submission per "
                   "piece alternating between two copy engines (--json too)")
        ->delimiter(',');
    app.add_flag("--watch-worker-bands", watch_worker,
                 "Latency runs: the benchmark thread also sees each worker band done, to print "
                 "beside when the bridge handed it on");
    app.add_flag("--gpu-times", gpu_times,
                 "Latency runs: time each band's copies on both GPUs (a timestamp before and "
                 "after each, placed on the host's clock with calibrated timestamps) and print "
                 "when each began and ended after the release; where a device cannot, nothing "
                 "is timed. The timestamps cost the copy engines a few us each");
    app.add_flag("--write-in-place", write_in_place,
                 "host-imported from a CPU worker (lavapipe): its images are the staging, "
                 "written in place, so only the primary copies (TransferDesc::write_in_place; "
                 "RuntimeOptions::cpu_writes_outputs_in_place in the runtime)");
    app.add_flag("--read-in-place", read_in_place,
                 "host-imported to a CPU primary (lavapipe): its images are the staging, read in "
                 "place, so only the worker copies (TransferDesc::read_in_place; "
                 "RuntimeOptions::cpu_reads_inputs_in_place in the runtime, for inputs)");
    app.add_flag("--concurrent-copies", concurrent,
                 "Only measure whether the worker's download and the primary's upload of one "
                 "1920x1080 RGBA8 copy slow each other down: each alone, then both released "
                 "together (--json too)");
    app.add_flag(
        "--cuda-check", cuda_check,
        "Only check the CUDA peer path: move a known RGBA8 image of each --sizes from the "
        "worker GPU to the primary through CUDA (Vulkan memory and timelines imported "
        "into CUDA on each GPU, a peer copy into CUDA memory on the primary), --runs "
        "times, and compare it byte for byte, timing a plain CUDA copy of the same bytes between "
        "cuMemAlloc buffers in the same run; where the pair has no CUDA peer entry, "
        "say why and exit 0 (--json too)");
    app.add_option("--slots", slots, "Slots (transfers in flight)")
        ->capture_default_str()
        ->check(CLI::Range(1u, 16u));
    app.add_option("--batch", batch,
                   "Transfers per throughput run (0: enough for ~128 MiB, 2x slots to 64)")
        ->capture_default_str();
    app.add_option("--lead-us", lead_us,
                   "Latency runs: time between submitting a transfer and the worker finishing "
                   "(its wait) in microseconds; the bridge is already waiting then, as it is "
                   "while a worker renders")
        ->capture_default_str();
    app.add_option("--bridge-spin-us", bridge_spin_us,
                   "How long the host bridge polls a pending band before it starts sleeping "
                   "(microseconds); raise it on machines with cores to spare")
        ->capture_default_str();
    app.add_option("--json", json_file, "Write the results as JSON to FILE");
    app.add_option("--validation", validation, "off, core or sync")->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    tandem::harness::keep_cores_from_cpu_devices(); // before any instance: lavapipe reads it

    try {
        const auto level = tandem::parse_log_level(log_level);
        if (!level) {
            throw tandem::Error("Log level '" + log_level + "' is not known",
                                "Use trace, debug, info, warn, error or off");
        }
        tandem::set_default_log(*level);
        const auto sizes = parse_sizes(sizes_text);
        if (batch != 0 && batch <= slots) {
            throw tandem::Error("--batch " + std::to_string(batch) + " is not more than --slots " +
                                    std::to_string(slots),
                                "The steady rate needs a completion before the last; use a batch "
                                "of at least slots + 1 (or 0 for the default)");
        }
        const auto format = td::parse_color_format(format_text);
        if (!format) {
            throw tandem::Error("--format '" + format_text + "' is not known",
                                "Use RGBA8, BGRA8, RGBA16F or R32F");
        }
        std::vector<TransferPath> wanted;
        if (paths_text == "all") {
            wanted.assign(tandem::k_all_transfer_paths.begin(), tandem::k_all_transfer_paths.end());
        } else {
            for (const auto& p : split(paths_text)) {
                auto parsed = tandem::parse_transfer_path(p);
                if (!parsed) {
                    throw tandem::Error("--paths: '" + p + "' is not a transfer path",
                                        "Use " + tandem::transfer_path_names());
                }
                wanted.push_back(*parsed);
            }
        }

        td::InstanceOptions instance_options;
        instance_options.application_name = "tandem-bench-transfer";
        const auto parsed_validation = td::parse_validation(validation);
        if (!parsed_validation) {
            throw tandem::Error("--validation '" + validation + "' is not understood",
                                "Use off, core or sync");
        }
        instance_options.validation = *parsed_validation;
        td::Instance instance(instance_options);
        auto adapters = td::discover_adapters(
            instance, virtual_devices.empty() ? td::virtual_devices_from_env(1)
                                              : td::parse_virtual_devices(virtual_devices));
        const auto selection = td::select_adapters(adapters, primary_sel, workers_sel);
        if (selection.workers.empty()) {
            throw tandem::Error("No worker adapter is selected", "Pass --workers");
        }
        const std::uint32_t worker_index = selection.workers.front();
        const auto& winfo = adapters.at(worker_index).info;
        const auto& pinfo = adapters.at(selection.primary).info;
        const auto pair = td::query_pair_info(winfo, pinfo);

        td::DeviceOptions primary_options;
        primary_options.label = "primary";
        td::Device primary(instance, adapters.at(selection.primary), primary_options);
        std::unique_ptr<td::Device> worker_owned;
        const bool same_adapter = worker_index == selection.primary;
        if (!same_adapter) {
            td::DeviceOptions worker_options;
            worker_options.label = "worker";
            worker_owned =
                std::make_unique<td::Device>(instance, adapters.at(worker_index), worker_options);
        }
        const td::Device& worker = same_adapter ? primary : *worker_owned;

        std::vector<TransferPath> paths;
        for (TransferPath p : wanted) {
            if (pair.allows(p)) {
                paths.push_back(p);
            } else {
                std::printf("skipping %s: %s\n", tandem::to_string(p),
                            std::find_if(pair.paths.begin(), pair.paths.end(), [&](const auto& a) {
                                return a.path == p;
                            })->reason.c_str());
            }
        }
        std::printf(
            "worker %u (%s, transfer family %u%s) -> primary %u (%s, transfer family "
            "%u%s); sync: %s\n",
            worker_index, winfo.name.c_str(), worker.queue(td::QueueRole::Transfer).family(),
            worker.has_dedicated_transfer_family() ? ", copy engine" : "", selection.primary,
            pinfo.name.c_str(), primary.queue(td::QueueRole::Transfer).family(),
            primary.has_dedicated_transfer_family() ? ", copy engine" : "",
            pair.sync_reason.c_str());

        if (cuda_check) {
            std::printf("cuda-peer: %s: %s\n", pair.cuda_peer.present ? "present" : "absent",
                        pair.cuda_peer.reason.c_str());
            nlohmann::json rows = nlohmann::json::array();
            bool all_verified = true;
            bool skipped = false;
            for (const Size& size : sizes) {
                const auto c =
                    td::run_cuda_peer_check(worker, primary, pair, size.w, size.h, runs, true);
                if (!c.ran) {
                    std::printf("cuda check skipped: %s\n", c.reason.c_str());
                    skipped = true;
                    break;
                }
                const auto chain = tb::stats_of(c.chain_us);
                const auto gbps = tb::stats_of(c.peer_gbps);
                const auto plain = tb::stats_of(c.plain_us);
                const auto plain_gbps = tb::stats_of(c.plain_gbps);
                // The ceiling of this run: a plain CUDA copy of the same bytes between cuMemAlloc
                // buffers. Step ratio: the chain's CUDA copy (from Vulkan-imported memory) to it.
                const double step_ratio =
                    plain_gbps.median > 0 ? gbps.median / plain_gbps.median : 0;
                const double chain_ratio = chain.median > 0 ? plain.median / chain.median : 0;
                std::printf("%-10s chain %9.1f us  %s %7.1f GB/s  plain CUDA copy %8.1f us "
                            "%7.1f GB/s  step %.2f  chain %.3f of plain  %s\n",
                            size.name().c_str(), chain.median,
                            c.one_gpu ? "copy within one GPU" : "peer copy", gbps.median,
                            plain.median, plain_gbps.median, step_ratio, chain_ratio,
                            c.verified ? "verified" : ("NOT VERIFIED: " + c.reason).c_str());
                all_verified = all_verified && c.verified;
                rows.push_back({{"size", size.name()},
                                {"one_gpu", c.one_gpu},
                                {"bytes", c.bytes},
                                {"chain_us", tb::to_json(chain)},
                                {"peer_copy_gbps", tb::to_json(gbps)},
                                {"plain_copy_us", tb::to_json(plain)},
                                {"plain_copy_gbps", tb::to_json(plain_gbps)},
                                {"step_to_plain_ratio", step_ratio},
                                {"plain_to_chain_ratio", chain_ratio},
                                {"verified", c.verified},
                                {"error", c.reason}});
            }
            if (!json_file.empty()) {
                nlohmann::json doc;
                doc["benchmark"] = "cuda-peer-check";
                doc["config"] = {{"runs", runs}, {"format", "RGBA8"}};
                doc["machine"] = {{"worker", winfo.name}, {"primary", pinfo.name}};
                doc["cuda_peer"] = {{"present", pair.cuda_peer.present},
                                    {"reason", pair.cuda_peer.reason}};
                doc["skipped"] = skipped;
                doc["rows"] = rows;
                std::ofstream(json_file) << doc.dump(2) << '\n';
            }
            return all_verified ? 0 : 3;
        }
        const auto lead = std::chrono::microseconds(lead_us);
        if (concurrent) {
            const VkDeviceSize bytes = VkDeviceSize{1920} * 1080 * 4;
            const auto c = tb::measure_concurrent_copies(worker, primary, bytes, runs, lead);
            std::printf("%-24s %-14s %-14s\n", "copy (1920x1080 RGBA8)", "alone us", "together us");
            std::printf("%-24s %-14.1f %-14.1f\n", "worker d2h", c.d2h_alone_us.median,
                        c.d2h_together_us.median);
            std::printf("%-24s %-14.1f %-14.1f\n", "primary h2d", c.h2d_alone_us.median,
                        c.h2d_together_us.median);
            if (!json_file.empty()) {
                nlohmann::json doc;
                doc["benchmark"] = "concurrent-copies";
                doc["config"] = {{"bytes", bytes}, {"runs", runs}, {"lead_us", lead_us}};
                doc["machine"] = {{"worker", winfo.name}, {"primary", pinfo.name}};
                doc["worker_d2h_alone_us"] = tb::to_json(c.d2h_alone_us);
                doc["primary_h2d_alone_us"] = tb::to_json(c.h2d_alone_us);
                doc["worker_d2h_together_us"] = tb::to_json(c.d2h_together_us);
                doc["primary_h2d_together_us"] = tb::to_json(c.h2d_together_us);
                std::ofstream(json_file) << doc.dump(2) << '\n';
            }
            return 0;
        }
        if (!band_split.empty()) {
            // One whole copy cut into pieces; each variant timed from release to completion.
            nlohmann::json pieces = nlohmann::json::array();
            std::printf("%-8s %-6s %-16s %-16s %-16s %-16s %-16s\n", "copy", "pieces",
                        "submissions us", "first piece us", "events us", "barriers us",
                        "two engines us");
            for (const bool download : {true, false}) {
                const td::Device& device = download ? worker : primary;
                for (const std::uint32_t n : band_split) {
                    const auto c = tb::measure_band_split(device, VkDeviceSize{1920} * 1080 * 4, n,
                                                          download, runs, lead);
                    const char* what = download ? "d2h" : "h2d";
                    // No events on a transfer-only family (vkCmdSetEvent2 needs graphics or
                    // compute): "n/a", null in the JSON.
                    const bool events = c.events_us.n > 0;
                    std::printf("%-8s %-6u %-16.1f %-16.1f %-16s %-16.1f %-16.1f\n", what, n,
                                c.submissions_us.median, c.first_piece_us.median,
                                events ? num(c.events_us.median, 1).c_str() : "n/a",
                                c.barriers_us.median, c.two_queues_us.median);
                    pieces.push_back({{"copy", what},
                                      {"adapter", download ? worker_index : selection.primary},
                                      {"pieces", n},
                                      {"submissions_us", c.submissions_us.median},
                                      {"first_piece_us", c.first_piece_us.median},
                                      {"events_us", events ? nlohmann::json(c.events_us.median)
                                                           : nlohmann::json(nullptr)},
                                      {"barriers_us", c.barriers_us.median},
                                      {"two_engines_us", c.two_queues_us.median},
                                      {"two_engines", device.has_second_transfer_queue()}});
                }
            }
            if (!json_file.empty()) {
                nlohmann::json doc;
                doc["benchmark"] = "band-split";
                doc["config"] = {{"bytes", 1920 * 1080 * 4}, {"runs", runs}, {"lead_us", lead_us}};
                doc["machine"] = {{"worker", winfo.name}, {"primary", pinfo.name}};
                doc["rows"] = pieces;
                std::ofstream(json_file) << doc.dump(2) << '\n';
            }
            return 0;
        }
        const std::uint32_t texel = td::bytes_per_texel(*format);
        auto batch_for = [&](VkDeviceSize bytes) {
            if (batch != 0) {
                return batch;
            }
            const VkDeviceSize n = (VkDeviceSize{128} << 20) / std::max<VkDeviceSize>(bytes, 1);
            return static_cast<std::uint32_t>(
                std::clamp<VkDeviceSize>(n, VkDeviceSize{2} * slots, 64));
        };

        std::printf("worker copies on %s\n", worker.copy_queue_choice().reason.c_str());
        if (&primary != &worker) {
            std::printf("primary copies on %s\n", primary.copy_queue_choice().reason.c_str());
        }
        // The links the host copies cross, to refuse a ceiling measured above them.
        const std::optional<tb::PcieLink> worker_link = tb::pcie_link(worker);
        const std::optional<tb::PcieLink> primary_link = tb::pcie_link(primary);
        for (const auto& [what, link] :
             {std::pair{"worker", &worker_link}, std::pair{"primary", &primary_link}}) {
            if (*link) {
                std::printf("%s's PCIe link: %s, %s GB/s one way\n", what, (*link)->text.c_str(),
                            num((*link)->gbps, 1).c_str());
            }
        }
        std::map<std::string, Ceilings> ceilings;
        std::vector<Row> rows;
        std::vector<std::string> notes;
        for (const Size& size : sizes) {
            const VkDeviceSize bytes = VkDeviceSize{size.w} * size.h * texel;
            const std::uint32_t n = batch_for(bytes);
            Ceilings c;
            c.worker_d2h =
                tb::measure_copy_ceiling(worker, tb::Direction::DeviceToHost, bytes, n, runs, lead);
            c.worker_h2d =
                tb::measure_copy_ceiling(worker, tb::Direction::HostToDevice, bytes, n, runs, lead);
            c.primary_d2h = tb::measure_copy_ceiling(primary, tb::Direction::DeviceToHost, bytes, n,
                                                     runs, lead);
            c.primary_h2d = tb::measure_copy_ceiling(primary, tb::Direction::HostToDevice, bytes, n,
                                                     runs, lead);
            const VkExtent2D extent{size.w, size.h};
            const VkDeviceSize rgba8_bytes = VkDeviceSize{size.w} * size.h * 4;
            const std::uint32_t image_batch = batch_for(rgba8_bytes);
            c.worker_d2h_image = tb::measure_image_copy(worker, tb::Direction::DeviceToHost, extent,
                                                        image_batch, runs, lead);
            c.primary_h2d_image = tb::measure_image_copy(primary, tb::Direction::HostToDevice,
                                                         extent, image_batch, runs, lead);
            ceilings[size.name()] = c;
            std::map<TransferPath, tb::CopyCeiling> on_device;
            std::optional<tb::CopyCeiling> cuda_copy;
            if (std::find(paths.begin(), paths.end(), TransferPath::CudaPeer) != paths.end()) {
                try {
                    cuda_copy = tb::measure_cuda_copy(worker, primary, bytes, n, runs);
                    std::printf("%-10s cuda-peer: CUDA copy between cuMemAlloc buffers: "
                                "%s GB/s, %s us%s\n",
                                size.name().c_str(), num(cuda_copy->gbps.median).c_str(),
                                num(cuda_copy->latency_us.median, 1).c_str(),
                                cuda_copy->verified ? "" : " NOT VERIFIED");
                } catch (const tandem::Error& e) {
                    std::printf("%-10s cuda-peer ceiling not measured: %s\n", size.name().c_str(),
                                e.what());
                }
            }
            for (TransferPath p : paths) {
                if (device_local(p) && *format == VK_FORMAT_R8G8B8A8_UNORM) {
                    const td::QueueRole queue = worker.copy_queue_choice().role;
                    on_device[p] = tb::measure_on_device_copy(worker, queue,
                                                              p == TransferPath::SameDevice
                                                                  ? tb::OnDeviceCopy::ImageToImage
                                                                  : tb::OnDeviceCopy::ThroughBuffer,
                                                              extent, image_batch, runs, lead);
                    const tb::CopyCeiling& o = on_device[p];
                    std::printf("%-10s %s ceiling (%s, %s queue): %s GB/s, %s us%s\n",
                                size.name().c_str(), tandem::to_string(p),
                                tb::to_string(p == TransferPath::SameDevice
                                                  ? tb::OnDeviceCopy::ImageToImage
                                                  : tb::OnDeviceCopy::ThroughBuffer),
                                td::to_string(queue), num(o.gbps.median).c_str(),
                                num(o.latency_us.median, 1).c_str(),
                                o.verified ? "" : " NOT VERIFIED");
                }
            }
            for (TransferPath p : paths) {
                for (bool banded : {false, true}) {
                    if (banded && p == TransferPath::SameDevice) {
                        continue; // no staging, nothing to band
                    }
                    tb::PathPoint point;
                    point.path = p;
                    point.width = size.w;
                    point.height = size.h;
                    point.format = *format;
                    point.band_rows_requested = banded ? band_rows : size.h;
                    if (banded) {
                        point.band_heights = band_heights;
                    }
                    point.hand_off =
                        hand_off == "signal" ? td::BandHandOff::Signal : td::BandHandOff::Submit;
                    point.stream_copies = cuda_copies == "stream";
                    point.watch_worker = watch_worker;
                    point.gpu_times = gpu_times;
                    point.write_in_place = write_in_place;
                    point.read_in_place = read_in_place;
                    point.slots = slots;
                    point.batch = n;
                    point.runs = runs;
                    point.lead = lead;
                    point.bridge_spin = std::chrono::microseconds(bridge_spin_us);
                    Row row{p, size, banded, {}, 0, 0};
                    try {
                        row.result = tb::measure_path(worker, primary, pair, point);
                    } catch (const tandem::Error& e) {
                        row.result.error = e.what();
                    }
                    const auto o = on_device.find(p);
                    if (p == TransferPath::CudaPeer) {
                        if (cuda_copy && o != on_device.end()) {
                            const bool vulkan_slower =
                                tb::steady_rate(o->second) < tb::steady_rate(*cuda_copy);
                            const tb::CopyCeiling& slower = vulkan_slower ? o->second : *cuda_copy;
                            row.ceiling_gbps = tb::steady_rate(slower);
                            row.ceiling_whole_gbps = slower.gbps.median;
                            row.raw_latency_us = slower.latency_us.median;
                            row.own_ceiling = true;
                            row.ceiling = vulkan_slower ? "Vulkan copies (slower than CUDA's)"
                                                        : "CUDA copy (slower than Vulkan's)";
                            row.cuda_copy_gbps = tb::steady_rate(*cuda_copy);
                        }
                    } else if (o != on_device.end()) {
                        row.ceiling_gbps = tb::steady_rate(o->second);
                        row.ceiling_whole_gbps = o->second.gbps.median;
                        row.raw_latency_us = o->second.latency_us.median;
                        row.own_ceiling = true;
                        row.ceiling = "on-device copy";
                    } else {
                        host_ceiling(row, c, worker_link, primary_link);
                    }
                    rows.push_back(row);
                    std::fflush(stdout);
                }
            }
        }

        // Table.
        std::printf("\nCeilings (median of %u; GB/s over a batch of copies, us for one copy)\n",
                    runs);
        std::printf("%-10s %12s %12s %12s %12s %12s %12s %s\n", "size", "wrk d2h GB/s",
                    "wrk h2d GB/s", "pri d2h GB/s", "pri h2d GB/s", "wrk d2h us", "pri h2d us",
                    "verified");
        auto image_line = [&](const Size& size) {
            const auto& c = ceilings[size.name()];
            const double wd = c.worker_d2h.gbps.median;
            const double ph = c.primary_h2d.gbps.median;
            std::printf("%-10s RGBA8 image copies: worker d2h %s GB/s (%s x buffer), primary h2d "
                        "%s GB/s (%s x buffer)\n",
                        size.name().c_str(), num(c.worker_d2h_image.gbps.median).c_str(),
                        num(wd > 0 ? c.worker_d2h_image.gbps.median / wd : 0).c_str(),
                        num(c.primary_h2d_image.gbps.median).c_str(),
                        num(ph > 0 ? c.primary_h2d_image.gbps.median / ph : 0).c_str());
        };
        for (const Size& size : sizes) {
            const auto& c = ceilings[size.name()];
            std::printf(
                "%-10s %12s %12s %12s %12s %12s %12s %s\n", size.name().c_str(),
                num(c.worker_d2h.gbps.median).c_str(), num(c.worker_h2d.gbps.median).c_str(),
                num(c.primary_d2h.gbps.median).c_str(), num(c.primary_h2d.gbps.median).c_str(),
                num(c.worker_d2h.latency_us.median, 1).c_str(),
                num(c.primary_h2d.latency_us.median, 1).c_str(),
                c.worker_d2h.verified && c.worker_h2d.verified && c.primary_d2h.verified &&
                        c.primary_h2d.verified
                    ? "yes"
                    : "NO");
        }
        for (const Size& size : sizes) {
            image_line(size);
        }
        std::printf(
            "\nPaths (median [min-max] of %u runs, nearest rank; GB/s from the first "
            "completion to the last, the ceiling's copies timed alike; ceiling = the copies "
            "the path makes: min(worker d2h, primary h2d), or one side's copy alone where "
            "the other is in place; raw = those copies' latency; same-device and "
            "shared-memory: their own copies within the device, cuda-peer: the slower of "
            "those copies and CUDA's copy, above; x whole: the batch from its release to "
            "its last completion against the ceiling's batch timed so)\n",
            runs);
        std::printf("%-14s %-10s %-18s %-24s %8s %8s %-26s %8s %s\n", "path", "size", "bands",
                    "GB/s", "x ceil", "x whole", "latency us", "x raw", "verified");
        for (const Row& r : rows) {
            const auto& res = r.result;
            if (!res.error.empty() && res.gbps.n == 0) {
                std::printf("%-14s %-10s %-18s error: %s\n", tandem::to_string(r.path),
                            r.size.name().c_str(), r.banded ? "banded" : "unbanded",
                            res.error.c_str());
                continue;
            }
            const std::string bands =
                std::string(r.banded ? "banded " : "whole ") + bands_text(res.band_heights);
            const bool has_ceiling = r.ceiling_gbps > 0 && r.ceiling_error.empty();
            std::printf(
                "%-14s %-10s %-18s %-24s %8s %8s %-26s %8s %s\n", tandem::to_string(r.path),
                r.size.name().c_str(), bands.c_str(),
                (num(res.gbps.median) + " [" + num(res.gbps.min) + "-" + num(res.gbps.max) + "]")
                    .c_str(),
                has_ceiling ? num(ratio(res.gbps.median, r.ceiling_gbps)).c_str() : "-",
                has_ceiling ? num(ratio(res.gbps_whole_batch.median, r.ceiling_whole_gbps)).c_str()
                            : "-",
                (num(res.latency_us.median, 1) + " [" + num(res.latency_us.min, 1) + "-" +
                 num(res.latency_us.max, 1) + "]")
                    .c_str(),
                has_ceiling ? num(ratio(res.latency_us.median, r.raw_latency_us)).c_str() : "-",
                res.verified ? "yes" : ("NO: " + res.error).c_str());
            std::printf("%-14s   ceiling: %s%s%s\n", "", r.ceiling.c_str(),
                        r.ceiling_error.empty() ? "" : "; NOT USED: ", r.ceiling_error.c_str());
            if (r.cuda_copy_gbps > 0) {
                std::printf("%-14s   %s of CUDA's copy alone (%s GB/s)\n", "",
                            num(res.gbps.median / r.cuda_copy_gbps, 3).c_str(),
                            num(r.cuda_copy_gbps).c_str());
            }
            if (r.banded && res.band_handed_us.size() > 1) {
                std::printf("%-14s   bands handed to the primary at %s us after the release; "
                            "last band handed -> ready %s us\n",
                            "", join_us(res.band_handed_us).c_str(),
                            num(res.latency_us.median - res.band_handed_us.back(), 1).c_str());
                if (!res.worker_band_seen_us.empty()) {
                    std::printf("%-14s   worker bands seen done at %s us\n", "",
                                join_us(res.worker_band_seen_us).c_str());
                }
            }
            for (std::size_t b = 0; b < res.band_gpu_us.size(); ++b) {
                const tb::BandGpuUs& g = res.band_gpu_us[b];
                std::printf("%-14s   band %zu on the GPUs: worker %s-%s us, primary %s-%s us\n", "",
                            b, num(g.worker_begin, 1).c_str(), num(g.worker_end, 1).c_str(),
                            num(g.primary_begin, 1).c_str(), num(g.primary_end, 1).c_str());
            }
        }

        // Goals (host-imported, RGBA8, 1920x1080 and larger; device-local paths against their
        // own on-device ceiling).
        // A goal is met only with a ceiling the path really has (none where both sides are in
        // place, none measured above its link), verified data, and for a banded goal more than
        // one band (banding that collapsed to one band measured nothing banded).
        nlohmann::json goals = nlohmann::json::array();
        const bool rgba8 = *format == VK_FORMAT_R8G8B8A8_UNORM;
        auto goal = [&](const Row& r, const std::string& name, double measured, double target,
                        bool at_most) {
            nlohmann::json g = {
                {"name", name}, {"measured", measured}, {"target", target}, {"ceiling", r.ceiling}};
            std::string why;
            if (!r.result.verified) {
                why = "data not verified";
            } else if (r.ceiling_gbps <= 0) {
                why = "no ceiling: " + r.ceiling;
            } else if (!r.ceiling_error.empty()) {
                why = "ceiling not usable: " + r.ceiling_error;
            } else if (r.banded && r.result.bands() <= 1) {
                why = "banding collapsed to one band";
            }
            const bool within = at_most ? measured <= target : measured >= target;
            g["met"] = why.empty() && within;
            if (!why.empty()) {
                g["not_evaluated"] = why;
            }
            goals.push_back(g);
        };
        for (const Row& r : rows) {
            const std::uint64_t area = std::uint64_t{r.size.w} * r.size.h;
            if (r.own_ceiling && r.result.gbps.n > 0 && area >= 1920ull * 1080) {
                goal(r,
                     std::string(tandem::to_string(r.path)) + " throughput " + r.size.name() +
                         (r.banded ? " banded" : " unbanded") + " / its own " + r.ceiling,
                     ratio(r.result.gbps.median, r.ceiling_gbps), 0.9, false);
            }
        }
        for (const Row& r : rows) {
            if (r.path != TransferPath::HostImported || !rgba8 || r.result.gbps.n == 0) {
                continue;
            }
            const std::uint64_t pixels = std::uint64_t{r.size.w} * r.size.h;
            const std::string mode = r.banded ? "banded" : "unbanded";
            if (pixels >= 1920ull * 1080) {
                goal(r,
                     "host-imported throughput " + r.size.name() + " " + mode + " / " + r.ceiling,
                     ratio(r.result.gbps.median, r.ceiling_gbps), 0.9, false);
            }
            if (r.size.w == 1920 && r.size.h == 1080) {
                const double target =
                    r.banded ? 0.7 * r.raw_latency_us : 1.2 * r.raw_latency_us + 50.0;
                goal(r,
                     "host-imported latency 1920x1080 " + mode + " (us), " +
                         (r.banded ? "<= 0.7 x raw" : "<= 1.2 x raw + 50"),
                     r.result.latency_us.median, target, true);
            }
        }
        if (!goals.empty()) {
            std::printf("\nGoals\n");
            for (const auto& g : goals) {
                std::printf("  %-70s measured %10.3f target %10.3f  %s%s\n",
                            g["name"].get<std::string>().c_str(), g["measured"].get<double>(),
                            g["target"].get<double>(), g["met"].get<bool>() ? "met" : "NOT MET",
                            g.contains("not_evaluated")
                                ? (" (" + g["not_evaluated"].get<std::string>() + ")").c_str()
                                : "");
            }
        }

        if (!json_file.empty()) {
            char host[256] = {};
            ::gethostname(host, sizeof host - 1);
            nlohmann::json doc;
            doc["benchmark"] = "transfer";
            nlohmann::json devices = nlohmann::json::array();
            for (const auto* info : {&pinfo, &winfo}) {
                devices.push_back({{"index", info->index},
                                   {"role", info == &pinfo ? "primary" : "worker"},
                                   {"name", info->name},
                                   {"driver", info->driver_name + " " + info->driver_version},
                                   {"uuid", tandem::to_string(info->device_uuid)}});
            }
            doc["machine"] = {{"host", host},
                              {"cpus", std::thread::hardware_concurrency()},
                              {"devices", devices}};
            nlohmann::json size_names = nlohmann::json::array();
            for (const Size& s : sizes) {
                size_names.push_back(s.name());
            }
            nlohmann::json path_names = nlohmann::json::array();
            for (TransferPath p : paths) {
                path_names.push_back(tandem::to_string(p));
            }
            doc["config"] = {{"percentile_rule", "nearest rank"},
                             {"timing",
                              "throughput: first completion to last, the ceilings' copies timed "
                              "alike (their batch less one copy); whole batch: release to last "
                              "completion, both"},
                             {"worker_pcie_link", worker_link ? worker_link->text : "none"},
                             {"primary_pcie_link", primary_link ? primary_link->text : "none"},
                             {"primary", selection.primary},
                             {"worker", worker_index},
                             {"format", td::format_name(*format)},
                             {"sizes", size_names},
                             {"paths", path_names},
                             {"runs", runs},
                             {"band_rows", band_rows},
                             {"band_heights", band_heights},
                             {"band_hand_off", hand_off},
                             {"cuda_copies", cuda_copies},
                             {"watch_worker_bands", watch_worker},
                             {"gpu_times", gpu_times},
                             {"write_in_place", write_in_place},
                             {"read_in_place", read_in_place},
                             {"slots", slots},
                             {"batch", batch},
                             {"lead_us", lead_us},
                             {"bridge_spin_us", bridge_spin_us},
                             {"validation", validation},
                             {"sync", pair.gpu_side_sync ? "gpu" : "host-bridge"},
                             {"worker_copy_engine", worker.has_dedicated_transfer_family()},
                             {"primary_copy_engine", primary.has_dedicated_transfer_family()},
                             {"worker_copy_queue", worker.copy_queue_choice().reason},
                             {"primary_copy_queue", primary.copy_queue_choice().reason}};
            nlohmann::json cj;
            for (const Size& size : sizes) {
                const auto& c = ceilings[size.name()];
                cj[size.name()] = {
                    {"bytes", VkDeviceSize{size.w} * size.h * texel},
                    {"worker_d2h_gbps", c.worker_d2h.gbps.median},
                    {"worker_h2d_gbps", c.worker_h2d.gbps.median},
                    {"primary_d2h_gbps", c.primary_d2h.gbps.median},
                    {"primary_h2d_gbps", c.primary_h2d.gbps.median},
                    {"worker_d2h_steady_gbps", tb::steady_rate(c.worker_d2h)},
                    {"worker_h2d_steady_gbps", tb::steady_rate(c.worker_h2d)},
                    {"primary_d2h_steady_gbps", tb::steady_rate(c.primary_d2h)},
                    {"primary_h2d_steady_gbps", tb::steady_rate(c.primary_h2d)},
                    {"ring_buffers",
                     tb::uncached_ring(VkDeviceSize{size.w} * size.h * texel,
                                       batch_for(VkDeviceSize{size.w} * size.h * texel))},
                    {"worker_d2h_us", c.worker_d2h.latency_us.median},
                    {"primary_h2d_us", c.primary_h2d.latency_us.median},
                    {"detail",
                     {{"worker_d2h", ceiling_json(c.worker_d2h)},
                      {"worker_h2d", ceiling_json(c.worker_h2d)},
                      {"primary_d2h", ceiling_json(c.primary_d2h)},
                      {"primary_h2d", ceiling_json(c.primary_h2d)},
                      {"worker_d2h_rgba8_image", ceiling_json(c.worker_d2h_image)},
                      {"primary_h2d_rgba8_image", ceiling_json(c.primary_h2d_image)}}}};
            }
            doc["ceilings"] = cj;
            nlohmann::json rj = nlohmann::json::array();
            for (const Row& r : rows) {
                nlohmann::json row = {
                    {"path", tandem::to_string(r.path)},
                    {"size", r.size.name()},
                    {"width", r.size.w},
                    {"height", r.size.h},
                    {"bytes", VkDeviceSize{r.size.w} * r.size.h * texel},
                    {"banded", r.banded},
                    {"band_rows", r.result.band_rows()},
                    {"band_heights", r.result.band_heights},
                    {"bands", r.result.bands()},
                    {"gpu_side_sync", r.result.gpu_side_sync},
                    {"written_in_place", r.result.written_in_place},
                    {"read_in_place", r.result.read_in_place},
                    {"throughput_gbps", tb::to_json(r.result.gbps)},
                    {"throughput_whole_batch_gbps", tb::to_json(r.result.gbps_whole_batch)},
                    {"latency_us", tb::to_json(r.result.latency_us)},
                    {"band_handed_us", r.result.band_handed_us},
                    {"worker_band_seen_us", r.result.worker_band_seen_us},
                    {"band_gpu_us", band_gpu_json(r.result.band_gpu_us)},
                    {"ceiling_gbps", r.ceiling_gbps},
                    {"ceiling_whole_batch_gbps", r.ceiling_whole_gbps},
                    {"ceiling", r.ceiling},
                    {"ceiling_error", r.ceiling_error},
                    {"throughput_vs_ceiling", ratio(r.result.gbps.median, r.ceiling_gbps)},
                    {"throughput_whole_batch_vs_ceiling",
                     ratio(r.result.gbps_whole_batch.median, r.ceiling_whole_gbps)},
                    {"raw_latency_us", r.raw_latency_us},
                    {"cuda_copy_gbps", r.cuda_copy_gbps},
                    {"throughput_vs_cuda_copy",
                     r.cuda_copy_gbps > 0 ? r.result.gbps.median / r.cuda_copy_gbps : 0.0},
                    {"latency_vs_raw", ratio(r.result.latency_us.median, r.raw_latency_us)},
                    {"verified", r.result.verified}};
                if (!r.result.error.empty()) {
                    row["error"] = r.result.error;
                }
                rj.push_back(row);
            }
            doc["rows"] = rj;
            doc["goals"] = goals;
            std::ofstream out(json_file);
            out << doc.dump(2) << "\n";
            if (!out) {
                throw tandem::Error("Writing " + json_file + " failed",
                                    "Check the path and free space");
            }
            std::printf("\nwrote %s\n", json_file.c_str());
        }
        bool all_verified = true;
        for (const Row& r : rows) {
            all_verified = all_verified && r.result.verified;
        }
        return all_verified ? 0 : 3;
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "tandem-bench-transfer: error: %s\n", e.what());
        return 1;
    }
}
