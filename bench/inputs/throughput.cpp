// tandem-bench-input-throughput: how fast the primary's images reach a worker as task inputs,
// against the pair's copy ceiling in that direction measured in the same run. A task on
// --placement takes one RGBA8 input of each --sizes size and makes a 16x16 output from its
// corner (so the pass and the way back cost next to nothing, and the inputs' path is what
// limits); the application submits as fast as the task takes frames (three slots in flight)
// and the inputs' throughput is their bytes over the time between the ready outputs, after a
// warm-up tenth. The ceiling is the copies the path makes, each a plain buffer copy of the same
// bytes on its device's transfer queue (bench/transfer/ceiling.hpp), timed as the stream is (the
// rate from the first copy's completion to the last): the slower of device -> host on the
// primary and host -> device on the worker, or, where the worker reads its inputs in place, the
// primary's download alone (the worker makes no copy). The image copies of the same size are
// reported beside it. The ceiling's copies cycle through buffers no cache can hold (256 MiB); the
// streaming ceiling beside it cycles through a ring of --slots buffer pairs, as a stream of
// frames in flight touches a buffer per frame. Beside both, the pair's
// pipelined ceiling
// (bench/transfer/pair_pipeline.hpp): the same path's copies streaming frames from the primary to
// the worker (each frame into its slot's target) with nothing of the runtime in between, which
// counts what the two copies' minimum
// leaves out (the sides taking turns, the hand-off, two openings of one GPU sharing it). Every
// eighth output is checked against the input's corner; outside the timed part, whole frames that
// change every frame are checked (check_whole_frames). Percentiles: nearest rank. With --producer
// the input is another task's output instead (a chain across two workers), sent by the producer's
// feed on their pair's path.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "../transfer/ceiling.hpp"
#include "../transfer/pair_pipeline.hpp"
#include "app_images.hpp"
#include "core/capabilities.hpp"
#include "core/resources.hpp"
#include "harness/cpu_threads.hpp"
#include "harness/lease_reader.hpp"
#include "harness/tool_log.hpp"
#include "runtime/runtime_impl.hpp"
#include "tandem/error.hpp"
#include "tandem/runtime.hpp"
#include "tandem/trace.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace detail = tandem::detail;
namespace tb = tandem::bench;

constexpr std::uint32_t k_corner = 16; // the output: the input's top-left 16x16 texels

// The task's pass: the input's top-left texels copied into the output, as many as the output
// has, the input left as it came. The timed task's output is k_corner x k_corner (the corner);
// the whole-frame check's has the input's size (the whole input).
class CopyInput final : public tandem::Workload {
public:
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    tandem::WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const tandem::RecordContext& job) override {
        const tandem::JobInput& in = job.inputs[0];
        detail::image_barrier(job.cmd, in.image, in.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        VkImageCopy region{};
        region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.dstSubresource = region.srcSubresource;
        region.extent = {job.extent.width, job.extent.height, 1};
        vkCmdCopyImage(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, job.image,
                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        detail::image_barrier(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, in.layout,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE);
    }
};

// The producer's pass (--producer): its output cleared to colour_of(generation).
std::array<std::uint8_t, 4> colour_of(std::uint64_t generation) {
    return {static_cast<std::uint8_t>(generation & 255),
            static_cast<std::uint8_t>((generation >> 8) & 255),
            static_cast<std::uint8_t>((generation >> 16) & 255), 255};
}

class Fill final : public tandem::Workload {
public:
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    tandem::WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const tandem::RecordContext& job) override {
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_UNDEFINED,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const auto c = colour_of(job.generation);
        const VkClearColorValue value{{c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, 1.0f}};
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &value, 1,
                             &range);
    }
};

// The application's image: RGBA8 with texels that differ, left in TRANSFER_SRC_OPTIMAL.
struct AppImage {
    detail::Image image;
    std::vector<std::uint8_t> corner; // its top-left k_corner x k_corner texels
};

AppImage make_image(const detail::Device& primary, std::uint32_t w, std::uint32_t h) {
    AppImage out;
    detail::ImageDesc d;
    d.width = w;
    d.height = h;
    d.format = VK_FORMAT_R8G8B8A8_UNORM;
    d.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
              VK_IMAGE_USAGE_SAMPLED_BIT;
    d.name = "bench input";
    d.queue_families = {primary.queue(detail::QueueRole::Main).family()};
    out.image = detail::create_image(primary, d);
    const std::vector<std::uint8_t> bytes = tb::pattern_rgba8(w, h);
    for (std::uint32_t y = 0; y < k_corner; ++y) {
        const std::uint8_t* row = bytes.data() + std::size_t{y} * w * 4;
        out.corner.insert(out.corner.end(), row, row + std::size_t{k_corner} * 4);
    }
    tb::fill_image(primary, out.image.get(), {w, h}, 4, bytes.data());
    return out;
}

struct Size {
    std::uint32_t w = 0;
    std::uint32_t h = 0;
};

std::vector<Size> parse_sizes(const std::string& text) {
    std::vector<Size> out;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string item = text.substr(at, comma - at);
        Size s;
        if (std::sscanf(item.c_str(), "%ux%u", &s.w, &s.h) != 2 || s.w < k_corner ||
            s.h < k_corner) {
            throw tandem::Error("--sizes item '" + item + "' is not WxH of at least 16x16",
                                "Give e.g. 1920x1080,3840x2160");
        }
        out.push_back(s);
        at = comma + 1;
    }
    return out;
}

// One size: the task's throughput (GB/s of inputs) with every output checked.
struct Measured {
    double gbps = 0.0;
    double frames_per_s = 0.0;
    std::uint64_t outputs = 0;
    std::uint64_t checked = 0;
    bool exact = true;
    std::string path;
    bool read_in_place = false;            // TaskStats::inputs_read_in_place
    std::uint64_t sends_early = 0;         // TaskStats::input_sends_early
    std::uint32_t device = 0;              // the adapter it ran on
    std::optional<std::uint32_t> producer; // the producer's adapter (--producer)
};

tandem::Placement placement_of(const std::string& text, const char* option) {
    const auto p = tandem::Placement::parse(text);
    if (!p) {
        throw tandem::Error(std::string(option) + " '" + text + "' is not a placement",
                            "Use worker, worker:N or an adapter index");
    }
    return *p;
}

// The task takes the application's image at each submit, or with `producer` (a placement) the
// output of a producer task there that clears each frame to its generation's colour (a chain,
// matching generations).
Measured run_task(tandem::Runtime& runtime, const std::string& placement,
                  const std::string& producer, const AppImage& app, Size size, std::uint32_t frames,
                  std::uint32_t slots) {
    const std::string dims = std::to_string(size.w) + "x" + std::to_string(size.h);
    tandem::TaskId source;
    if (!producer.empty()) {
        tandem::TaskDesc p;
        p.name = "producer " + dims;
        p.width = size.w;
        p.height = size.h;
        p.slots = slots;
        p.placement = placement_of(producer, "--producer");
        p.factory = [](const tandem::WorkerContext&) { return std::make_unique<Fill>(); };
        source = runtime.register_task(p);
    }
    tandem::TaskDesc d;
    d.name = "inputs " + dims;
    d.width = k_corner;
    d.height = k_corner;
    d.slots = slots;
    d.placement = placement_of(placement, "--placement");
    d.factory = [](const tandem::WorkerContext&) { return std::make_unique<CopyInput>(); };
    tandem::TaskInputDesc in;
    in.name = "colour";
    in.width = size.w;
    in.height = size.h;
    in.producer = source;
    d.inputs = {in};
    const tandem::TaskId id = runtime.register_task(d);
    const tandem::InputImage input{app.image.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                   VK_NULL_HANDLE, 0};
    tandem::harness::LeaseReader reader(runtime, 2, k_corner, k_corner);
    Measured m;
    const std::uint64_t warm = frames / 10;
    Clock::time_point first{};
    Clock::time_point last{};
    std::uint64_t first_ready = 0;
    std::uint64_t ready = 0;
    std::uint64_t shown = 0;
    std::uint32_t accepted = 0;
    const auto give_up = Clock::now() + std::chrono::seconds(120);
    std::uint64_t produced = 0;
    while (Clock::now() < give_up) {
        if (source && produced < accepted + slots && runtime.submit(source).accepted()) {
            ++produced; // a ring ahead of the consumer at most
        }
        const std::span<const tandem::InputImage> inputs =
            source ? std::span<const tandem::InputImage>{}
                   : std::span<const tandem::InputImage>{&input, 1};
        if (accepted < frames && (!source || accepted < produced) &&
            runtime.submit(id, {}, inputs).accepted()) {
            ++accepted;
        }
        runtime.pump();
        // The newest ready generation (generation N is the Nth job; a failed job fails the run),
        // from the lease rather than stats(), which takes the task's locks and copies its samples
        // on every turn of this loop.
        const tandem::AcquireResult lease = runtime.acquire(id);
        if (lease) {
            ready = std::max(ready, lease->generation);
        }
        if (ready > warm && first_ready == 0) {
            first_ready = ready;
            first = Clock::now();
        }
        if (ready > first_ready && first_ready != 0) {
            m.outputs = ready - first_ready;
            last = Clock::now();
        }
        if (lease) {
            std::uint64_t v = 0;
            if (shown == 0 || lease->generation >= shown + 8) { // every eighth or so
                v = reader.read(*lease, true);
                if (v != 0 && reader.wait(v, std::chrono::seconds(10)) == VK_SUCCESS) {
                    const std::uint8_t* px = reader.pixels(v);
                    // From a producer: generation N of the consumer read the producer's N.
                    const auto colour = colour_of(lease->generation);
                    const bool same =
                        px != nullptr &&
                        (source ? std::all_of(px, px + app.corner.size(),
                                              [&, i = std::size_t{0}](std::uint8_t b) mutable {
                                                  return b == colour[i++ % 4];
                                              })
                                : std::equal(app.corner.begin(), app.corner.end(), px));
                    m.exact = m.exact && same;
                    ++m.checked;
                }
                shown = lease->generation;
            }
            runtime.release(*lease, v);
        }
        if (accepted == frames && ready >= frames) {
            break;
        }
        if (accepted == frames) {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }
    const double seconds = std::chrono::duration<double>(last - first).count();
    if (m.outputs == 0 || seconds <= 0.0) {
        throw tandem::Error("The task at " + std::to_string(size.w) + "x" + std::to_string(size.h) +
                                " made too few outputs to time",
                            "Give more --frames");
    }
    m.frames_per_s = static_cast<double>(m.outputs) / seconds;
    m.gbps = m.frames_per_s * static_cast<double>(size.w) * size.h * 4 / 1e9;
    const tandem::TaskStats s = runtime.stats(id);
    m.path = s.input_path;
    m.read_in_place = s.inputs_read_in_place;
    m.sends_early = s.input_sends_early;
    m.device = s.device;
    m.exact = m.exact && m.checked > 0 && s.failed_jobs == 0;
    if (source) {
        // Sent by the producer's feed to this worker, on their pair's path; never copied or sent
        // by the primary.
        const tandem::TaskStats ps = runtime.stats(source);
        m.producer = ps.device;
        m.path = ps.feeds.empty() ? std::string("(no feed)") : ps.feeds[0].path;
        m.exact = m.exact && s.input_copies == 0 && s.input_sends == 0 && ps.failed_jobs == 0 &&
                  (ps.device == s.device || ps.feeds.size() == 1);
    }
    (void)runtime.unregister_task(id);
    if (source) {
        (void)runtime.unregister_task(source);
    }
    return m;
}

// Untimed: the path carries whole frames that change every frame. A task like the timed one but
// whose output is its whole input, on the same placement (so the same input path and in-place
// choice), takes `frames` application images of distinct bytes: first one at a time (each output
// read back whole before the next submit: a stale input is caught), then back to back with the
// slots in flight (every output seen is read back whole and compared with its own frame's image).
struct WholeFrames {
    std::uint64_t checked = 0;
    bool exact = true;
};
WholeFrames check_whole_frames(tandem::Runtime& runtime, const std::string& placement,
                               const detail::Device& primary, Size size, std::uint32_t slots) {
    const std::uint32_t frames = 2 * slots + 2;
    const VkDeviceSize bytes = VkDeviceSize{size.w} * size.h * 4;
    std::vector<AppImage> images;
    std::vector<std::vector<std::uint8_t>> contents;
    for (std::uint32_t f = 0; f < frames; ++f) {
        images.push_back(make_image(primary, size.w, size.h));
        contents.push_back(tb::pattern(bytes, 7000 + f * 31 + size.w));
        tb::fill_image(primary, images.back().image.get(), {size.w, size.h}, 4,
                       contents.back().data());
    }
    tandem::TaskDesc d;
    d.name = "whole-frame check " + std::to_string(size.w) + "x" + std::to_string(size.h);
    d.width = size.w;
    d.height = size.h;
    d.slots = slots;
    d.placement = placement_of(placement, "--placement");
    d.factory = [](const tandem::WorkerContext&) { return std::make_unique<CopyInput>(); };
    tandem::TaskInputDesc in;
    in.name = "colour";
    in.width = size.w;
    in.height = size.h;
    d.inputs = {in};
    const tandem::TaskId id = runtime.register_task(d);
    tandem::harness::LeaseReader reader(runtime, 2, size.w, size.h);
    WholeFrames out;
    // Generation g took images[(g - 1) % frames]: submits are accepted in order.
    auto check = [&](const tandem::Lease& lease) {
        std::uint64_t v = reader.read(lease, true);
        bool same = false;
        if (v != 0 && reader.wait(v, std::chrono::seconds(30)) == VK_SUCCESS) {
            const std::uint8_t* px = reader.pixels(v);
            const auto& want = contents[(lease.generation - 1) % frames];
            same = px != nullptr && std::equal(want.begin(), want.end(), px);
        }
        out.exact = out.exact && same;
        ++out.checked;
        runtime.release(lease, v);
    };
    std::uint64_t submitted = 0;
    std::uint64_t seen = 0;
    const auto give_up = Clock::now() + std::chrono::seconds(120);
    auto submit = [&]() {
        const tandem::InputImage input{images[submitted % frames].image.get(),
                                       VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_NULL_HANDLE, 0};
        if (runtime.submit(id, {}, {&input, 1}).accepted()) {
            ++submitted;
        }
    };
    // One at a time, then back to back.
    for (const bool serial : {true, false}) {
        const std::uint64_t end = submitted + frames;
        while (seen < end && Clock::now() < give_up) {
            if (submitted < end && (!serial || submitted == seen)) {
                submit();
            }
            runtime.pump();
            if (const tandem::AcquireResult lease = runtime.acquire(id);
                lease && lease->generation > seen) {
                seen = lease->generation;
                check(*lease);
            } else if (lease) {
                runtime.release(*lease, 0);
            }
        }
    }
    out.exact = out.exact && seen == submitted && runtime.stats(id).failed_jobs == 0;
    (void)runtime.unregister_task(id);
    return out;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Tandem's inputs throughput benchmark: the primary's images to a worker as task "
                 "inputs, against the pair's copy ceiling"};
    std::string sizes_text = "1920x1080,3840x2160";
    std::uint32_t frames = 300;
    std::uint32_t runs = 5;
    std::uint32_t slots = 3;
    std::string placement = "worker";
    std::string producer;
    std::string machine;
    std::string json_file;
    std::string trace_file;
    std::string log_level = "warn";
    tandem::RuntimeOptions options;
    options.validation = "off";
    app.add_option("--sizes", sizes_text, "input sizes WxH, comma-separated")
        ->capture_default_str();
    app.add_option("--frames", frames, "frames submitted per size")
        ->capture_default_str()
        ->check(CLI::Range(20u, 1000000u));
    app.add_option("--runs", runs, "timed runs of each ceiling copy and of the pair's pipeline")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));
    app.add_option("--slots", slots, "the task's slots (frames in flight), 2 to 16")
        ->capture_default_str()
        ->check(CLI::Range(2u, 16u));
    app.add_option("--placement", placement, "where the task runs (a worker)")
        ->capture_default_str();
    app.add_option("--producer", producer,
                   "chain: the input is the output of a producer task placed here (another "
                   "worker), sent by its feed on the pair's path, instead of the application's "
                   "image");
    app.add_option("--transfer-path", options.transfer_path, "force a transfer path");
    std::int64_t timing_period_ms = options.cpu_device_timing_period.count();
    app.add_option("--cpu-timing-period", timing_period_ms,
                   "ms between timed jobs on a CPU device "
                   "(RuntimeOptions::cpu_device_timing_period; 0: every job)")
        ->capture_default_str();
    std::string in_place = options.cpu_reads_inputs_in_place ? "on" : "off";
    app.add_option("--read-in-place", in_place,
                   "on: a CPU device reads its inputs in the host memory they cross, off: it "
                   "copies them (RuntimeOptions::cpu_reads_inputs_in_place)")
        ->capture_default_str()
        ->check(CLI::IsMember({"on", "off"}));
    app.add_option("--virtual-devices", options.virtual_devices,
                   "open each physical device this many times (0: $TANDEM_VIRTUAL_DEVICES)");
    app.add_option("--primary", options.primary, "the primary adapter (index or name)");
    app.add_option("--workers", options.workers, "the workers (as tandem --workers)");
    app.add_option("--machine", machine, "A sentence describing the machine, for the JSON");
    app.add_option("--json", json_file, "Write the results as JSON to FILE");
    app.add_option("--trace", trace_file,
                   "Write the runtime's trace (Chrome trace-event JSON) of every size to FILE");
    app.add_option("--validation", options.validation, "off, core or sync")->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    tandem::harness::keep_cores_from_cpu_devices(); // before any instance: lavapipe reads it
    options.cpu_device_timing_period = std::chrono::milliseconds(timing_period_ms);
    options.cpu_reads_inputs_in_place = in_place == "on";

    try {
        options.log_level = tandem::harness::parse_log_level_option(log_level);
        tandem::harness::apply_tool_log_level(options.log_level);
        const std::vector<Size> sizes = parse_sizes(sizes_text);
        options.trace = !trace_file.empty();
        tandem::Runtime runtime(options);
        detail::RuntimeImpl& impl = detail::RuntimeAccess::impl(runtime);
        const detail::Device& primary = impl.primary();
        const std::vector<const detail::Worker*> workers = impl.workers().workers();
        if (workers.empty()) {
            throw tandem::Error("The runtime has no worker", "Name one with --workers");
        }
        const auto worker_device = [&](std::uint32_t adapter) -> const detail::Device* {
            for (const detail::Worker* w : workers) {
                if (w->device().info().index == adapter) {
                    return &w->device();
                }
            }
            return nullptr;
        };
        nlohmann::json rows = nlohmann::json::array();
        for (const Size& size : sizes) {
            const AppImage image = make_image(primary, size.w, size.h);
            const Measured m = run_task(runtime, placement, producer, image, size, frames, slots);
            const detail::Device* worker = worker_device(m.device);
            const detail::Device* sender = m.producer ? worker_device(*m.producer) : &primary;
            if (worker == nullptr || sender == nullptr || sender == worker) {
                throw tandem::Error(
                    "The task ran on adapter " + std::to_string(m.device) +
                        (m.producer ? " and its producer on adapter " + std::to_string(*m.producer)
                                    : std::string()) +
                        ": its input crossed no pair of devices",
                    "Place it on a worker with --placement (and its producer "
                    "on another with --producer)");
            }
            const VkDeviceSize bytes = VkDeviceSize{size.w} * size.h * 4;
            const auto batch = static_cast<std::uint32_t>(std::clamp<VkDeviceSize>(
                (VkDeviceSize{128} << 20) / bytes, VkDeviceSize{6}, VkDeviceSize{64}));
            const auto lead = std::chrono::microseconds(1000);
            const tb::CopyCeiling d2h = tb::measure_copy_ceiling(
                *sender, tb::Direction::DeviceToHost, bytes, batch, runs, lead);
            const tb::CopyCeiling h2d = tb::measure_copy_ceiling(
                *worker, tb::Direction::HostToDevice, bytes, batch, runs, lead);
            const VkExtent2D extent{size.w, size.h};
            const tb::CopyCeiling d2h_image = tb::measure_image_copy(
                *sender, tb::Direction::DeviceToHost, extent, batch, runs, lead);
            const tb::CopyCeiling h2d_image = tb::measure_image_copy(
                *worker, tb::Direction::HostToDevice, extent, batch, runs, lead);
            const tb::CopyCeiling d2h_ring = tb::measure_copy_ceiling(
                *sender, tb::Direction::DeviceToHost, bytes, batch, runs, lead, slots);
            const tb::CopyCeiling h2d_ring = tb::measure_copy_ceiling(
                *worker, tb::Direction::HostToDevice, bytes, batch, runs, lead, slots);
            // The copies the path makes, timed as the stream is (steady rates): read in place, the
            // receiver makes none and the sender's download alone is the ceiling.
            // Zero copy makes none: no ceiling, no ratio.
            const bool zero_copy = m.path == "zero-copy";
            const double ceiling = zero_copy ? 0.0
                                   : m.read_in_place
                                       ? tb::steady_rate(d2h)
                                       : std::min(tb::steady_rate(d2h), tb::steady_rate(h2d));
            const std::string ceiling_name = zero_copy ? "none: zero copy makes no copy"
                                             : m.read_in_place
                                                 ? "sender d2h alone (the receiver reads in place)"
                                                 : "min(sender d2h, receiver h2d)";
            const double ratio = ceiling > 0.0 ? m.gbps / ceiling : 0.0;
            const double streaming =
                zero_copy         ? 0.0
                : m.read_in_place ? tb::steady_rate(d2h_ring)
                                  : std::min(tb::steady_rate(d2h_ring), tb::steady_rate(h2d_ring));
            const double streaming_ratio = streaming > 0.0 ? m.gbps / streaming : 0.0;
            const WholeFrames whole = check_whole_frames(runtime, placement, primary, size, slots);
            const auto path = tandem::parse_transfer_path(m.path);
            const tb::PairPipeline pipeline =
                path && tb::pair_pipeline_drives(*path)
                    ? tb::measure_pair_pipeline(
                          *sender, *worker, detail::query_pair_info(sender->info(), worker->info()),
                          *path, extent, slots, frames, runs)
                    : tb::PairPipeline{}; // nothing staged to stream: reported as 0
            const double pipeline_ratio =
                pipeline.gbps.median > 0.0 ? m.gbps / pipeline.gbps.median : 0.0;
            std::printf("%ux%u %s -> %s over %s: %.2f GB/s of inputs (%.0f frames/s, %llu sent "
                        "ahead of their turn, %s; %llu "
                        "whole frames, each its own, %s), ceiling %s %.2f GB/s (sender d2h %.2f, "
                        "receiver h2d %.2f, steady; image copies %.2f / %.2f): x%.2f "
                        "(goal >= 0.9: %s); streaming ceiling %.2f GB/s (a ring of %u: d2h %.2f, "
                        "h2d %.2f): x%.2f; the path's own pipeline %.2f GB/s (%.0f frames/s, "
                        "%s, %s): x%.2f\n",
                        size.w, size.h, sender->label().c_str(), worker->label().c_str(),
                        (m.path + (m.read_in_place ? ", read in place" : "")).c_str(), m.gbps,
                        m.frames_per_s, static_cast<unsigned long long>(m.sends_early),
                        m.exact ? "every checked output exact" : "OUTPUT MISMATCH",
                        static_cast<unsigned long long>(whole.checked),
                        whole.exact ? "exact" : "MISMATCH", ceiling_name.c_str(), ceiling,
                        tb::steady_rate(d2h), tb::steady_rate(h2d), d2h_image.gbps.median,
                        h2d_image.gbps.median, ratio, ratio >= 0.9 ? "met" : "not met", streaming,
                        slots, tb::steady_rate(d2h_ring), tb::steady_rate(h2d_ring),
                        streaming_ratio, pipeline.gbps.median, pipeline.frames_per_s.median,
                        pipeline.gpu_side ? "GPU-side waits" : "host hand-off",
                        pipeline.verified ? "exact" : "NOT EXACT", pipeline_ratio);
            rows.push_back({{"size", std::to_string(size.w) + "x" + std::to_string(size.h)},
                            {"bytes_per_frame", bytes},
                            {"path", m.path},
                            {"read_in_place", m.read_in_place},
                            {"input_sends_early", m.sends_early},
                            {"gbps", m.gbps},
                            {"frames_per_s", m.frames_per_s},
                            {"outputs_timed", m.outputs},
                            {"outputs_checked", m.checked},
                            {"exact", m.exact},
                            {"ceiling_gbps", ceiling},
                            {"ceiling", ceiling_name},
                            {"whole_frames_checked", whole.checked},
                            {"whole_frames_exact", whole.exact},
                            {"sender", sender->label() + ": " + sender->info().name},
                            {"receiver", worker->label() + ": " + worker->info().name},
                            {"chained", m.producer.has_value()},
                            {"sender_d2h", tb::to_json(d2h.gbps)},
                            {"receiver_h2d", tb::to_json(h2d.gbps)},
                            {"sender_d2h_steady", tb::to_json(d2h.steady_gbps)},
                            {"receiver_h2d_steady", tb::to_json(h2d.steady_gbps)},
                            {"sender_d2h_image", tb::to_json(d2h_image.gbps)},
                            {"receiver_h2d_image", tb::to_json(h2d_image.gbps)},
                            {"x_ceiling", ratio},
                            {"sender_d2h_ring", tb::to_json(d2h_ring.gbps)},
                            {"receiver_h2d_ring", tb::to_json(h2d_ring.gbps)},
                            {"ring", slots},
                            {"streaming_ceiling_gbps", streaming},
                            {"x_streaming_ceiling", streaming_ratio},
                            {"pipeline_targets", slots},
                            {"pipeline_gbps", tb::to_json(pipeline.gbps)},
                            {"pipeline_frames_per_s", tb::to_json(pipeline.frames_per_s)},
                            {"pipeline_gpu_side", pipeline.gpu_side},
                            {"pipeline_exact", pipeline.verified},
                            {"x_pipeline", pipeline_ratio},
                            {"goal", ">= 0.9"},
                            {"met", ceiling > 0.0 && ratio >= 0.9 && m.exact && whole.exact}});
            if (!m.exact || !whole.exact) {
                throw tandem::Error("An output at " + std::to_string(size.w) + "x" +
                                        std::to_string(size.h) + " differs from its input",
                                    "The inputs' path corrupted data: run the tests");
            }
        }
        if (!trace_file.empty()) {
            tandem::write_trace(runtime, trace_file);
        }
        if (!json_file.empty()) {
            nlohmann::json doc;
            doc["benchmark"] = "tandem-bench-input-throughput";
            doc["machine"] = {{"description", machine},
                              {"primary", primary.info().name},
                              {"workers", options.workers}};
            doc["config"] = {{"percentile_rule", "nearest rank"},
                             {"timing", "inputs: between ready outputs after a warm-up tenth; "
                                        "ceilings: their batch less one copy (steady), alike"},
                             {"sizes", sizes_text},
                             {"frames", frames},
                             {"runs", runs},
                             {"slots", slots},
                             {"placement", placement},
                             {"producer", producer},
                             {"transfer_path", options.transfer_path},
                             {"cpu_device_timing_period_ms", timing_period_ms},
                             {"read_in_place", in_place}};
            doc["rows"] = rows;
            std::ofstream(json_file) << doc.dump(2) << "\n";
        }
        return 0;
    } catch (const tandem::Error& e) {
        std::fprintf(stderr, "tandem-bench-input-throughput: %s\n", e.what());
        return 1;
    }
}
