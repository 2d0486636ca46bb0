// Compute tasks from the application's SPIR-V (tandem/compute.hpp): a module compiled from
// tests/runtime/shaders/palette.comp, with push constants and two input buffers from each job's
// bytes, gives the CPU reference's bytes exactly on the primary and on a worker; every module
// or description that does not fit is refused at registration with its sentence; a job whose
// bytes do not add up is refused by submit() with one, and the next good job runs.
#include <cstring>

#include <gtest/gtest.h>

#include "runtime_fixture.hpp"
#include "spirv_file.hpp"
#include "tandem/compute.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_w = 37; // not a multiple of the 8x4 workgroup
constexpr std::uint32_t k_h = 29;
constexpr std::uint32_t k_count = 5; // palette entries

std::vector<std::uint32_t> palette_module() {
    return read_spirv_file(TANDEM_TEST_SHADER);
}

ComputeTaskDesc palette_desc() {
    ComputeTaskDesc d;
    d.spirv = palette_module();
    d.workgroup_size = {8, 4, 1};
    d.push_constant_bytes = 8;        // generation, count
    d.input_bytes = {4 * k_count, 4}; // the palette, the offset
    return d;
}

// One job's bytes: push constants (generation, count), the palette, the offset.
std::vector<std::byte> job_bytes(std::uint32_t generation, const std::uint32_t (&palette)[k_count],
                                 std::uint32_t offset) {
    std::vector<std::byte> out(8 + sizeof palette + 4);
    const std::uint32_t push[2] = {generation, k_count};
    std::memcpy(out.data(), push, 8);
    std::memcpy(out.data() + 8, palette, sizeof palette);
    std::memcpy(out.data() + 8 + sizeof palette, &offset, 4);
    return out;
}

std::string refusal(const ComputeTaskDesc& desc) {
    try {
        (void)compute_workload(desc);
    } catch (const Error& e) {
        return e.what();
    }
    return "(accepted)";
}

class ComputeTaskTest : public RuntimeTest {};

TEST_F(ComputeTaskTest, MatchesTheCpuReferenceOnThePrimaryAndOnAWorker) {
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_w, k_h);
    const std::uint32_t palette[k_count] = {0xff0000ffu, 0x80ff8000u, 0x00000000u, 0xffffffffu,
                                            0x12345678u};
    for (const std::string placement : {"primary", "worker:0"}) {
        TaskDesc desc = pattern_task(placement, k_w, k_h);
        desc.name = "palette-" + placement;
        desc.factory = compute_workload(palette_desc());
        const TaskId task = runtime->register_task(desc);
        for (std::uint32_t g = 1; g <= 3; ++g) {
            const std::uint32_t offset = 7 * g;
            const auto bytes = job_bytes(g, palette, offset);
            ASSERT_TRUE(
                pump_until(*runtime, [&] { return runtime->submit(task, bytes).accepted(); }));
            ASSERT_TRUE(pump_until(*runtime, [&] {
                return runtime->stats(task).newest_generation == g;
            })) << runtime->stats(task).workload_error;
            auto lease = runtime->acquire(task);
            ASSERT_TRUE(lease);
            std::uint64_t v = 0;
            const auto px = read_back(*reader, *lease, v);
            runtime->release(*lease, v);
            ASSERT_EQ(px.size(), std::size_t{k_w} * k_h * 4);
            for (std::uint32_t y = 0; y < k_h; ++y) {
                for (std::uint32_t x = 0; x < k_w; ++x) {
                    std::uint32_t texel = 0;
                    std::memcpy(&texel, px.data() + (std::size_t{y} * k_w + x) * 4, 4);
                    ASSERT_EQ(texel, palette[(x + y + g + offset) % k_count])
                        << placement << " generation " << g << " at " << x << "," << y;
                }
            }
        }
    }
}

TEST_F(ComputeTaskTest, ModulesThatDoNotFitAreRefusedWithTheirSentence) {
    ComputeTaskDesc d = palette_desc();
    d.spirv.clear();
    EXPECT_NE(refusal(d).find("is empty"), std::string::npos) << refusal(d);
    d.spirv = {0x07230203u, 1, 2, 3, 4};
    EXPECT_NE(refusal(d).find("is not valid for Vulkan 1.3 (SPIRV-Tools:"), std::string::npos)
        << refusal(d);
    d = palette_desc();
    d.entry_point = "nope";
    EXPECT_NE(refusal(d).find("has no compute entry point 'nope' (it has: main)"),
              std::string::npos)
        << refusal(d);
    d = palette_desc();
    d.workgroup_size = {16, 4, 1};
    EXPECT_NE(refusal(d).find("declares workgroup size 8x4x1, the description 16x4x1"),
              std::string::npos)
        << refusal(d);
    d = palette_desc();
    d.push_constant_bytes = 4;
    EXPECT_NE(refusal(d).find("push-constant block of 8 bytes; the description says 4"),
              std::string::npos)
        << refusal(d);
    d = palette_desc();
    d.input_bytes = {4 * k_count + 2, 4}; // not whole palette entries
    EXPECT_NE(refusal(d).find("declares input 1 (binding 1) as 0 bytes plus elements of 4"),
              std::string::npos)
        << refusal(d);
    d = palette_desc();
    d.input_bytes = {4 * k_count, 8}; // the offset block is 4 bytes
    EXPECT_NE(refusal(d).find("declares input 2 (binding 2) as 4 bytes; the description gives "
                              "it 8"),
              std::string::npos)
        << refusal(d);
    d = palette_desc();
    d.input_bytes = {4 * k_count};
    {
        // Binding 2 past the one buffer would be the task's first input: a task with none
        // refuses it when registered.
        auto runtime = make_runtime("1");
        TaskDesc task = pattern_task("worker:0", k_w, k_h);
        task.factory = compute_workload(d);
        std::string why = "(registered)";
        try {
            (void)runtime->register_task(task);
        } catch (const Error& e) {
            why = e.what();
        }
        EXPECT_NE(why.find("at set 0, binding 2; the description has nothing there: it declares 1 "
                           "input, at binding 1, and the task no inputs"),
                  std::string::npos)
            << why;
    }
    d = palette_desc();
    d.input_bytes.assign(9, 4);
    EXPECT_NE(refusal(d).find("Use at most 8 storage buffers"), std::string::npos) << refusal(d);
    EXPECT_EQ(refusal(palette_desc()), "(accepted)");
}

// A job of the wrong size is refused by submit() with the sentence, and nothing changes: the
// next good job gets the next generation and its exact output.
TEST_F(ComputeTaskTest, AJobWhoseBytesDoNotAddUpIsRefusedAndTheNextOneRuns) {
    auto runtime = make_runtime("1");
    auto reader = make_reader(*runtime, k_w, k_h);
    const std::uint32_t palette[k_count] = {0x11223344u, 0x55667788u, 0x99aabbccu, 0xddeeff00u,
                                            0x01020304u};
    TaskDesc desc = pattern_task("worker:0", k_w, k_h);
    desc.factory = compute_workload(palette_desc());
    const TaskId task = runtime->register_task(desc);
    const std::byte short_job[8] = {};
    const SubmitResult refused = runtime->submit(task, short_job);
    EXPECT_EQ(refused.status, SubmitStatus::Failed);
    EXPECT_EQ(refused.error, TaskError::BadBytes);
    EXPECT_NE(refused.reason.find(
                  "submitted 8 bytes; it takes 8 push-constant bytes and its inputs, 32 in all"),
              std::string::npos)
        << refused.reason;
    const TaskStats after = runtime->stats(task);
    EXPECT_EQ(after.accepted, 0u);
    EXPECT_EQ(after.failed, 1u);
    EXPECT_EQ(after.failed_jobs, 0u) << "a refused job never ran";
    EXPECT_FALSE(after.stopped);
    const auto bytes = job_bytes(1, palette, 3);
    const SubmitResult good = runtime->submit(task, bytes);
    ASSERT_TRUE(good.accepted()) << good.reason;
    EXPECT_EQ(good.generation, 1u) << "the refused job took no generation";
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready == 1; }));
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    std::uint64_t v = 0;
    const auto px = read_back(*reader, *lease, v);
    runtime->release(*lease, v);
    ASSERT_EQ(px.size(), std::size_t{k_w} * k_h * 4);
    for (std::uint32_t y = 0; y < k_h; ++y) {
        for (std::uint32_t x = 0; x < k_w; ++x) {
            std::uint32_t texel = 0;
            std::memcpy(&texel, px.data() + (std::size_t{y} * k_w + x) * 4, 4);
            ASSERT_EQ(texel, palette[(x + y + 1 + 3) % k_count]) << x << "," << y;
        }
    }
    EXPECT_FALSE(runtime->stats(task).worker_lost);
}

} // namespace
} // namespace tandem::test
