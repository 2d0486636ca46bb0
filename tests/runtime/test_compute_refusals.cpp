// A compute module whose resources do not match its ComputeTaskDesc is refused when the factory
// is made (or, for what only the task tells, its format and its inputs, when the task is
// registered), with a
// tandem::Error naming the binding, what the module has there and what the description says;
// never later, where a pipeline layout without that binding crashed the job. After each
// refusal the same runtime registers a valid compute task and runs it to the exact bytes.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime_fixture.hpp"
#include "spirv_file.hpp"
#include "tandem/compute.hpp"

namespace tandem::test {
namespace {

// The module compiled from tests/runtime/shaders/<name>.comp at build time.
std::vector<std::uint32_t> module(const std::string& name) {
    auto words = read_spirv_file(std::string(TANDEM_TEST_SHADER_DIR) + "/" + name + ".comp.spv");
    EXPECT_FALSE(words.empty()) << name;
    return words;
}

ComputeTaskDesc compute_desc(const std::string& name, std::vector<std::uint32_t> input_bytes) {
    ComputeTaskDesc d;
    d.spirv = module(name);
    d.input_bytes = std::move(input_bytes);
    return d;
}

std::string refusal(const ComputeTaskDesc& desc) {
    try {
        (void)compute_workload(desc);
    } catch (const Error& e) {
        return std::string(e.what()) + " | " + e.hint();
    }
    return "(accepted)";
}

// The same, and for a module compute_workload() accepts (its bindings past the description's
// buffers may be the task's inputs), the refusal of a task without inputs on worker:0.
std::string refusal(Runtime& runtime, const ComputeTaskDesc& desc) {
    if (std::string why = refusal(desc); why != "(accepted)") {
        return why;
    }
    TaskDesc task;
    task.name = "refused";
    task.width = 8;
    task.height = 8;
    task.placement = Placement::parse("worker:0").value();
    task.factory = compute_workload(desc);
    try {
        const TaskId id = runtime.register_task(task);
        EXPECT_EQ(runtime.unregister_task(id), TaskError::None);
    } catch (const Error& e) {
        return std::string(e.what()) + " | " + e.hint();
    }
    return "(registered)";
}

class ComputeRefusalTest : public RuntimeTest {
protected:
    static constexpr std::uint32_t k_w = 13;
    static constexpr std::uint32_t k_h = 11;

    // Registers fill.comp on `placement`, runs one job of `colour` and checks every texel.
    void expect_a_valid_task_runs(Runtime& runtime, harness::LeaseReader& reader,
                                  std::uint32_t colour, const std::string& placement) {
        TaskDesc desc = pattern_task(placement, k_w, k_h);
        desc.name = "fill after refusal";
        desc.factory = compute_workload(compute_desc("fill", {4}));
        const TaskId task = runtime.register_task(desc);
        std::byte bytes[4];
        std::memcpy(bytes, &colour, 4);
        expect_first_output_filled(runtime, reader, task, bytes, colour, k_w, k_h);
    }
};

struct Mismatch {
    const char* shader;
    std::vector<std::uint32_t> input_bytes;
    std::vector<const char*> says; // every phrase the refusal must contain
};

TEST_F(ComputeRefusalTest, EachMismatchIsRefusedNamingTheBindingAndTheRuntimeGoesOn) {
    const std::vector<Mismatch> rows = {
        {"refuse_sampler_without_inputs",
         {},
         {"a combined image sampler (sampler2D 'source') at set 0, binding 1",
          "the description has nothing there: it declares no inputs", "and the task no inputs",
          "Remove binding 1 from the shader"}},
        {"refuse_input_in_set_1",
         {4},
         {"a storage buffer", "at set 1, binding 1", "Tandem binds descriptor set 0 alone"}},
        {"refuse_uniform_input",
         {16},
         {"a uniform buffer", "at set 0, binding 1",
          "the description has input 1 there, one storage buffer of 16 bytes"}},
        {"refuse_input_array",
         {4},
         {"at set 0, binding 1 as an array of 2 descriptors",
          "the description has input 1 there, one storage buffer of 4 bytes"}},
        {"refuse_undeclared_binding",
         {4},
         {"a storage buffer (Mask 'input_mask') at set 0, binding 7",
          "nothing there: it declares 1 input, at binding 1, and the task no inputs"}},
    };
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_w, k_h);
    std::uint32_t colour = 0x10203040u;
    for (const Mismatch& row : rows) {
        const std::string why = refusal(*runtime, compute_desc(row.shader, row.input_bytes));
        for (const char* phrase : row.says) {
            EXPECT_NE(why.find(phrase), std::string::npos)
                << row.shader << ": '" << phrase << "' not in: " << why;
        }
        colour += 0x01010101u;
        expect_a_valid_task_runs(*runtime, *reader, colour, "worker:0");
    }
    expect_a_valid_task_runs(*runtime, *reader, 0xff00ff00u, "primary");
}

// The output's format qualifier is checked against the task's format when the task is
// registered: an rgba32f image for an RGBA8 task is refused there, on every placement.
TEST_F(ComputeRefusalTest, AnOutputFormatTheTaskCannotHaveIsRefusedAtRegistration) {
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_w, k_h);
    const WorkloadFactory factory = compute_workload(compute_desc("refuse_rgba32f_output", {}));
    for (const std::string placement : {"worker:0", "primary"}) {
        TaskDesc desc = pattern_task(placement, k_w, k_h);
        desc.factory = factory;
        std::string why = "(registered)";
        try {
            (void)runtime->register_task(desc);
        } catch (const Error& e) {
            why = e.what();
        }
        EXPECT_NE(why.find("declares its output (set 0, binding 0) as a rgba32f storage image; "
                           "the task's output has format RGBA8"),
                  std::string::npos)
            << placement << ": " << why;
        expect_a_valid_task_runs(*runtime, *reader, 0x0a0b0c0du, placement);
    }
}

// The valid module, the same shaders' control: accepted, and its output exact.
TEST_F(ComputeRefusalTest, TheMatchingModuleIsAccepted) {
    EXPECT_EQ(refusal(compute_desc("fill", {4})), "(accepted)");
    EXPECT_NE(refusal(compute_desc("fill", {8})).find("declares input 1 (binding 1) as 4 bytes"),
              std::string::npos);
    // Without the buffer, binding 1 would be the task's first input: a task with none refuses.
    auto runtime = make_runtime("1");
    EXPECT_NE(refusal(*runtime, compute_desc("fill", {})).find("at set 0, binding 1"),
              std::string::npos);
}

} // namespace
} // namespace tandem::test
