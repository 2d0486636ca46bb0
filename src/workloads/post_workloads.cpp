// The post-processing tasks of tandem/post.hpp: public Workloads over the post layer's passes
// (post/blur.hpp, post/upscale.hpp, post/interpolate.hpp, post/colour_motion.hpp), reading the
// job's inputs.
//
// Threads and lifetime as tandem::Workload: made on the preparation thread (the Device comes
// from application_device, valid during the factory call and outliving the workload), record()
// on the worker's job thread, check() on the application's.
#include "tandem/post.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "core/resources.hpp"
#include "post/blur.hpp"
#include "post/colour_motion.hpp"
#include "post/interpolate.hpp"
#include "post/post_pass.hpp"
#include "post/temporal_upscale.hpp"
#include "post/upscale.hpp"
#include "tandem/error.hpp"
#include "workloads/application_workload.hpp"

namespace tandem {
namespace {

using detail::Device;

const Device& device_of(const WorkerContext& context, const char* kind) {
    const Device* device = detail::application_device(context.device);
    if (device == nullptr) {
        throw Error(ErrorCategory::InvalidArgument,
                    std::string("The ") + kind + " workload was made outside a Tandem runtime",
                    "Give its factory to TaskDesc::factory; the runtime calls it");
    }
    return *device;
}

// Refuses a task whose inputs or output do not fit the kind, naming what differs.
void expect_inputs(const WorkerContext& context, const char* kind,
                   std::initializer_list<std::pair<const char*, VkFormat>> wanted) {
    const std::string task = "Task '" + context.task_name + "' (" + kind + ")";
    if (context.format != VK_FORMAT_R8G8B8A8_UNORM) {
        throw Error(ErrorCategory::InvalidArgument,
                    task + " has output format " + detail::format_name(context.format),
                    std::string("A ") + kind + " task's output is RGBA8 UNORM");
    }
    if (context.inputs.size() != wanted.size()) {
        throw Error(ErrorCategory::InvalidArgument,
                    task + " declares " + std::to_string(context.inputs.size()) + " inputs",
                    std::string("A ") + kind + " task takes " + std::to_string(wanted.size()) +
                        " (start from tandem::" + kind + "_task)");
    }
    std::size_t i = 0;
    for (const auto& [name, format] : wanted) {
        if (context.inputs[i].format != format) {
            throw Error(ErrorCategory::InvalidArgument,
                        task + "'s input " + std::to_string(i) + " ('" + context.inputs[i].name +
                            "') has format " + detail::format_name(context.inputs[i].format),
                        std::string("Its ") + name + " input is " + detail::format_name(format));
        }
        ++i;
    }
}

void expect_task_size(const WorkerContext& context, const char* kind, std::size_t input) {
    const TaskInputDesc& in = context.inputs[input];
    if (in.width != context.width || in.height != context.height) {
        throw Error(ErrorCategory::InvalidArgument,
                    "Task '" + context.task_name + "' (" + kind + ") has input '" + in.name +
                        "' of " + std::to_string(in.width) + "x" + std::to_string(in.height) +
                        " and an output of " + std::to_string(context.width) + "x" +
                        std::to_string(context.height),
                    std::string("A ") + kind + " task's inputs are the size of its output");
    }
}

// The job's bytes as `Settings`: the defaults when empty, nullopt for any other size.
template <typename Settings>
std::optional<Settings> settings_of(std::span<const std::byte> bytes) {
    if (bytes.empty()) {
        return Settings{};
    }
    if (bytes.size() != sizeof(Settings)) {
        return std::nullopt;
    }
    Settings s;
    std::memcpy(&s, bytes.data(), sizeof s);
    return s;
}

template <typename Settings>
std::string size_error(const char* kind, std::size_t size) {
    return std::string("a ") + kind + " job takes no bytes or one " + kind + " settings struct (" +
           std::to_string(sizeof(Settings)) + " bytes), not " + std::to_string(size);
}

detail::SampledInput sampled(const JobInput& input) {
    return {input.view, input.layout};
}

// What the three share: the output is a storage image in GENERAL, written by compute.
class PostWorkload : public Workload {
public:
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_STORAGE_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_GENERAL, detail::k_post_output_stage, detail::k_post_output_access};
    }

protected:
    // The output to GENERAL, its earlier uses before the pass's compute writes.
    static void begin_output(const RecordContext& job) {
        detail::image_barrier(job.cmd, job.image, job.initial_layout, VK_IMAGE_LAYOUT_GENERAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    }
    static void check_recorded(VkResult r, const char* kind) {
        if (r != VK_SUCCESS) {
            throw Error(category_of(r),
                        std::string("recording the ") + kind + " pass failed (" +
                            tandem::to_string(r) + ")",
                        "");
        }
    }
};

class BlurWorkload final : public PostWorkload {
public:
    explicit BlurWorkload(const WorkerContext& context)
        : m_pass((expect_inputs(context, "blur", {{"colour", VK_FORMAT_R8G8B8A8_UNORM}}),
                  expect_task_size(context, "blur", 0), device_of(context, "blur")),
                 {context.width, context.height}, context.slots) {}

    std::string check(std::span<const std::byte> bytes) const override {
        const auto s = settings_of<BlurSettings>(bytes);
        if (!s) {
            return size_error<BlurSettings>("blur", bytes.size());
        }
        if (s->radius > detail::k_max_blur_radius || !std::isfinite(s->sigma)) {
            return "a blur's radius is 0 to " + std::to_string(detail::k_max_blur_radius) +
                   " and its sigma a finite number (<= 0: radius / 2)";
        }
        return {};
    }
    void record(const RecordContext& job) override {
        const BlurSettings s = settings_of<BlurSettings>(job.bytes).value_or(BlurSettings{});
        begin_output(job);
        check_recorded(m_pass.record(job.cmd, job.slot, sampled(job.inputs[0]), job.view,
                                     job.extent, {s.radius, s.sigma}),
                       "blur");
    }

private:
    detail::BlurPass m_pass;
};

class UpscaleWorkload final : public PostWorkload {
public:
    explicit UpscaleWorkload(const WorkerContext& context)
        : m_input{(expect_inputs(context, "upscale", {{"colour", VK_FORMAT_R8G8B8A8_UNORM}}),
                   context.inputs[0].width),
                  context.inputs[0].height},
          m_pass(device_of(context, "upscale"), m_input, {context.width, context.height},
                 context.slots) {}

    std::string check(std::span<const std::byte> bytes) const override {
        const auto s = settings_of<UpscaleSettings>(bytes);
        if (!s) {
            return size_error<UpscaleSettings>("upscale", bytes.size());
        }
        if (!(s->sharpness >= 0.0f && s->sharpness <= 2.0f && s->adapt >= 0.0f &&
              s->adapt <= 1.0f)) {
            return "an upscale's sharpness is 0 to 2 and its adapt 0 to 1";
        }
        return {};
    }
    void record(const RecordContext& job) override {
        const UpscaleSettings s =
            settings_of<UpscaleSettings>(job.bytes).value_or(UpscaleSettings{});
        detail::UpscaleParams p;
        p.sharpness = s.sharpness;
        p.adapt = s.adapt;
        begin_output(job);
        check_recorded(m_pass.record(job.cmd, job.slot, sampled(job.inputs[0]), m_input, job.view,
                                     job.extent, p),
                       "upscale");
    }

private:
    VkExtent2D m_input;
    detail::UpscalePass m_pass;
};

// The temporal upscaler (post/temporal_upscale.hpp): colour, depth and motion at the render
// size, its history its own.
class TemporalUpscaleWorkload final : public PostWorkload {
public:
    explicit TemporalUpscaleWorkload(const WorkerContext& context)
        : m_input{(expect_inputs(context, "upscale",
                                 {{"colour", VK_FORMAT_R8G8B8A8_UNORM},
                                  {"depth", VK_FORMAT_R32_SFLOAT},
                                  {"motion", VK_FORMAT_R16G16_SFLOAT}}),
                   expect_same_size(context, "upscale"), context.inputs[0].width),
                  context.inputs[0].height},
          m_pass(device_of(context, "upscale"), m_input, {context.width, context.height},
                 context.slots) {}

    std::string check(std::span<const std::byte> bytes) const override {
        const auto s = settings_of<TemporalUpscaleSettings>(bytes);
        if (!s) {
            return size_error<TemporalUpscaleSettings>("temporal upscale", bytes.size());
        }
        if (!(std::abs(s->jitter_x) <= 0.5f && std::abs(s->jitter_y) <= 0.5f &&
              s->moving_blend >= 0.0f && s->moving_blend <= 1.0f && s->depth_tolerance >= 0.0f &&
              s->reset <= 1)) {
            return "a temporal upscale's jitter is -0.5 to 0.5 render texels, its moving blend 0 "
                   "to 1, its depth tolerance at least 0 and reset 0 or 1";
        }
        return {};
    }
    void record(const RecordContext& job) override {
        const TemporalUpscaleSettings s =
            settings_of<TemporalUpscaleSettings>(job.bytes).value_or(TemporalUpscaleSettings{});
        detail::TemporalUpscaleParams p;
        p.jitter_x = s.jitter_x;
        p.jitter_y = s.jitter_y;
        p.moving_blend = s.moving_blend;
        p.depth_tolerance = s.depth_tolerance;
        p.reset = s.reset != 0;
        begin_output(job);
        const detail::TemporalInputs in{sampled(job.inputs[0]), sampled(job.inputs[1]),
                                        sampled(job.inputs[2])};
        check_recorded(m_pass.record(job.cmd, job.slot, in, m_input, job.view, job.extent, p),
                       "upscale");
    }

private:
    // Its three inputs are one size (the render's).
    static bool expect_same_size(const WorkerContext& context, const char* kind) {
        for (const TaskInputDesc& in : context.inputs) {
            if (in.width != context.inputs[0].width || in.height != context.inputs[0].height) {
                throw Error(ErrorCategory::InvalidArgument,
                            "Task '" + context.task_name + "' (" + kind + ") has input '" +
                                in.name + "' of " + std::to_string(in.width) + "x" +
                                std::to_string(in.height) + " and colour of " +
                                std::to_string(context.inputs[0].width) + "x" +
                                std::to_string(context.inputs[0].height),
                            "A temporal upscale's colour, depth and motion are one size");
            }
        }
        return true;
    }

    VkExtent2D m_input;
    detail::TemporalUpscalePass m_pass;
};

// Interpolation copies its inputs for the next job, changing their layout: a chained input (the
// producer's own image, read in place) cannot be treated so, unless it is read in GENERAL
// (keep_as_previous), as an output kept on its worker by a compute pass is. Colour interpolation
// takes such an input (its job fails with a sentence when the input comes in another layout);
// interpolation with depth and motion does not.
void expect_unchained(const WorkerContext& context, const char* kind) {
    for (const TaskInputDesc& in : context.inputs) {
        if (in.producer) {
            throw Error(ErrorCategory::InvalidArgument,
                        "Task '" + context.task_name + "' (" + kind + ") has input '" + in.name +
                            "' chained to another task's output",
                        std::string("Give an ") + kind +
                            " task the application's images as its inputs");
        }
    }
}

// Why `bytes` are not InterpolateSettings in range; empty when they are.
std::string check_interpolate_settings(std::span<const std::byte> bytes) {
    const auto s = settings_of<InterpolateSettings>(bytes);
    if (!s) {
        return size_error<InterpolateSettings>("interpolate", bytes.size());
    }
    if (!(s->t >= 0.0f && s->t <= 1.0f) || !(s->depth_tolerance >= 0.0f) ||
        s->fill_radius > detail::k_max_fill_radius || s->reversed_depth > 1) {
        return "an interpolation's t is 0 to 1, its depth tolerance at least 0, its fill "
               "radius 0 to " +
               std::to_string(detail::k_max_fill_radius) + " and reversed_depth 0 or 1";
    }
    return {};
}

// Frame generation between the previous job's inputs and this one's: keeps the previous job's
// inputs on the device (copied at the end of each job, on the same queue, so the next job reads
// them after its own barrier); the first job on a device gives its own colour.
class FrameGenerationWorkload : public PostWorkload {
public:
    FrameGenerationWorkload(const WorkerContext& context, const Device& device) : m_device(device) {
        for (const TaskInputDesc& in : context.inputs) {
            detail::ImageDesc d;
            d.width = context.width;
            d.height = context.height;
            d.format = in.format;
            d.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
            d.name = context.task_name + " previous " + in.name;
            d.queue_families = {context.queue_family};
            m_previous.push_back(detail::create_image(m_device, d));
        }
    }

    std::string check(std::span<const std::byte> bytes) const override {
        return check_interpolate_settings(bytes);
    }
    // The first job copies its colour: the output is written by a copy then, by compute after.
    VkImageUsageFlags target_usage() const override {
        return VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_GENERAL, detail::k_post_output_stage | VK_PIPELINE_STAGE_2_COPY_BIT,
                detail::k_post_output_access | VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        for (const JobInput& in : job.inputs) {
            // A chained input is the producer's image, which others may read meanwhile: it is
            // copied where it is, in GENERAL, its layout never changed.
            if (in.chained && in.layout != VK_IMAGE_LAYOUT_GENERAL) {
                throw Error(ErrorCategory::InvalidArgument,
                            "a chained input arrived in layout " + std::to_string(in.layout) +
                                ", where frame generation can keep it only in GENERAL",
                            "Chain frame generation from an output kept on its worker "
                            "(TaskDesc::keep_output_on_worker) by a compute pass");
            }
        }
        if (!m_has_previous) {
            first_frame(job);
        } else {
            const InterpolateSettings s =
                settings_of<InterpolateSettings>(job.bytes).value_or(InterpolateSettings{});
            begin_output(job);
            generate(job, s);
        }
        keep_as_previous(job);
    }

protected:
    // Records the frame between the previous inputs and this job's into the job's output (in
    // GENERAL, its earlier uses done).
    virtual void generate(const RecordContext& job, const InterpolateSettings& s) = 0;

    // Input `i` of the previous job, readable by compute.
    [[nodiscard]] detail::SampledInput previous(std::size_t i) const {
        return {m_previous[i].view.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    }

    const Device& m_device;

private:
    // Nothing before it on this device: the output is the job's own colour.
    static void first_frame(const RecordContext& job) {
        const JobInput& colour = job.inputs[0];
        detail::image_barrier(job.cmd, job.image, job.initial_layout,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        copy_input(job.cmd, colour, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, job.image, job.extent);
        // Left in GENERAL, as output() says; the copy's write is the one to wait for.
        detail::image_barrier(job.cmd, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_IMAGE_LAYOUT_GENERAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT);
    }
    // Copies input `in` whole into `target` (in TRANSFER_DST_OPTIMAL), after its reads at
    // `read_before`. In GENERAL (a chained input is: record() saw to it) it is copied where it is,
    // its layout never changed, reads after reads needing no barrier; else moved to
    // TRANSFER_SRC_OPTIMAL and back.
    static void copy_input(VkCommandBuffer cmd, const JobInput& in,
                           VkPipelineStageFlags2 read_before, VkImage target, VkExtent2D extent) {
        const bool in_place = in.layout == VK_IMAGE_LAYOUT_GENERAL;
        const VkImageLayout source =
            in_place ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        if (!in_place) {
            detail::image_barrier(cmd, in.image, in.layout, source, read_before, VK_ACCESS_2_NONE,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
        }
        detail::copy_whole_image(cmd, in.image, source, target,
                                 VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, extent);
        if (!in_place) {
            detail::image_barrier(cmd, in.image, source, in.layout, VK_PIPELINE_STAGE_2_COPY_BIT,
                                  VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                  VK_ACCESS_2_NONE);
        }
    }
    // This job's inputs become the next job's previous frame, after this job's reads.
    void keep_as_previous(const RecordContext& job) {
        constexpr auto compute = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
        constexpr auto copy = VK_PIPELINE_STAGE_2_COPY_BIT;
        for (std::size_t i = 0; i < m_previous.size(); ++i) {
            const JobInput& in = job.inputs[i];
            const VkImage previous = m_previous[i].get();
            detail::image_barrier(job.cmd, previous,
                                  m_has_previous ? VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL
                                                 : VK_IMAGE_LAYOUT_UNDEFINED,
                                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, compute, VK_ACCESS_2_NONE,
                                  copy, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            copy_input(job.cmd, in, compute, previous, in.extent);
            detail::image_barrier(job.cmd, previous, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                  VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, copy,
                                  VK_ACCESS_2_TRANSFER_WRITE_BIT, compute,
                                  VK_ACCESS_2_SHADER_SAMPLED_READ_BIT);
        }
        m_has_previous = true;
    }

    std::vector<detail::Image> m_previous;
    bool m_has_previous = false;
};

// Colour, depth and motion vectors from the application (post/interpolate.hpp).
class InterpolateWorkload final : public FrameGenerationWorkload {
public:
    explicit InterpolateWorkload(const WorkerContext& context)
        : FrameGenerationWorkload(context, (expect_inputs(context, "interpolate",
                                                          {{"colour", VK_FORMAT_R8G8B8A8_UNORM},
                                                           {"depth", VK_FORMAT_R32_SFLOAT},
                                                           {"motion", VK_FORMAT_R16G16_SFLOAT}}),
                                            expect_task_size(context, "interpolate", 0),
                                            expect_task_size(context, "interpolate", 1),
                                            expect_task_size(context, "interpolate", 2),
                                            expect_unchained(context, "interpolate"),
                                            device_of(context, "interpolate"))),
          m_pass(m_device, {context.width, context.height}, context.slots) {}

private:
    void generate(const RecordContext& job, const InterpolateSettings& s) override {
        detail::InterpolateParams p;
        p.t = s.t;
        p.depth_tolerance = s.depth_tolerance;
        p.fill_radius = s.fill_radius;
        p.reversed_depth = s.reversed_depth != 0;
        const detail::FrameInputs now{sampled(job.inputs[0]), sampled(job.inputs[1]),
                                      sampled(job.inputs[2])};
        const detail::FrameInputs before{previous(0), previous(1), previous(2)};
        check_recorded(m_pass.record(job.cmd, job.slot, before, now, job.view, job.extent, p),
                       "interpolate");
    }

    detail::InterpolatePass m_pass;
};

// Colour alone: the motion estimated from the two frames (post/colour_motion.hpp).
class ColourInterpolateWorkload final : public FrameGenerationWorkload {
public:
    explicit ColourInterpolateWorkload(const WorkerContext& context)
        : FrameGenerationWorkload(context, (expect_inputs(context, "interpolate_colour",
                                                          {{"colour", VK_FORMAT_R8G8B8A8_UNORM}}),
                                            expect_task_size(context, "interpolate_colour", 0),
                                            device_of(context, "interpolate_colour"))),
          m_pass(m_device, {context.width, context.height}, context.slots) {}

private:
    void generate(const RecordContext& job, const InterpolateSettings& s) override {
        detail::InterpolateParams p;
        p.t = s.t;
        p.fill_radius = s.fill_radius;
        check_recorded(m_pass.record(job.cmd, job.slot, previous(0), sampled(job.inputs[0]),
                                     job.view, job.extent, p),
                       "colour interpolate");
    }

    detail::ColourInterpolatePass m_pass;
};

TaskDesc post_task(const std::string& name, std::uint32_t width, std::uint32_t height,
                   WorkloadFactory factory) {
    TaskDesc d;
    d.name = name;
    d.width = width;
    d.height = height;
    d.format = VK_FORMAT_R8G8B8A8_UNORM;
    d.factory = std::move(factory);
    d.placement = Placement::automatic();
    return d;
}

} // namespace

WorkloadFactory blur_workload() {
    return [](const WorkerContext& c) { return std::make_unique<BlurWorkload>(c); };
}

WorkloadFactory upscale_workload() {
    return [](const WorkerContext& c) -> std::unique_ptr<Workload> {
        if (c.inputs.size() == 3) { // colour, depth, motion: temporal_upscale_task
            return std::make_unique<TemporalUpscaleWorkload>(c);
        }
        return std::make_unique<UpscaleWorkload>(c);
    };
}

TemporalJitter temporal_jitter(std::uint64_t frame, std::uint32_t input_width,
                               std::uint32_t input_height, std::uint32_t width,
                               std::uint32_t height) {
    // Per axis: an integer ratio n visits the n offsets (k + 0.5) / n - 0.5, x fastest; else
    // Halton bases 2 and 3.
    const auto ratio = [](std::uint32_t in, std::uint32_t out) -> std::uint32_t {
        return in > 0 && out % in == 0 ? out / in : 0;
    };
    const std::uint32_t nx = ratio(input_width, width);
    const std::uint32_t ny = ratio(input_height, height);
    if (nx > 0 && ny > 0) {
        const std::uint64_t k = frame % (std::uint64_t{nx} * ny);
        return {(static_cast<float>(k % nx) + 0.5f) / static_cast<float>(nx) - 0.5f,
                (static_cast<float>(k / nx) + 0.5f) / static_cast<float>(ny) - 0.5f};
    }
    const auto halton = [](std::uint64_t i, std::uint64_t base) {
        float f = 1.0f;
        float r = 0.0f;
        for (std::uint64_t n = i + 1; n > 0; n /= base) {
            f /= static_cast<float>(base);
            r += f * static_cast<float>(n % base);
        }
        return r - 0.5f;
    };
    return {halton(frame % 16, 2), halton(frame % 16, 3)};
}

WorkloadFactory interpolate_workload() {
    return [](const WorkerContext& c) { return std::make_unique<InterpolateWorkload>(c); };
}

WorkloadFactory interpolate_colour_workload() {
    return [](const WorkerContext& c) { return std::make_unique<ColourInterpolateWorkload>(c); };
}

TaskDesc blur_task(const std::string& name, std::uint32_t width, std::uint32_t height) {
    TaskDesc d = post_task(name, width, height, blur_workload());
    d.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, width, height}};
    return d;
}

TaskDesc upscale_task(const std::string& name, std::uint32_t input_width,
                      std::uint32_t input_height, std::uint32_t width, std::uint32_t height) {
    TaskDesc d = post_task(name, width, height, upscale_workload());
    d.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, input_width, input_height}};
    return d;
}

TaskDesc temporal_upscale_task(const std::string& name, std::uint32_t input_width,
                               std::uint32_t input_height, std::uint32_t width,
                               std::uint32_t height) {
    TaskDesc d = post_task(name, width, height, upscale_workload());
    d.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, input_width, input_height},
                {"depth", VK_FORMAT_R32_SFLOAT, input_width, input_height},
                {"motion", VK_FORMAT_R16G16_SFLOAT, input_width, input_height}};
    return d;
}

TaskDesc interpolate_task(const std::string& name, std::uint32_t width, std::uint32_t height) {
    TaskDesc d = post_task(name, width, height, interpolate_workload());
    d.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, width, height},
                {"depth", VK_FORMAT_R32_SFLOAT, width, height},
                {"motion", VK_FORMAT_R16G16_SFLOAT, width, height}};
    return d;
}

TaskDesc interpolate_colour_task(const std::string& name, std::uint32_t width,
                                 std::uint32_t height) {
    TaskDesc d = post_task(name, width, height, interpolate_colour_workload());
    d.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, width, height}};
    return d;
}

} // namespace tandem
