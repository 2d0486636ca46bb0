// tandem-bench-inputs: the primary's frame to a worker and the worker's result back. An
// interpolation task (tandem/post.hpp) at --size takes the application's colour (RGBA8), depth
// (R32F) and motion vectors (RG16F) every frame at --fps, on --placement; the same task on the
// primary runs beside it as the ceiling (what the pass costs where the frame is). Reports, per
// task: the application thread's cost of a submit with its three inputs, the latency from submit
// to the output being ready on the primary (the frame's inputs copied, sent, processed, back),
// the pass's GPU time on its device, and outputs per submit (generated frames per real frame).
// The inputs are one still frame with zero motion, so every output must equal its colour: the
// last output of each task is read back and compared byte for byte. With --lend the application
// writes the images Tandem lends (Runtime::lend_inputs) and Tandem copies nothing of them; it
// submits once its writes finished, so that submit-to-ready counts from the frame's end.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app_images.hpp"
#include "core/discovery.hpp"
#include "core/instance.hpp"
#include "core/resources.hpp"
#include "core/stats.hpp"
#include "harness/cpu_threads.hpp"
#include "harness/lease_reader.hpp"
#include "harness/tool_log.hpp"
#include "runtime/runtime_impl.hpp"
#include "sync/timeline_semaphore.hpp"
#include "tandem/embedding.hpp"
#include "tandem/error.hpp"
#include "tandem/post.hpp"
#include "tandem/runtime.hpp"
#include "tandem/trace.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace detail = tandem::detail;

// The application's frame: three images on the primary, filled once.
struct AppFrame {
    std::array<detail::Image, 3> images;
    std::vector<std::uint8_t> colour;
};

AppFrame make_frame(const detail::Device& primary, std::uint32_t w, std::uint32_t h) {
    AppFrame f;
    const std::array<VkFormat, 3> formats{VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_R32_SFLOAT,
                                          VK_FORMAT_R16G16_SFLOAT};
    const std::size_t texels = std::size_t{w} * h;
    f.colour = tandem::bench::pattern_rgba8(w, h);
    std::vector<float> depth(texels, 0.5f);
    std::vector<std::uint16_t> motion(texels * 2, 0); // zero motion: half 0.0
    const std::array<const void*, 3> data{f.colour.data(), depth.data(), motion.data()};
    for (std::size_t i = 0; i < 3; ++i) {
        detail::ImageDesc d;
        d.width = w;
        d.height = h;
        d.format = formats[i];
        d.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                  VK_IMAGE_USAGE_SAMPLED_BIT;
        d.name = "bench input " + std::to_string(i);
        d.queue_families = {primary.queue(detail::QueueRole::Main).family()};
        f.images[i] = detail::create_image(primary, d);
        tandem::bench::fill_image(primary, f.images[i].get(), {w, h}, 4, data[i]);
    }
    return f;
}

// Three images of the frame's shapes and formats, with `usage`: where the copies without
// Tandem write.
std::array<detail::Image, 3> images_like(const detail::Device& primary, const AppFrame& frame,
                                         VkImageUsageFlags usage, const std::string& name) {
    std::array<detail::Image, 3> out;
    for (std::size_t i = 0; i < 3; ++i) {
        detail::ImageDesc d;
        d.width = frame.images[i].extent.width;
        d.height = frame.images[i].extent.height;
        d.format = frame.images[i].format;
        d.usage = usage;
        d.name = name + " " + std::to_string(i);
        d.queue_families = {primary.queue(detail::QueueRole::Main).family()};
        out[i] = detail::create_image(primary, d);
    }
    return out;
}

// The API's floor under a submit with inputs, measured in the same run: `rounds` batches on the
// primary's main queue, each waiting on an application timeline and signalling one of its own,
// that copy the three images into scratch images of the same shape. `submit_us`: the
// vkQueueSubmit2 call alone (the batch recorded once); `record_and_submit_us`: recording the
// copies again and submitting them (what Tandem does, since it cannot know that the
// application's images are the same objects as last time).
struct SubmitFloor {
    std::vector<double> submit_us;
    std::vector<double> record_and_submit_us;
    std::vector<double> copy_gpu_us; // the three copies' GPU time, timestamped around them
};

SubmitFloor measure_submit_floor(const detail::Device& primary, const AppFrame& frame,
                                 std::uint32_t rounds, Clock::duration period) {
    SubmitFloor out;
    const std::array<detail::Image, 3> scratch =
        images_like(primary, frame, VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
                    "bench submit floor");
    detail::TimelineSemaphore app(primary, "bench submit floor app");
    detail::TimelineSemaphore done(primary, "bench submit floor done");
    detail::CommandPool pool(primary, primary.queue(detail::QueueRole::Main).family(),
                             "bench submit floor");
    const VkCommandBuffer cmd = pool.allocate("bench submit floor copies");
    const std::optional<detail::TimestampPool> stamps =
        detail::create_timestamp_pool(primary, detail::QueueRole::Main, 2, "bench submit floor");
    auto record = [&] {
        (void)vkResetCommandBuffer(cmd, 0);
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        (void)vkBeginCommandBuffer(cmd, &begin);
        detail::memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                               VK_ACCESS_2_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                               VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
        if (stamps) {
            vkCmdResetQueryPool(cmd, stamps->pool.get(), 0, 2);
            vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, stamps->pool.get(), 0);
        }
        for (std::size_t i = 0; i < 3; ++i) {
            detail::image_barrier(cmd, scratch[i].get(), VK_IMAGE_LAYOUT_UNDEFINED,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            detail::copy_whole_image(cmd, frame.images[i].get(),
                                     VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, scratch[i].get(),
                                     VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, scratch[i].extent);
        }
        if (stamps) {
            vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, stamps->pool.get(), 1);
        }
        (void)vkEndCommandBuffer(cmd);
    };
    const detail::Queue& queue = primary.queue(detail::QueueRole::Main);
    std::uint64_t value = 0;
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<double>& times = pass == 0 ? out.submit_us : out.record_and_submit_us;
        if (pass == 0) {
            record();
        }
        auto next = Clock::now();
        for (std::uint32_t k = 0; k < rounds; ++k) {
            // Paced as the tasks' frames are, so the GPU's clocks are where they are then.
            next += period;
            std::this_thread::sleep_until(next);
            // The application's frame is done (signalled from the host), the batch waits on it.
            (void)app.signal(value + 1);
            const VkSemaphoreSubmitInfo wait =
                app.submit_info(value + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
            const VkSemaphoreSubmitInfo signal =
                done.submit_info(value + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
            const auto t0 = Clock::now();
            if (pass == 1) {
                record();
            }
            (void)queue.submit_one(cmd, {&wait, 1}, {&signal, 1});
            const auto t1 = Clock::now();
            ++value;
            (void)done.wait(value, std::chrono::seconds(10));
            if (k >= rounds / 10) {
                times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                std::array<std::uint64_t, 2> ticks{};
                if (stamps &&
                    vkGetQueryPoolResults(primary.handle(), stamps->pool.get(), 0, 2, sizeof ticks,
                                          ticks.data(), sizeof(std::uint64_t),
                                          VK_QUERY_RESULT_64_BIT) == VK_SUCCESS) {
                    out.copy_gpu_us.push_back(
                        static_cast<double>((ticks[1] - ticks[0]) & stamps->mask) *
                        stamps->period_ns / 1000.0);
                }
            }
        }
    }
    return out;
}

// The floor under a submit that hands its batch to another thread (Tandem's own queue): a
// thread asleep on a condition variable is given one item per frame, paced like the tasks'
// frames; the time is the application's side only (lock, queue, unlock, notify), which is what
// waking a sleeping thread costs the caller on this machine.
std::vector<double> measure_handoff(std::uint32_t rounds, Clock::duration period) {
    std::mutex mutex;
    std::condition_variable wake;
    std::uint64_t queued = 0;
    std::uint64_t taken = 0;
    bool stop = false;
    std::thread sleeper([&] {
        std::unique_lock lock(mutex);
        for (;;) {
            wake.wait(lock, [&] { return stop || taken < queued; });
            if (taken == queued) {
                return;
            }
            taken = queued;
        }
    });
    std::vector<double> times;
    auto next = Clock::now();
    for (std::uint32_t k = 0; k < rounds; ++k) {
        next += period;
        std::this_thread::sleep_until(next);
        const auto t0 = Clock::now();
        {
            std::lock_guard lock(mutex);
            ++queued;
        }
        wake.notify_one();
        const auto t1 = Clock::now();
        if (k >= rounds / 10) {
            times.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
    }
    {
        std::lock_guard lock(mutex);
        stop = true;
    }
    wake.notify_one();
    sleeper.join();
    return times;
}

// What the copies of the three images cost the primary's GPU as Tandem's batch is built, one
// variant at a time, back to back (so at the GPU's full clocks), timestamped around the copies
// and their layout changes (p50 of `rounds`):
// the copy's destination layout, and the layout it is left in after (UNDEFINED: left as it was).
struct CopyVariant {
    const char* name;
    VkImageUsageFlags usage;
    VkImageLayout copy_layout;
    VkImageLayout after;
};

nlohmann::json measure_copy_variants(const detail::Device& primary, const AppFrame& frame,
                                     std::uint32_t rounds) {
    const VkImageUsageFlags tandem = VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                                     VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    const std::array<CopyVariant, 5> variants{{
        {"transfer-dst usage, left in TRANSFER_DST", VK_IMAGE_USAGE_TRANSFER_DST_BIT,
         VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_UNDEFINED},
        {"sampled usage, left in TRANSFER_DST", tandem, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
         VK_IMAGE_LAYOUT_UNDEFINED},
        {"sampled usage, then SHADER_READ_ONLY", tandem, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
         VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL},
        {"sampled usage, then TRANSFER_SRC", tandem, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
         VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL},
        {"sampled usage, copied in GENERAL", tandem, VK_IMAGE_LAYOUT_GENERAL,
         VK_IMAGE_LAYOUT_UNDEFINED},
    }};
    const std::optional<detail::TimestampPool> stamps =
        detail::create_timestamp_pool(primary, detail::QueueRole::Main, 2, "bench copy variants");
    nlohmann::json out = nlohmann::json::object();
    if (!stamps) {
        return out;
    }
    for (const CopyVariant& v : variants) {
        const std::array<detail::Image, 3> to =
            images_like(primary, frame, v.usage, "bench copy variant");
        std::vector<double> us;
        for (std::uint32_t k = 0; k < rounds; ++k) {
            detail::submit_and_wait(primary, detail::QueueRole::Main, [&](VkCommandBuffer c) {
                detail::memory_barrier(c, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                       VK_ACCESS_2_MEMORY_WRITE_BIT,
                                       VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                       VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT);
                vkCmdResetQueryPool(c, stamps->pool.get(), 0, 2);
                vkCmdWriteTimestamp2(c, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, stamps->pool.get(), 0);
                for (std::size_t i = 0; i < 3; ++i) {
                    detail::image_barrier(c, to[i].get(), VK_IMAGE_LAYOUT_UNDEFINED, v.copy_layout,
                                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                          VK_PIPELINE_STAGE_2_COPY_BIT,
                                          VK_ACCESS_2_TRANSFER_WRITE_BIT);
                    detail::copy_whole_image(c, frame.images[i].get(),
                                             VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to[i].get(),
                                             v.copy_layout, to[i].extent);
                    if (v.after != VK_IMAGE_LAYOUT_UNDEFINED) {
                        detail::image_barrier(
                            c, to[i].get(), v.copy_layout, v.after, VK_PIPELINE_STAGE_2_COPY_BIT,
                            VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                            VK_ACCESS_2_NONE);
                    }
                }
                vkCmdWriteTimestamp2(c, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, stamps->pool.get(),
                                     1);
            });
            std::array<std::uint64_t, 2> ticks{};
            if (k >= rounds / 10 &&
                vkGetQueryPoolResults(primary.handle(), stamps->pool.get(), 0, 2, sizeof ticks,
                                      ticks.data(), sizeof(std::uint64_t),
                                      VK_QUERY_RESULT_64_BIT) == VK_SUCCESS) {
                us.push_back(static_cast<double>((ticks[1] - ticks[0]) & stamps->mask) *
                             stamps->period_ns / 1000.0);
            }
        }
        const auto s = tandem::detail::summarise(us);
        out[v.name] = s.p50;
        std::printf("copies of the three images, %s: %.1f us of GPU time (p50)\n", v.name, s.p50);
    }
    return out;
}

// The application's side with --lend: each frame it writes the three images Tandem lent
// (Runtime::lend_inputs) where it would render them, here by copying its frame into them, on
// the primary's main queue after the loan's writable value, and submits naming them. With
// `signal_loan` the write also signals the loan's own semaphore and the submit names it, so the
// submit makes no Vulkan call; else it names the writer's own timeline, and Tandem's batch at
// submit only changes their layout. A few command buffers in turn, each reused once its last
// write finished.
class LentWriter {
public:
    LentWriter(const detail::Device& primary, VkSemaphore input_timeline, bool signal_loan)
        : m_primary(primary), m_input(input_timeline), m_signal_loan(signal_loan),
          m_writes(primary, "bench lent writes"),
          m_pool(primary, primary.queue(detail::QueueRole::Main).family(), "bench lent writes") {
        for (auto& c : m_cmds) {
            c = m_pool.allocate("bench lent write");
        }
    }

    // Writes `frame` into `loan`'s images; the inputs to submit, or nothing when the GPU
    // refused.
    std::optional<std::array<tandem::InputImage, 3>> write(const AppFrame& frame,
                                                           const tandem::InputLoan& loan) {
        const std::size_t k = m_round % m_cmds.size();
        if (m_round >= m_cmds.size() &&
            m_writes.wait(m_values[k], std::chrono::seconds(10)) != VK_SUCCESS) {
            return std::nullopt;
        }
        VkCommandBuffer cmd = m_cmds[k];
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        if (vkResetCommandBuffer(cmd, 0) != VK_SUCCESS ||
            vkBeginCommandBuffer(cmd, &begin) != VK_SUCCESS) {
            return std::nullopt;
        }
        std::array<tandem::InputImage, 3> out{};
        for (std::size_t i = 0; i < 3; ++i) {
            const VkImage to = loan.inputs.at(i).image;
            detail::image_barrier(cmd, to, VK_IMAGE_LAYOUT_UNDEFINED,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            detail::copy_whole_image(cmd, frame.images[i].get(),
                                     VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to,
                                     VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, frame.images[i].extent);
            out[i] = m_signal_loan ? loan.input(i, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
                                   : tandem::InputImage{to, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                                        m_writes.handle(), m_value + 1};
        }
        if (vkEndCommandBuffer(cmd) != VK_SUCCESS) {
            return std::nullopt;
        }
        const VkSemaphoreSubmitInfo wait = detail::semaphore_submit_info(
            m_input, loan.writable, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        const std::array<VkSemaphoreSubmitInfo, 2> signals{
            m_writes.submit_info(m_value + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT),
            loan.written_signal()};
        if (m_primary.queue(detail::QueueRole::Main)
                .submit_one(cmd, {&wait, 1}, {signals.data(), m_signal_loan ? 2u : 1u}) !=
            VK_SUCCESS) {
            return std::nullopt;
        }
        m_values[k] = ++m_value;
        ++m_round;
        return out;
    }

    // Every write finished: before the images go, and before each submit, so that the latency
    // from submit to ready counts from the frame's end, as it does for the application's own
    // images (written once, before the first frame).
    bool finish() { return m_writes.wait(m_value, std::chrono::seconds(10)) == VK_SUCCESS; }

private:
    const detail::Device& m_primary;
    VkSemaphore m_input;
    bool m_signal_loan;
    detail::TimelineSemaphore m_writes;
    detail::CommandPool m_pool;
    std::array<VkCommandBuffer, 4> m_cmds{};
    std::array<std::uint64_t, 4> m_values{};
    std::uint64_t m_value = 0;
    std::size_t m_round = 0;
};

struct TaskRun {
    std::string placement;
    tandem::TaskId id;
    std::vector<double> submit_us;
    std::vector<double> lend_us; // --lend: the lend_inputs call
    std::uint64_t submits = 0;
    bool exact = false;
};

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Tandem's inputs benchmark: the primary's frame to a worker and back"};
    std::string size = "1920x1080";
    std::uint32_t frames = 600;
    double fps = 60;
    std::string placement = "worker";
    std::string machine;
    std::string json_file;
    std::string trace_file;
    std::string log_level = "warn";
    tandem::RuntimeOptions options;
    options.validation = "off";
    app.add_option("--size", size, "frame size WxH")->capture_default_str();
    app.add_option("--frames", frames, "real frames submitted to each task")
        ->capture_default_str()
        ->check(CLI::Range(10u, 1000000u));
    app.add_option("--fps", fps, "real frames per second (0: as fast as they are taken)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 10000.0));
    app.add_option("--placement", placement, "where the measured task runs")->capture_default_str();
    app.add_option("--transfer-path", options.transfer_path, "force a transfer path");
    app.add_option("--virtual-devices", options.virtual_devices,
                   "open each physical device this many times (0: $TANDEM_VIRTUAL_DEVICES)");
    app.add_option("--machine", machine, "A sentence describing the machine, for the JSON");
    app.add_option("--json", json_file, "Write the results as JSON to FILE");
    app.add_option("--trace", trace_file,
                   "Write the runtime's trace (Chrome trace-event JSON) of both tasks to FILE");
    bool lend = false;
    app.add_flag("--lend", lend,
                 "render into the images Tandem lends (lend_inputs) instead of having Tandem "
                 "copy the application's");
    std::string lent_wait = "loan";
    app.add_option("--lent-wait", lent_wait,
                   "with --lend, what the submit names for the writes: loan (the loan's own "
                   "semaphore, which the writes signal: the submit makes no Vulkan call) or app "
                   "(the application's timeline: Tandem's batch at submit changes the layouts)")
        ->check(CLI::IsMember({"loan", "app"}))
        ->capture_default_str();
    bool own_queue = false;
    app.add_flag("--own-queue", own_queue,
                 "embed the runtime on a device the benchmark opens and hand it the main queue "
                 "alone (EmbedInfo::queue_mutex null): the inputs' copies are recorded and "
                 "submitted on Tandem's input thread instead of in submit (copied inputs only)");
    bool sampled = false;
    app.add_flag("--sampled", sampled,
                 "declare the application's images sampleable (TaskInputDesc::application_usage): "
                 "the primary then copies the RGBA8 colour with a compute dispatch where it can, "
                 "and the depth and motion with the copy command as before");
    bool view = false;
    app.add_flag("--view", view,
                 "with --sampled, name each image's view at submit (InputImage::view), so that "
                 "Tandem makes none for its compute copy");
    app.add_option("--validation", options.validation, "off, core or sync")->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    tandem::harness::keep_cores_from_cpu_devices(); // before any instance: lavapipe reads it

    try {
        options.log_level = tandem::harness::parse_log_level_option(log_level);
        tandem::harness::apply_tool_log_level(options.log_level);
        std::uint32_t w = 0;
        std::uint32_t h = 0;
        if (std::sscanf(size.c_str(), "%ux%u", &w, &h) != 2 || w == 0 || h == 0) {
            throw tandem::Error("--size '" + size + "' is not WxH", "Give e.g. 1920x1080");
        }
        options.trace = !trace_file.empty();
        if (own_queue && lend) {
            throw tandem::Error(tandem::ErrorCategory::InvalidArgument,
                                "--own-queue measures copied inputs, and --lend lends them",
                                "Leave out one of the two");
        }
        // --own-queue: the application's device, embedded with its queue handed over alone.
        // Its own submissions there (filling the frame, the floor) take Tandem's lock and never
        // wait on that queue for the input timeline.
        std::unique_ptr<detail::Instance> app_instance;
        std::unique_ptr<detail::Device> app_device;
        std::unique_ptr<tandem::Runtime> runtime_owner;
        if (own_queue) {
            detail::InstanceOptions instance_options;
            instance_options.application_name = "tandem-bench-inputs";
            instance_options.validation =
                detail::parse_validation(options.validation.empty() ? "off" : options.validation)
                    .value_or(detail::Validation::Off);
            app_instance = std::make_unique<detail::Instance>(instance_options);
            std::vector<detail::Adapter> adapters =
                detail::discover_adapters(*app_instance, std::max(options.virtual_devices, 1u));
            const detail::Selection selection =
                detail::select_adapters(adapters, options.primary, "none");
            detail::DeviceOptions device_options;
            device_options.label = "application";
            app_device = std::make_unique<detail::Device>(
                *app_instance, adapters[selection.primary], device_options);
            tandem::EmbedInfo embed;
            embed.instance = app_instance->handle();
            embed.physical_device = app_device->physical();
            embed.device = app_device->handle();
            embed.queue_family = app_device->queue(detail::QueueRole::Main).family();
            embed.queue_index = app_device->queue(detail::QueueRole::Main).index();
            embed.enabled_extensions = app_device->enabled_extensions();
            embed.enabled_features = app_device->enabled_features();
            embed.debug_utils = app_instance->has_debug_utils();
            options.embedded_cpu_workers = true;
            runtime_owner = std::make_unique<tandem::Runtime>(embed, options);
        } else {
            runtime_owner = std::make_unique<tandem::Runtime>(options);
        }
        tandem::Runtime& runtime = *runtime_owner;
        const detail::Device& primary = detail::RuntimeAccess::impl(runtime).primary();
        const AppFrame frame = make_frame(primary, w, h);
        std::array<tandem::InputImage, 3> inputs{};
        for (std::size_t i = 0; i < 3; ++i) {
            inputs[i] = {frame.images[i].get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         VK_NULL_HANDLE, 0};
            inputs[i].view = view ? frame.images[i].view.get() : VK_NULL_HANDLE;
        }
        std::vector<TaskRun> runs{{placement, {}, {}, {}, 0, false},
                                  {"primary", {}, {}, {}, 0, false}};
        for (TaskRun& r : runs) {
            tandem::TaskDesc d = tandem::interpolate_task("frame-gen " + r.placement, w, h);
            const auto p = tandem::Placement::parse(r.placement);
            if (!p) {
                throw tandem::Error("--placement '" + r.placement + "' is not a placement",
                                    "Use worker, worker:N, primary or an adapter index");
            }
            d.placement = *p;
            d.rate_hz = fps > 0 ? fps : 60;
            for (tandem::TaskInputDesc& in : d.inputs) {
                in.usage = lend ? VK_IMAGE_USAGE_TRANSFER_DST_BIT : 0;
                in.application_usage = sampled ? VK_IMAGE_USAGE_SAMPLED_BIT |
                                                     VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                                     VK_IMAGE_USAGE_TRANSFER_DST_BIT
                                               : 0;
            }
            r.id = runtime.register_task(d);
        }
        const auto period =
            fps > 0 ? std::chrono::duration<double>(1.0 / fps) : std::chrono::duration<double>(0);
        const SubmitFloor floor = measure_submit_floor(
            primary, frame, frames, std::chrono::duration_cast<Clock::duration>(period));
        const auto floor_submit = tandem::detail::summarise(floor.submit_us);
        const auto floor_record = tandem::detail::summarise(floor.record_and_submit_us);
        const auto floor_copy = tandem::detail::summarise(floor.copy_gpu_us);
        const auto floor_handoff = tandem::detail::summarise(
            measure_handoff(frames, std::chrono::duration_cast<Clock::duration>(period)));
        tandem::harness::LeaseReader reader(runtime, 2, w, h);
        LentWriter lent_writer(primary, runtime.input_timeline(), lent_wait == "loan");
        for (TaskRun& r : runs) {
            auto next = Clock::now();
            // Paced: a frame every period, taken or not. At --fps 0 a frame is retried until
            // the task takes it (for up to a minute in all).
            const auto give_up = Clock::now() + std::chrono::seconds(60);
            for (std::uint32_t f = 0; f < frames;
                 f += (fps > 0 || r.submits > f || Clock::now() > give_up) ? 1 : 0) {
                std::optional<std::array<tandem::InputImage, 3>> lent;
                tandem::LendResult loan;
                if (lend) {
                    const auto l0 = Clock::now();
                    loan = runtime.lend_inputs(r.id);
                    const auto l1 = Clock::now();
                    if (loan.lent()) {
                        if (f >= frames / 10) {
                            r.lend_us.push_back(
                                std::chrono::duration<double, std::micro>(l1 - l0).count());
                        }
                        lent = lent_writer.write(frame, loan.loan);
                        if (lent && !lent_writer.finish()) {
                            lent.reset();
                        }
                    }
                    if (!lent) {
                        if (loan.lent()) {
                            (void)runtime.return_inputs(r.id, loan.loan);
                        }
                        runtime.pump();
                        next += std::chrono::duration_cast<Clock::duration>(period);
                        std::this_thread::sleep_until(next);
                        continue;
                    }
                }
                const auto t0 = Clock::now();
                const tandem::SubmitResult s =
                    runtime.submit(r.id, {}, lent ? std::span(*lent) : std::span(inputs));
                const auto t1 = Clock::now();
                if (!s.accepted() && loan.lent()) {
                    (void)runtime.return_inputs(r.id, loan.loan);
                }
                if (s.accepted()) {
                    ++r.submits;
                    if (f >= frames / 10) { // the first tenth warms up
                        r.submit_us.push_back(
                            std::chrono::duration<double, std::micro>(t1 - t0).count());
                    }
                }
                runtime.pump();
                if (auto lease = runtime.acquire(r.id)) {
                    runtime.release(*lease, 0);
                }
                next += std::chrono::duration_cast<Clock::duration>(period);
                std::this_thread::sleep_until(next);
            }
            // Every output in, then the last one checked byte for byte.
            const auto deadline = Clock::now() + std::chrono::seconds(30);
            while (runtime.stats(r.id).in_flight > 0 && Clock::now() < deadline) {
                runtime.pump();
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            if (auto lease = runtime.acquire(r.id)) {
                const std::uint64_t v = reader.read(*lease, true);
                if (v != 0 && reader.wait(v, std::chrono::seconds(10)) == VK_SUCCESS) {
                    const std::uint8_t* px = reader.pixels(v);
                    r.exact =
                        px != nullptr && std::equal(frame.colour.begin(), frame.colour.end(), px);
                }
                runtime.release(*lease, v);
            }
        }

        (void)lent_writer.finish();
        // Last, back to back: the GPU's clocks go up, which would change what the tasks measure.
        const nlohmann::json variants = measure_copy_variants(primary, frame, 100);
        nlohmann::json rows = nlohmann::json::array();
        std::printf("%-10s %-14s %10s %10s %12s %12s %10s %6s\n", "task on", "input path",
                    "submit us", "ready us", "pass gpu us", "outputs/in", "p99 ready", "exact");
        double worker_ready = 0;
        double worker_pass = 0;
        double worker_submit = 0;
        double per_real = 0;
        double worker_input_gpu = 0;
        bool all_exact = true;
        for (const TaskRun& r : runs) {
            const tandem::TaskStats s = runtime.stats(r.id);
            const auto submit = tandem::detail::summarise(r.submit_us);
            const double outputs = r.submits > 0 ? static_cast<double>(s.ready + s.superseded) /
                                                       static_cast<double>(r.submits)
                                                 : 0.0;
            std::printf("%-10s stages p50 us: worker submitted %.1f, hand-off queued %.1f, work "
                        "seen done %.1f, ready %.1f; input copies %.1f us GPU\n",
                        r.placement.c_str(), s.worker_submit.p50_us, s.transfer_queued.p50_us,
                        s.worker_done.p50_us, s.ready_observed.p50_us, s.input_copy_gpu_us.p50_us);
            if (lend) {
                std::printf("%-10s lent submits %llu of %llu (%llu making no Vulkan call), "
                            "lend_inputs p50 %.2f us\n",
                            r.placement.c_str(), static_cast<unsigned long long>(s.lent_submits),
                            static_cast<unsigned long long>(r.submits),
                            static_cast<unsigned long long>(s.lent_signalled_submits),
                            tandem::detail::summarise(r.lend_us).p50);
            }
            std::printf("%-10s %-14s %10.2f %10.1f %12.1f %12.3f %10.1f %6s\n", r.placement.c_str(),
                        s.input_path.c_str(), submit.p50, s.ready_observed.p50_us, s.gpu_us.p50_us,
                        outputs, s.ready_observed.p99_us, r.exact ? "yes" : "NO");
            rows.push_back(
                {{"task_on", r.placement},
                 {"device", s.device_name},
                 {"input_path", s.input_path},
                 {"output_path", transfer_path_name(s)},
                 {"submits", r.submits},
                 {"ready", s.ready},
                 {"superseded", s.superseded},
                 {"submit_us", tandem::detail::to_json(submit)},
                 {"lend_us", tandem::detail::to_json(tandem::detail::summarise(r.lend_us))},
                 {"lent_submits", s.lent_submits},
                 {"lent_signalled_submits", s.lent_signalled_submits},
                 {"input_copies", s.input_copies},
                 {"stages_p50_us",
                  {{"worker_submitted", s.worker_submit.p50_us},
                   {"transfer_queued", s.transfer_queued.p50_us},
                   {"worker_done_observed", s.worker_done.p50_us},
                   {"ready_observed", s.ready_observed.p50_us},
                   {"note",
                    "from the submit: the job's batch submitted on its device, its "
                    "hand-off queued, its work seen done, its output seen on the primary"}}},
                 {"ready_us",
                  {{"p50", s.ready_observed.p50_us},
                   {"p90", s.ready_observed.p90_us},
                   {"p99", s.ready_observed.p99_us},
                   {"max", s.ready_observed.max_us}}},
                 {"pass_gpu_us",
                  {{"p50", s.gpu_us.p50_us}, {"p99", s.gpu_us.p99_us}, {"timed", s.gpu_timed}}},
                 {"input_copy_gpu_us_on_primary",
                  {{"p50", s.input_copy_gpu_us.p50_us},
                   {"p99", s.input_copy_gpu_us.p99_us},
                   {"copies", s.input_copy_gpu_us.count}}},
                 {"inputs_copied_by_compute", s.inputs_copied_by_compute},
                 {"outputs_per_submit", outputs},
                 {"exact", r.exact}});
            all_exact = all_exact && r.exact;
            if (&r == &runs.front()) {
                worker_ready = s.ready_observed.p50_us;
                worker_pass = s.gpu_us.p50_us;
                worker_submit = submit.p50;
                per_real = outputs;
                worker_input_gpu = s.input_copy_gpu_us.p50_us;
            }
        }
        const double overhead_us = worker_ready - worker_pass;
        std::printf("latency beyond the pass: %.1f us (goal <= 1000 us on one GPU opened twice); "
                    "submit with inputs %.2f us (goal < 20); the inputs' copy on the primary "
                    "%.1f us of GPU time (goal <= 100); outputs per real frame %.3f "
                    "(goal >= 0.99); outputs exact: %s\n",
                    overhead_us, worker_submit, worker_input_gpu, per_real,
                    all_exact ? "yes" : "NO");
        std::printf("the API's floor for that submit: vkQueueSubmit2 alone %.2f us, recording the "
                    "three copies and submitting %.2f us; the copies themselves %.1f us of GPU "
                    "time; handing a batch to a sleeping thread (Tandem's own queue) %.2f us "
                    "(p50, paced like the tasks)\n",
                    floor_submit.p50, floor_record.p50, floor_copy.p50, floor_handoff.p50);

        if (!trace_file.empty()) {
            tandem::write_trace(runtime, trace_file);
        }
        if (!json_file.empty()) {
            char host[256] = {};
            ::gethostname(host, sizeof host - 1);
            nlohmann::json devices = nlohmann::json::array();
            std::vector<tandem::DeviceInfo> all{runtime.primary_device()};
            for (const auto& dev : runtime.worker_devices()) {
                all.push_back(dev);
            }
            for (const auto& info : all) {
                devices.push_back({{"index", info.index},
                                   {"name", info.name},
                                   {"driver", info.driver_name + " " + info.driver_version},
                                   {"uuid", tandem::to_string(info.device_uuid)}});
            }
            nlohmann::json doc;
            doc["benchmark"] = "inputs";
            doc["percentile_rule"] = "nearest rank"; // core/stats.hpp, every figure
            doc["machine"] = {{"host", host},
                              {"description", machine},
                              {"cpus", std::thread::hardware_concurrency()},
                              {"devices", devices}};
            doc["config"] = {{"size", {w, h}},
                             {"frames", frames},
                             {"fps", fps},
                             {"placement", placement},
                             {"transfer_path", options.transfer_path},
                             {"lend", lend},
                             {"lent_wait", lend ? lent_wait : std::string()},
                             {"own_queue", own_queue},
                             {"sampled", sampled},
                             {"view", view},
                             {"workload", "interpolate (colour RGBA8, depth R32F, motion RG16F)"}};
            doc["ceilings"] = {
                {"pass_gpu_us_p50_on_task_device", worker_pass},
                {"submit_floor_us",
                 {{"submit_only", tandem::detail::to_json(floor_submit)},
                  {"record_and_submit", tandem::detail::to_json(floor_record)},
                  {"copies_gpu_us", tandem::detail::to_json(floor_copy)},
                  {"handoff_to_sleeping_thread", tandem::detail::to_json(floor_handoff)},
                  {"copies_gpu_us_p50_by_layout", variants},
                  {"note", "the three copies as one batch on the primary's main "
                           "queue, one wait and one signal, without Tandem, paced "
                           "at --fps like the tasks' frames; the copies by layout "
                           "back to back (the GPU's clocks up); the handoff: "
                           "queueing one item for a thread asleep on a condition "
                           "variable and waking it, the caller's side, paced "
                           "likewise (Tandem's own queue's floor)"}}}};
            doc["rows"] = rows;
            doc["goals"] = {{{"name", "ready_beyond_pass_us"},
                             {"measured", overhead_us},
                             {"target", 1000.0},
                             {"met", overhead_us <= 1000.0}},
                            {{"name", "submit_with_inputs_us_median"},
                             {"measured", worker_submit},
                             {"target", 20.0},
                             {"met", worker_submit < 20.0}},
                            {{"name", "input_copy_gpu_us_on_primary_median"},
                             {"measured", worker_input_gpu},
                             {"target", 100.0},
                             {"met", worker_input_gpu > 0 && worker_input_gpu <= 100.0}},
                            {{"name", "outputs_per_real_frame"},
                             {"measured", per_real},
                             {"target", 0.99},
                             {"met", per_real >= 0.99}}};
            std::ofstream(json_file) << doc.dump(2) << "\n";
        }
        return all_exact ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tandem-bench-inputs: %s\n", e.what());
        return 1;
    }
}
