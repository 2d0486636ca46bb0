// Compute tasks reading their task's inputs (tandem/compute.hpp): the bindings after the
// ComputeTaskDesc's buffers are TaskDesc::inputs in order, read as the module declares them (a
// sampler2D through Tandem's nearest sampler, a texture2D with texelFetch, a readonly storage
// image with imageLoad, a buffer block), an application's images and a chain's producer output
// alike. Every output texel is compared with the same maths on the CPU, on a worker and on the
// primary; each mismatch between the module and the task is refused naming the binding. On
// lavapipe opened twice, under the fixture's validation (synchronisation validation in the test
// job): any message fails.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "app_image.hpp"
#include "runtime_fixture.hpp"
#include "spirv_file.hpp"
#include "tandem/compute.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_w = 21; // not a multiple of the workgroup: the edges are checked too
constexpr std::uint32_t k_h = 13;
constexpr std::size_t k_texels = std::size_t{k_w} * k_h;

// The module compiled from tests/workloads/shaders/<name>.comp at build time.
std::vector<std::uint32_t> module(const std::string& name) {
    auto words = read_spirv_file(std::string(TANDEM_TEST_SHADER_DIR) + "/" + name + ".comp.spv");
    EXPECT_FALSE(words.empty()) << name;
    return words;
}

ComputeTaskDesc compute_desc(const std::string& name) {
    ComputeTaskDesc d;
    d.spirv = module(name);
    return d;
}

// Round `round`'s RGBA8 colour: every byte different from its neighbours and from other rounds.
std::vector<std::uint8_t> colour_bytes(int round) {
    std::vector<std::uint8_t> out(k_texels * 4);
    std::uint32_t x = static_cast<std::uint32_t>(round) * 2654435761u ^ 0x9e3779b9u;
    for (std::uint8_t& b : out) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<std::uint8_t>(x >> 24);
    }
    return out;
}

// Round `round`'s depth (R32F): tenths from 0 to 0.9, varying along both axes and by round.
std::vector<float> depth_values(int round) {
    std::vector<float> out(k_texels);
    for (std::uint32_t y = 0; y < k_h; ++y) {
        for (std::uint32_t x = 0; x < k_w; ++x) {
            out[y * k_w + x] =
                static_cast<float>((x * 7 + y * 3 + static_cast<std::uint32_t>(round)) % 10) /
                10.0f;
        }
    }
    return out;
}

template <typename T>
std::vector<std::uint8_t> as_bytes(const std::vector<T>& values) {
    std::vector<std::uint8_t> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

std::vector<std::uint8_t> inverted(std::vector<std::uint8_t> rgba) {
    for (std::size_t i = 0; i < rgba.size(); ++i) {
        if (i % 4 != 3) {
            rgba[i] = static_cast<std::uint8_t>(255 - rgba[i]);
        }
    }
    return rgba;
}

// load_storage.comp on the CPU: red and blue swapped.
std::vector<std::uint8_t> swapped(std::vector<std::uint8_t> rgba) {
    for (std::size_t i = 0; i < rgba.size(); i += 4) {
        std::swap(rgba[i], rgba[i + 2]);
    }
    return rgba;
}

// gradient.comp on the CPU.
std::vector<std::uint8_t> gradient(std::uint32_t frame) {
    std::vector<std::uint8_t> out(k_texels * 4);
    for (std::uint32_t y = 0; y < k_h; ++y) {
        for (std::uint32_t x = 0; x < k_w; ++x) {
            const std::uint32_t texel =
                (x * 0x01030507u) ^ (y * 0x0b0d1113u) ^ (frame * 0x9e3779b9u);
            std::memcpy(out.data() + (y * k_w + x) * 4, &texel, 4);
        }
    }
    return out;
}

void expect_texels(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want,
                   const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < got.size(); i += 4) {
        if (!std::equal(got.begin() + i, got.begin() + i + 4, want.begin() + i)) {
            ADD_FAILURE() << what << ": texel (" << (i / 4) % k_w << ", " << (i / 4) / k_w
                          << ") is " << int{got[i]} << "," << int{got[i + 1]} << ","
                          << int{got[i + 2]} << "," << int{got[i + 3]} << ", expected "
                          << int{want[i]} << "," << int{want[i + 1]} << "," << int{want[i + 2]}
                          << "," << int{want[i + 3]};
            return;
        }
    }
}

class ComputeInputs : public RuntimeTest {
protected:
    std::uint32_t virtual_devices() const override { return 2; }

    static TaskDesc task(const std::string& placement, const ComputeTaskDesc& compute,
                         std::vector<TaskInputDesc> inputs) {
        TaskDesc d = pattern_task(placement, k_w, k_h);
        d.name = "compute inputs " + placement;
        d.inputs = std::move(inputs);
        d.factory = compute_workload(compute);
        return d;
    }

    // Rounds of: write the application's inputs (`write`, once the last submit's were
    // released), submit until accepted, pump until the job's output is ready, and compare every
    // texel with `expected`. Returns the value the inputs are released at.
    std::uint64_t run_rounds(
        Runtime& runtime, TaskId task, int rounds,
        const std::function<std::vector<InputImage>(int round, std::uint64_t released)>& write,
        const std::function<std::vector<std::uint8_t>(int round)>& expected,
        std::span<const std::byte> bytes = {}) {
        auto reader = make_reader(runtime, k_w, k_h);
        std::uint64_t released = 0;
        const std::uint64_t first = runtime.stats(task).accepted;
        for (int round = 1; round <= rounds && !HasFailure(); ++round) {
            const std::vector<InputImage> inputs = write(round, released);
            SubmitResult r;
            EXPECT_TRUE(pump_until(runtime, [&] {
                r = inputs.empty() ? runtime.submit(task, bytes)
                                   : runtime.submit(task, bytes, inputs);
                EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
                return r.accepted() || r.status == SubmitStatus::Failed;
            }));
            EXPECT_EQ(r.generation, first + static_cast<std::uint64_t>(round));
            released = std::max(released, r.inputs_released);
            EXPECT_TRUE(pump_until(runtime, [&] {
                const TaskStats s = runtime.stats(task);
                return s.ready >= r.generation || s.failed_jobs > 0;
            }));
            EXPECT_EQ(runtime.stats(task).failed_jobs, 0u) << runtime.stats(task).workload_error;
            auto lease = runtime.acquire(task);
            if (!lease) {
                ADD_FAILURE() << "no output for round " << round;
                break;
            }
            EXPECT_EQ(lease->generation, r.generation);
            std::uint64_t v = 0;
            const auto px = read_back(*reader, *lease, v);
            runtime.release(*lease, v);
            expect_texels(px, expected(round), "round " + std::to_string(round));
        }
        return released;
    }

    // The refusal register_task throws for `desc`, or "(registered)".
    static std::string refusal(Runtime& runtime, const TaskDesc& desc) {
        try {
            const TaskId id = runtime.register_task(desc);
            EXPECT_EQ(runtime.unregister_task(id), TaskError::None);
        } catch (const Error& e) {
            return std::string(e.what()) + " | " + e.hint();
        }
        return "(registered)";
    }
};

// An application's colour through a sampler2D, inverted: on the worker, then on the primary.
TEST_F(ComputeInputs, ASampledInputIsReadOnTheWorkerAndOnThePrimary) {
    auto runtime = make_runtime("1");
    for (const std::string placement : {"worker:0", "primary"}) {
        const TaskId id =
            runtime->register_task(task(placement, compute_desc("invert_sampled"),
                                        {{.name = "colour", .format = VK_FORMAT_R8G8B8A8_UNORM}}));
        AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_w, k_h);
        const std::uint64_t released = run_rounds(
            *runtime, id, 4,
            [&](int round, std::uint64_t after) {
                return std::vector<InputImage>{colour.write(colour_bytes(round), after)};
            },
            [](int round) { return inverted(colour_bytes(round)); });
        colour.finish(released);
        EXPECT_EQ(runtime->stats(id).device, placement == "primary"
                                                 ? runtime->primary_device().index
                                                 : runtime->worker_devices().at(0).index);
        EXPECT_EQ(runtime->unregister_task(id), TaskError::None);
    }
}

// A readonly rgba8 image2D read with imageLoad: the workload's own storage copy of the input.
TEST_F(ComputeInputs, AStorageImageInputIsReadWithImageLoad) {
    auto runtime = make_runtime("1");
    for (const std::string placement : {"worker:0", "primary"}) {
        const TaskId id =
            runtime->register_task(task(placement, compute_desc("load_storage"),
                                        {{.name = "colour", .format = VK_FORMAT_R8G8B8A8_UNORM}}));
        AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_w, k_h);
        const std::uint64_t released = run_rounds(
            *runtime, id, 4,
            [&](int round, std::uint64_t after) {
                return std::vector<InputImage>{colour.write(colour_bytes(round), after)};
            },
            [](int round) { return swapped(colour_bytes(round)); });
        colour.finish(released);
        EXPECT_EQ(runtime->unregister_task(id), TaskError::None);
    }
}

// Jobs submitted as fast as they are accepted, several in flight at once: each slot's descriptor
// set and storage copy are rewritten only once the slot's last job completed, so every output
// holds its own round's input.
TEST_F(ComputeInputs, JobsInFlightTogetherEachReadTheirOwnInput) {
    auto runtime = make_runtime("1");
    const TaskId id =
        runtime->register_task(task("worker:0", compute_desc("load_storage"),
                                    {{.name = "colour", .format = VK_FORMAT_R8G8B8A8_UNORM}}));
    AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_w, k_h);
    auto reader = make_reader(*runtime, k_w, k_h);
    std::map<std::uint64_t, int> round_of; // generation -> round
    std::uint64_t released = 0;
    int round = 1;
    InputImage input = colour.write(colour_bytes(round), released);
    std::uint64_t shown = 0;
    int checked = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (checked < 16 && !HasFailure() && std::chrono::steady_clock::now() < deadline) {
        const SubmitResult r = runtime->submit(id, {}, std::span(&input, 1));
        EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
        if (r.accepted()) {
            round_of[r.generation] = round;
            released = std::max(released, r.inputs_released);
            input = colour.write(colour_bytes(++round), released);
        }
        runtime->pump();
        if (auto lease = runtime->acquire(id)) {
            std::uint64_t v = 0;
            if (lease->generation > shown) {
                const auto px = read_back(*reader, *lease, v);
                expect_texels(px, swapped(colour_bytes(round_of.at(lease->generation))),
                              "generation " + std::to_string(lease->generation));
                shown = lease->generation;
                ++checked;
            }
            runtime->release(*lease, v);
        }
    }
    EXPECT_GE(checked, 16);
    EXPECT_EQ(runtime->stats(id).failed_jobs, 0u) << runtime->stats(id).workload_error;
    colour.finish(released);
    EXPECT_EQ(runtime->unregister_task(id), TaskError::None);
}

// An engine's pass over its colour and depth: one ComputeTaskDesc buffer (binding 1), then the
// colour (texture2D), the depth (R32F, sampler2D) and a buffer input at bindings 2, 3 and 4.
TEST_F(ComputeInputs, ColourDepthAndABufferAreCombinedAfterTheDescriptionsBuffers) {
    auto runtime = make_runtime("1");
    ComputeTaskDesc compute = compute_desc("combine");
    compute.input_bytes = {4};
    const float threshold = 0.45f;
    std::byte bytes[4];
    std::memcpy(bytes, &threshold, 4);
    for (const std::string placement : {"worker:0", "primary"}) {
        const TaskId id =
            runtime->register_task(task(placement, compute,
                                        {{.name = "colour", .format = VK_FORMAT_R8G8B8A8_UNORM},
                                         {.name = "depth", .format = VK_FORMAT_R32_SFLOAT},
                                         {.name = "fog", .buffer_size = 4}}));
        AppImage colour(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_w, k_h);
        AppImage depth(app_device(), *runtime, VK_FORMAT_R32_SFLOAT, k_w, k_h);
        AppImage fog(app_device(), *runtime, VkDeviceSize{4}, VkDeviceSize{0});
        const auto fog_of = [](int round) {
            return std::vector<std::uint8_t>{static_cast<std::uint8_t>(round * 40), 17, 99, 255};
        };
        const std::uint64_t released = run_rounds(
            *runtime, id, 4,
            [&](int round, std::uint64_t after) {
                return std::vector<InputImage>{colour.write(colour_bytes(round), after),
                                               depth.write(as_bytes(depth_values(round)), after),
                                               fog.write(fog_of(round), after)};
            },
            [&](int round) {
                std::vector<std::uint8_t> want = colour_bytes(round);
                const std::vector<float> d = depth_values(round);
                const std::vector<std::uint8_t> f = fog_of(round);
                for (std::size_t t = 0; t < k_texels; ++t) {
                    if (!(d[t] < threshold)) {
                        std::copy(f.begin(), f.end(), want.begin() + static_cast<long>(t * 4));
                    }
                }
                return want;
            },
            bytes);
        colour.finish(released);
        depth.finish(released);
        fog.finish(released);
        EXPECT_EQ(runtime->unregister_task(id), TaskError::None);
    }
}

// A chain: the consumer's texture2D is its producer's output (a compute task's), read in place
// on the worker they share.
TEST_F(ComputeInputs, AChainedInputIsTheProducersOutput) {
    auto runtime = make_runtime("1");
    ComputeTaskDesc producer_compute = compute_desc("gradient");
    producer_compute.push_constant_bytes = 4;
    TaskDesc producer_desc = task("worker:0", producer_compute, {});
    producer_desc.name = "gradient";
    const TaskId producer = runtime->register_task(producer_desc);
    TaskDesc consumer_desc = task("worker:0", compute_desc("invert_fetched"),
                                  {{.name = "gradient", .producer = producer}});
    consumer_desc.name = "inverted gradient";
    consumer_desc.placement = Placement::automatic();
    const TaskId consumer = runtime->register_task(consumer_desc);
    std::uint32_t frame = 100;
    (void)run_rounds(
        *runtime, consumer, 4,
        [&](int round, std::uint64_t) {
            frame = 100 + static_cast<std::uint32_t>(round);
            std::byte push[4];
            std::memcpy(push, &frame, 4);
            EXPECT_TRUE(
                pump_until(*runtime, [&] { return runtime->submit(producer, push).accepted(); }));
            return std::vector<InputImage>{};
        },
        [](int round) { return inverted(gradient(100 + static_cast<std::uint32_t>(round))); });
    EXPECT_EQ(runtime->stats(consumer).input_path, "chained");
    EXPECT_EQ(runtime->stats(consumer).device, runtime->stats(producer).device);
    EXPECT_EQ(runtime->stats(producer).device, runtime->worker_devices().at(0).index);
    EXPECT_EQ(runtime->unregister_task(consumer), TaskError::None);
    EXPECT_EQ(runtime->unregister_task(producer), TaskError::None);
}

struct Mismatch {
    const char* what;
    const char* shader;
    std::vector<std::uint32_t> input_bytes; // ComputeTaskDesc::input_bytes
    std::vector<TaskInputDesc> inputs;
    std::vector<const char*> says; // every phrase the refusal must contain
};

// Each mismatch between the module's bindings and the task's inputs is refused at
// registration naming the binding, what the module has there and what the task has; the same
// runtime then runs a matching task to the exact texel.
TEST_F(ComputeInputs, EachMismatchIsRefusedNamingTheBinding) {
    auto runtime = make_runtime("1");
    const TaskId producer = runtime->register_task(task("worker:0",
                                                        [] {
                                                            ComputeTaskDesc d =
                                                                compute_desc("gradient");
                                                            d.push_constant_bytes = 4;
                                                            return d;
                                                        }(),
                                                        {}));
    const TaskInputDesc colour{.name = "colour", .format = VK_FORMAT_R8G8B8A8_UNORM};
    const std::vector<Mismatch> rows = {
        {"a storage image of another format",
         "load_storage",
         {},
         {{.name = "depth", .format = VK_FORMAT_R32_SFLOAT}},
         {"a storage image (image2D, rgba8 'colour') at set 0, binding 1",
          "the task's image input 0 ('depth', R32F", "format qualifier of the input's format"}},
        {"a buffer where an image is",
         "read_buffer",
         {},
         {colour},
         {"a storage buffer (Texels 'source') at set 0, binding 1",
          "the task's image input 0 ('colour', RGBA8"}},
        {"uint texels from a float input",
         "refuse_uint_sampler",
         {},
         {colour},
         {"a combined image sampler (sampler2D 'colour') at set 0, binding 1, of uint texels",
          "the task's image input 0 ('colour', RGBA8 21x13) is there, which has float texels"}},
        {"an image where a buffer is",
         "invert_sampled",
         {},
         {{.name = "texels", .buffer_size = 64}},
         {"a combined image sampler (sampler2D 'colour') at set 0, binding 1",
          "the task's buffer input 0 ('texels', 64 bytes)", "readonly buffer block"}},
        {"a buffer of another size",
         "combine",
         {4},
         {colour,
          {.name = "depth", .format = VK_FORMAT_R32_SFLOAT},
          {.name = "fog", .buffer_size = 8}},
         {"a storage buffer (Fog 'fog') at set 0, binding 4 of 4 bytes",
          "the task's buffer input 2 ('fog', 8 bytes) is there"}},
        {"a binding beyond the inputs",
         "invert_sampled",
         {},
         {},
         {"a combined image sampler (sampler2D 'colour') at set 0, binding 1",
          "nothing there: it declares no inputs, only the output at binding 0, and the task no "
          "inputs",
          "Remove binding 1 from the shader"}},
        {"a storage image for a chained input",
         "load_storage",
         {},
         {{.name = "gradient", .producer = producer}},
         {"at set 0, binding 1", "the task's chained input 0 ('gradient'",
          "cannot be bound as a storage image"}},
    };
    for (const Mismatch& row : rows) {
        ComputeTaskDesc compute = compute_desc(row.shader);
        compute.input_bytes = row.input_bytes;
        const std::string why = refusal(*runtime, task("worker:0", compute, row.inputs));
        for (const char* phrase : row.says) {
            EXPECT_NE(why.find(phrase), std::string::npos)
                << row.what << ": '" << phrase << "' not in: " << why;
        }
    }
    // What the module alone tells is refused by compute_workload() itself.
    std::string written = "(accepted)";
    try {
        (void)compute_workload(compute_desc("refuse_written_input"));
    } catch (const Error& e) {
        written = e.what();
    }
    EXPECT_NE(written.find("a storage image (image2D, rgba8 'colour') at set 0, binding 1 without "
                           "readonly"),
              std::string::npos)
        << written;

    EXPECT_EQ(runtime->unregister_task(producer), TaskError::None);
    const TaskId id =
        runtime->register_task(task("worker:0", compute_desc("invert_sampled"), {colour}));
    AppImage image(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_w, k_h);
    image.finish(run_rounds(
        *runtime, id, 1,
        [&](int round, std::uint64_t after) {
            return std::vector<InputImage>{image.write(colour_bytes(round), after)};
        },
        [](int round) { return inverted(colour_bytes(round)); }));
    EXPECT_EQ(runtime->unregister_task(id), TaskError::None);
}

} // namespace
} // namespace tandem::test
