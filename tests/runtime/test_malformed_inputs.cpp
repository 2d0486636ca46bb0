// Bad input never crashes: every public entry point that takes the application's data (SPIR-V
// and compute descriptions, task and input descriptions, job bytes, input images, post-process
// settings and baselines, scene data and glTF files, capture snapshots, lease readbacks, tasks
// and profile files) is fed each malformed variant in the table below. Each must answer with a
// clear error the way its API documents (tandem::Error at set-up, of category InvalidArgument
// unless a file could not be read; a Failed SubmitResult with a reason per frame; a sentence
// from a check function), and after each one the same runtime registers and runs a valid
// compute task to its exact bytes.
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "post/reference.hpp"
#include "runtime_fixture.hpp"
#include "scene/gltf_loader.hpp"
#include "scene/tasks.hpp"
#include "sched/profile.hpp"
#include "spirv_file.hpp"
#include "tandem/capture.hpp"
#include "tandem/compute.hpp"
#include "tandem/gltf.hpp"
#include "tandem/post.hpp"
#include "tandem/readback.hpp"
#include "tandem/scene.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_w = 9;
constexpr std::uint32_t k_h = 7;
constexpr float k_nan = std::numeric_limits<float>::quiet_NaN();

std::vector<std::uint32_t> shader_module(const std::string& name) {
    return read_spirv_file(std::string(TANDEM_TEST_SHADER_DIR) + "/" + name + ".comp.spv");
}

// A module libFuzzer found (fuzz/corpus/compute, after its 16-byte description header):
// SPIRV-Tools accepts it, and SPIRV-Cross throws reading its LocalSizeId, whose z is a function.
std::vector<std::uint32_t> fuzzed_module(const std::string& name) {
    std::ifstream f(std::string(TANDEM_FUZZ_CORPUS_DIR) + "/" + name, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<std::uint32_t> words(bytes.size() > 16 ? (bytes.size() - 16) / 4 : 0);
    std::memcpy(words.data(), bytes.data() + 16, words.size() * 4);
    return words;
}

// fill.comp: every texel the job's one 4-byte input, an RGBA8 colour.
ComputeTaskDesc fill_desc() {
    ComputeTaskDesc d;
    d.spirv = shader_module("fill");
    d.input_bytes = {4};
    return d;
}

// What a row's call answered: the error's text, or "" when it accepted the input.
using Answer = std::string;

// A set-up call: the text of the tandem::Error it throws, after its category in brackets
// ("[invalid argument] ..."). Any other exception is a failure of its own (reported as such),
// and no exception at all answers "".
Answer thrown(const std::function<void()>& call) {
    try {
        call();
    } catch (const Error& e) {
        return "[" + std::string(to_string(e.category())) + "] " + e.what();
    } catch (const std::exception& e) {
        return std::string("NOT A tandem::Error: ") + e.what();
    }
    return {};
}

// A per-frame call: the reason of a Failed submit (with its TaskError's name), else "".
Answer failed(const SubmitResult& r) {
    return r.status == SubmitStatus::Failed ? std::string(to_string(r.error)) + ": " + r.reason
                                            : Answer{};
}

std::vector<std::byte> bytes_of_size(std::size_t n) {
    return std::vector<std::byte>(n);
}

template <typename T>
std::vector<std::byte> bytes_of(const T& value) {
    std::vector<std::byte> out(sizeof value);
    std::memcpy(out.data(), &value, sizeof value);
    return out;
}

// What the rows share: one runtime with a compute task, a blur task and a capture task on a
// worker, and the scene the capture draws.
struct Env {
    Runtime& runtime;
    TaskId fill;
    TaskId blur;
    TaskId capture;
    std::shared_ptr<const Scene> scene;
};

struct Row {
    const char* entry;   // the entry point
    const char* variant; // what is wrong with its input
    std::function<Answer(Env&)> call;
    const char* says; // a phrase the answer must contain
    // A thrown Error's category: the application's data or argument was refused, unless the
    // row says otherwise (a file that cannot be read, an application's own Error).
    ErrorCategory category = ErrorCategory::InvalidArgument;
};

ComputeTaskDesc with(const std::function<void(ComputeTaskDesc&)>& change) {
    ComputeTaskDesc d = fill_desc();
    change(d);
    return d;
}

TaskDesc task(const std::function<void(TaskDesc&)>& change) {
    TaskDesc d;
    d.name = "malformed";
    d.width = k_w;
    d.height = k_h;
    d.placement = Placement::parse("worker:0").value();
    d.factory = compute_workload(fill_desc());
    change(d);
    return d;
}

Answer compute(const ComputeTaskDesc& d) {
    return thrown([&] { (void)compute_workload(d); });
}

Answer registration(Env& env, const TaskDesc& d) {
    return thrown([&] {
        const TaskId id = env.runtime.register_task(d);
        (void)env.runtime.unregister_task(id); // accepted: the row fails, the runtime stays clean
    });
}

TaskInputDesc image_input(const std::function<void(TaskInputDesc&)>& change) {
    TaskInputDesc in;
    in.name = "colour";
    in.width = k_w;
    in.height = k_h;
    change(in);
    return in;
}

Answer builder(const std::function<void(SceneBuilder&)>& call) {
    return thrown([&] {
        SceneBuilder b;
        call(b);
    });
}

// A one-triangle primitive (positions kept alive by the caller's arrays).
constexpr std::array<float, 9> k_triangle{0, 0, 0, 1, 0, 0, 0, 1, 0};
PrimitiveDesc triangle() {
    PrimitiveDesc p;
    p.positions = k_triangle;
    return p;
}

Answer mesh(const std::function<void(PrimitiveDesc&)>& change) {
    return builder([&](SceneBuilder& b) {
        PrimitiveDesc p = triangle();
        change(p);
        (void)b.add_mesh("m", {p});
    });
}

Answer snapshot(Env& env, const std::function<void(CaptureSnapshot&)>& change) {
    CaptureSnapshot s;
    s.camera.view = look_at({0, 0, 3}, {0, 0, 0}, {0, 1, 0});
    s.instances.push_back({MeshId{0}, k_identity, {}});
    change(s);
    return check_capture(s, *env.scene);
}

const std::array<float, 4> k_four_floats{0, 0, 0, 0};
const std::array<float, 9> k_nan_triangle{0, 0, 0, 1, k_nan, 0, 0, 1, 0};
const std::array<std::uint16_t, 3> k_index_out_of_range{0, 1, 3};
const std::array<std::uint16_t, 2> k_two_indices{0, 1};
const std::array<std::uint32_t, 3> k_indices32{0, 1, 2};
const std::array<float, 3> k_one_normal{0, 0, 1};
const std::array<float, 2> k_one_uv{0, 0};
const std::array<std::uint8_t, 15> k_short_texels{};

// clang-format off
const std::vector<Row> k_rows = {
    // compute_workload(): the module and its description.
    {"compute_workload", "empty SPIR-V", [](Env&) { return compute(with([](auto& d) { d.spirv.clear(); })); }, "is empty"},
    {"compute_workload", "wrong magic number", [](Env&) { return compute(with([](auto& d) { d.spirv[0] = 0xdeadbeefu; })); }, "is not valid"},
    {"compute_workload", "byte-swapped module", [](Env&) { return compute(with([](auto& d) { for (auto& w : d.spirv) { w = __builtin_bswap32(w); } })); }, "SPIR-V"},
    {"compute_workload", "header only", [](Env&) { return compute(with([](auto& d) { d.spirv.resize(5); })); }, "SPIR-V"},
    {"compute_workload", "truncated in half", [](Env&) { return compute(with([](auto& d) { d.spirv.resize(d.spirv.size() / 2); })); }, "is not valid"},
    {"compute_workload", "a stray word at the end", [](Env&) { return compute(with([](auto& d) { d.spirv.push_back(0xffffffffu); })); }, "is not valid"},
    {"compute_workload", "a LocalSizeId of a function", [](Env&) { return compute(with([](auto& d) { d.spirv = fuzzed_module("crash-spirv-cross-bad-cast.bin"); })); }, "cannot be reflected (SPIRV-Cross: Bad cast)"},
    {"compute_workload", "no entry point named", [](Env&) { return compute(with([](auto& d) { d.entry_point.clear(); })); }, "has no compute entry point ''"},
    {"compute_workload", "an entry point it lacks", [](Env&) { return compute(with([](auto& d) { d.entry_point = "mian"; })); }, "(it has: main)"},
    {"compute_workload", "another workgroup size", [](Env&) { return compute(with([](auto& d) { d.workgroup_size = {7, 4, 1}; })); }, "workgroup size 8x4x1"},
    {"compute_workload", "push constants it lacks", [](Env&) { return compute(with([](auto& d) { d.push_constant_bytes = 4; })); }, "push-constant block of 0 bytes"},
    {"compute_workload", "huge push constants", [](Env&) { return compute(with([](auto& d) { d.push_constant_bytes = 0xffffffffu; })); }, "push-constant block"},
    {"compute_workload", "nine inputs", [](Env&) { return compute(with([](auto& d) { d.input_bytes.assign(9, 4); })); }, "at most 8"},
    {"compute_workload", "an input of zero bytes", [](Env&) { return compute(with([](auto& d) { d.input_bytes = {0}; })); }, "binding 1"},
    {"compute_workload", "a huge input", [](Env&) { return compute(with([](auto& d) { d.input_bytes = {0xffffffffu}; })); }, "binding 1"},
    // Bindings past the description's buffers are the task's inputs: a task without refuses.
    {"register_task", "no inputs for its binding 1", [](Env& e) { return registration(e, task([](auto& d) { d.factory = compute_workload(with([](auto& c) { c.input_bytes.clear(); })); })); }, "binding 1"},
    {"register_task", "binding 1 a sampler, no inputs", [](Env& e) { return registration(e, task([](auto& d) { d.factory = compute_workload(with([](auto& c) { c.spirv = shader_module("refuse_sampler_without_inputs"); c.input_bytes.clear(); })); })); }, "combined image sampler"},
    // register_task(): the task's description.
    {"register_task", "width 0", [](Env& e) { return registration(e, task([](auto& d) { d.width = 0; })); }, "has size 0x7"},
    {"register_task", "height 0", [](Env& e) { return registration(e, task([](auto& d) { d.height = 0; })); }, "has size 9x0"},
    {"register_task", "a huge size", [](Env& e) { return registration(e, task([](auto& d) { d.width = d.height = 0xffffffffu; })); }, "Use a width and height"},
    {"register_task", "zero slots", [](Env& e) { return registration(e, task([](auto& d) { d.slots = 0; })); }, "0 slots"},
    {"register_task", "one slot", [](Env& e) { return registration(e, task([](auto& d) { d.slots = 1; })); }, "1 slots"},
    {"register_task", "huge slots", [](Env& e) { return registration(e, task([](auto& d) { d.slots = 0xffffffffu; })); }, "Use 2 to 16 slots"},
    {"register_task", "rate NaN", [](Env& e) { return registration(e, task([](auto& d) { d.rate_hz = std::nan(""); })); }, "update rate"},
    {"register_task", "rate negative", [](Env& e) { return registration(e, task([](auto& d) { d.rate_hz = -30; })); }, "update rate"},
    {"register_task", "rate infinite", [](Env& e) { return registration(e, task([](auto& d) { d.rate_hz = INFINITY; })); }, "update rate"},
    {"register_task", "an unknown workload", [](Env& e) { return registration(e, task([](auto& d) { d.factory = {}; d.workload = "nope"; })); }, "nope"},
    {"register_task", "a worker it lacks", [](Env& e) { return registration(e, task([](auto& d) { d.placement = Placement::parse("worker:9").value(); })); }, "worker:9"},
    {"register_task", "an output format the module cannot write", [](Env& e) { return registration(e, task([](auto& d) { d.format = VK_FORMAT_R32_SFLOAT; })); }, "task's output has format R32F"},
    {"register_task", "a factory that throws", [](Env& e) { return registration(e, task([](auto& d) { d.factory = [](const WorkerContext&) -> std::unique_ptr<Workload> { throw Error("the application's factory refused"); }; })); }, "the application's factory refused", ErrorCategory::Other},
    // register_task(): its inputs (TaskInputDesc).
    {"TaskInputDesc", "nine inputs", [](Env& e) { return registration(e, task([](auto& d) { for (int i = 0; i < 9; ++i) { d.inputs.push_back(image_input([i](auto& in) { in.name += std::to_string(i); })); } })); }, "9"},
    {"TaskInputDesc", "a name twice", [](Env& e) { return registration(e, task([](auto& d) { d.inputs = {image_input([](auto&) {}), image_input([](auto&) {})}; })); }, "declared twice"},
    {"TaskInputDesc", "format undefined", [](Env& e) { return registration(e, task([](auto& d) { d.inputs = {image_input([](auto& in) { in.format = VK_FORMAT_UNDEFINED; })}; })); }, "has format"},
    {"TaskInputDesc", "a huge size", [](Env& e) { return registration(e, task([](auto& d) { d.inputs = {image_input([](auto& in) { in.width = 0xffffffffu; })}; })); }, "has size"},
    {"TaskInputDesc", "a buffer of 3 bytes", [](Env& e) { return registration(e, task([](auto& d) { d.inputs = {image_input([](auto& in) { in.buffer_size = 3; })}; })); }, "buffer"},
    {"TaskInputDesc", "a buffer past the largest", [](Env& e) { return registration(e, task([](auto& d) { d.inputs = {image_input([](auto& in) { in.buffer_size = k_max_input_buffer + 4; })}; })); }, "buffer"},
    {"TaskInputDesc", "an unknown producer", [](Env& e) { return registration(e, task([](auto& d) { d.inputs = {image_input([](auto& in) { in.producer = TaskId{4242, 7, 0}; })}; })); }, "names task"},
    {"TaskInputDesc", "an unknown usage bit", [](Env& e) { return registration(e, task([](auto& d) { d.inputs = {image_input([](auto& in) { in.usage = 0x80000000u; })}; })); }, "usage"},
    // submit(): the job's bytes and input images.
    {"submit", "no bytes for a 4-byte job", [](Env& e) { return failed(e.runtime.submit(e.fill)); }, "bad bytes"},
    {"submit", "3 bytes", [](Env& e) { return failed(e.runtime.submit(e.fill, bytes_of_size(3))); }, "submitted 3 bytes"},
    {"submit", "5 bytes", [](Env& e) { return failed(e.runtime.submit(e.fill, bytes_of_size(5))); }, "submitted 5 bytes"},
    {"submit", "1 MiB", [](Env& e) { return failed(e.runtime.submit(e.fill, bytes_of_size(1 << 20))); }, "submitted 1048576 bytes"},
    {"submit", "an id no task has", [](Env& e) { return failed(e.runtime.submit(TaskId{4242, 7, 0}, bytes_of_size(4))); }, "unknown task"},
    {"submit", "an input image to a task with none", [](Env& e) { const InputImage in[1]{}; return failed(e.runtime.submit(e.fill, bytes_of_size(4), in)); }, "bad inputs"},
    {"submit", "no input image for the blur", [](Env& e) { return failed(e.runtime.submit(e.blur, {}, {})); }, "bad inputs"},
    {"submit", "a VK_NULL_HANDLE input image", [](Env& e) { const InputImage in[1]{}; return failed(e.runtime.submit(e.blur, {}, in)); }, "bad inputs"},
    {"submit", "two input images for one", [](Env& e) { const InputImage in[2]{}; return failed(e.runtime.submit(e.blur, {}, in)); }, "bad inputs"},
    // submit(): post-processing settings bytes (tandem/post.hpp).
    {"post settings", "3 bytes", [](Env& e) { return failed(e.runtime.submit(e.blur, bytes_of_size(3), {})); }, "bad bytes"},
    {"post settings", "a settings struct and a byte", [](Env& e) { return failed(e.runtime.submit(e.blur, bytes_of_size(sizeof(BlurSettings) + 1), {})); }, "bad bytes"},
    {"post settings", "blur radius 65", [](Env& e) { return failed(e.runtime.submit(e.blur, bytes_of(BlurSettings{65, 0}), {})); }, "bad bytes"},
    {"post settings", "blur sigma NaN", [](Env& e) { return failed(e.runtime.submit(e.blur, bytes_of(BlurSettings{2, k_nan}), {})); }, "bad bytes"},
    {"post settings", "upscale settings to a blur", [](Env& e) { return failed(e.runtime.submit(e.blur, bytes_of(TemporalUpscaleSettings{}), {})); }, "bad bytes"},
    // SceneBuilder: scene data.
    {"SceneBuilder", "texels short of width * height * 4", [](Env&) { return builder([](auto& b) { (void)b.add_image(2, 2, k_short_texels); }); }, "16 expected"},
    {"SceneBuilder", "an image 0 wide", [](Env&) { return builder([](auto& b) { (void)b.add_image(0, 1, {}); }); }, "image"},
    {"SceneBuilder", "an image past the largest", [](Env&) { return builder([](auto& b) { (void)b.add_image(k_max_image_side + 1, 1, {}); }); }, "image"},
    {"SceneBuilder", "a NaN base colour", [](Env&) { return builder([](auto& b) { (void)b.add_material({{k_nan, 1, 1, 1}, {}, "m"}); }); }, "of nan"},
    {"SceneBuilder", "a base colour of 2", [](Env&) { return builder([](auto& b) { (void)b.add_material({{2, 1, 1, 1}, {}, "m"}); }); }, "0"},
    {"SceneBuilder", "an image it never returned", [](Env&) { return builder([](auto& b) { (void)b.add_material({{1, 1, 1, 1}, ImageId{3}, "m"}); }); }, "image"},
    {"SceneBuilder", "a mesh of no primitives", [](Env&) { return builder([](auto& b) { (void)b.add_mesh("m", std::span<const PrimitiveDesc>{}); }); }, "primitive"},
    {"SceneBuilder", "positions not whole vertices", [](Env&) { return mesh([](auto& p) { p.positions = k_four_floats; }); }, "position"},
    {"SceneBuilder", "a NaN position", [](Env&) { return mesh([](auto& p) { p.positions = k_nan_triangle; }); }, "finite"},
    {"SceneBuilder", "an index out of range", [](Env&) { return mesh([](auto& p) { p.indices16 = k_index_out_of_range; }); }, "index"},
    {"SceneBuilder", "indices not whole triangles", [](Env&) { return mesh([](auto& p) { p.indices16 = k_two_indices; }); }, "ind"},
    {"SceneBuilder", "both index widths", [](Env&) { return mesh([](auto& p) { p.indices16 = k_index_out_of_range; p.indices32 = k_indices32; }); }, "ind"},
    {"SceneBuilder", "normals for one vertex of three", [](Env&) { return mesh([](auto& p) { p.normals = k_one_normal; }); }, "normal"},
    {"SceneBuilder", "UVs for one vertex of three", [](Env&) { return mesh([](auto& p) { p.uvs = k_one_uv; }); }, "UV"},
    {"SceneBuilder", "a material it never returned", [](Env&) { return mesh([](auto& p) { p.material = MaterialId{5}; }); }, "material"},
    {"SceneBuilder", "build() with no mesh", [](Env&) { return builder([](auto& b) { (void)b.build(); }); }, "mesh"},
    // check_capture() and submit(): capture snapshots.
    {"check_capture", "a mesh the scene lacks", [](Env& e) { return snapshot(e, [](auto& s) { s.instances[0].mesh = MeshId{9}; }); }, "mesh"},
    {"check_capture", "a NaN transform", [](Env& e) { return snapshot(e, [](auto& s) { s.instances[0].transform[5] = k_nan; }); }, "finite"},
    {"check_capture", "a view that cannot be inverted", [](Env& e) { return snapshot(e, [](auto& s) { s.camera.view = {}; }); }, "invert"},
    {"check_capture", "field of view 0", [](Env& e) { return snapshot(e, [](auto& s) { s.camera.fov_y = 0; }); }, "field of view"},
    {"check_capture", "far before near", [](Env& e) { return snapshot(e, [](auto& s) { s.camera.z_far = 0.01f; }); }, "z_far"},
    {"check_capture", "a light direction of 0", [](Env& e) { return snapshot(e, [](auto& s) { s.light.direction = {0, 0, 0}; }); }, "light"},
    {"submit", "a capture job of 7 bytes", [](Env& e) { return failed(e.runtime.submit(e.capture, bytes_of_size(7))); }, "bad bytes"},
    {"submit", "a capture job of zeros", [](Env& e) { return failed(e.runtime.submit(e.capture, bytes_of_size(4096))); }, "bad bytes"},
    {"capture_workload", "no scene", [](Env&) { return thrown([] { (void)capture_workload(nullptr); }); }, "scene"},
    // glTF scenes, the post-processing baselines, lease readbacks.
    {"load_gltf", "bytes that are no glTF", [](Env&) { return thrown([] { const std::array<std::uint8_t, 5> bytes{'h', 'e', 'l', 'l', 'o'}; (void)detail::load_gltf_from_memory(bytes, "", "s.gltf"); }); }, "s.gltf"},
    {"load_gltf", "a file that does not exist", [](Env&) { return thrown([] { SceneBuilder b; (void)load_gltf("/nonexistent/s.gltf", b); }); }, "/nonexistent/s.gltf", ErrorCategory::Other},
    {"psnr", "images of two sizes", [](Env&) { return thrown([] { (void)detail::psnr(detail::Rgba8Image(2, 2), detail::Rgba8Image(3, 2)); }); }, "images of 2x2 and 3x2"},
    {"LeaseReadback", "a lease of format undefined", [](Env& e) { return thrown([&] { LeaseReadback r(e.runtime); (void)r.read(Lease{}); }); }, "cannot be read back"},
    // Tasks files and calibration profiles (what `tandem run` and the scheduler read).
    {"tasks file", "empty", [](Env&) { return thrown([] { (void)detail::parse_tasks("", "t.json"); }); }, "t.json"},
    {"tasks file", "cut short", [](Env&) { return thrown([] { (void)detail::parse_tasks(R"({"tasks": [{"name": )", "t.json"); }); }, "t.json"},
    {"tasks file", "a task of size 0x0", [](Env&) { return thrown([] { (void)detail::parse_tasks(R"({"tasks": [{"name": "a", "camera": "c", "resolution": [0, 0]}]})", "t.json"); }); }, "/tasks/0"},
    {"tasks file", "a file that does not exist", [](Env&) { return thrown([] { (void)detail::load_tasks("/nonexistent/tasks.json"); }); }, "/nonexistent/tasks.json", ErrorCategory::Other},
    {"profile", "empty", [](Env&) { return thrown([] { (void)detail::parse_profile(""); }); }, "profile"},
    {"profile", "an array", [](Env&) { return thrown([] { (void)detail::parse_profile("[1, 2]"); }); }, "profile"},
    {"profile", "a workload of negative time", [](Env&) { return thrown([] { (void)detail::parse_profile(R"({"version": 1, "devices": [{"workloads": [{"kind": "pattern", "width": 1, "height": 1, "ms": -1}]}]})"); }); }, "profile"},
};
// clang-format on

class MalformedInputs : public RuntimeTest {
protected:
    // Registers fill.comp on worker 0, runs one job of `colour` and checks every texel.
    static void expect_a_valid_task_runs(Runtime& runtime, harness::LeaseReader& reader,
                                         std::uint32_t colour) {
        TaskDesc desc;
        desc.name = "valid";
        desc.width = k_w;
        desc.height = k_h;
        desc.placement = Placement::parse("worker:0").value();
        desc.factory = compute_workload(fill_desc());
        const TaskId task = runtime.register_task(desc);
        const auto bytes = bytes_of(colour);
        expect_first_output_filled(runtime, reader, task, bytes, colour, k_w, k_h);
    }
};

TEST_F(MalformedInputs, EachIsRefusedClearlyAndTheRuntimeStillWorks) {
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_w, k_h);
    SceneBuilder b;
    PrimitiveDesc p = triangle();
    (void)b.add_mesh("triangle", {p});
    Env env{*runtime, {}, {}, {}, b.build()};
    TaskDesc fill = task([](auto&) {});
    fill.name = "fill";
    env.fill = runtime->register_task(fill);
    TaskDesc blur = blur_task("blur", k_w, k_h);
    blur.placement = Placement::parse("worker:0").value();
    env.blur = runtime->register_task(blur);
    TaskDesc capture = pattern_task("worker:0", k_w, k_h);
    capture.name = "capture";
    capture.factory = capture_workload(env.scene);
    env.capture = runtime->register_task(capture);

    std::uint32_t colour = 0x01020304u;
    for (const Row& row : k_rows) {
        SCOPED_TRACE(std::string(row.entry) + ", " + row.variant);
        const Answer answer = row.call(env);
        EXPECT_FALSE(answer.empty()) << "accepted";
        EXPECT_EQ(answer.find("NOT A tandem::Error"), std::string::npos) << answer;
        EXPECT_NE(answer.find(row.says), std::string::npos)
            << "'" << row.says << "' not in: " << answer;
        if (answer.starts_with("[")) {
            EXPECT_TRUE(answer.starts_with("[" + std::string(to_string(row.category)) + "]"))
                << answer;
        }
        colour = colour * 1664525u + 1013904223u;
        expect_a_valid_task_runs(*runtime, *reader, colour);
    }
    for (const TaskId t : {env.fill, env.blur, env.capture}) {
        const TaskStats s = runtime->stats(t);
        EXPECT_EQ(s.accepted, 0u) << "a malformed job was accepted";
        EXPECT_FALSE(s.stopped);
        EXPECT_FALSE(s.worker_lost);
    }
}

} // namespace
} // namespace tandem::test
