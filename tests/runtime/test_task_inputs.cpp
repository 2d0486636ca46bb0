// Task inputs (tandem/input.hpp) through the public API: an application's images on the primary
// reach a task's job byte for byte on the primary and on a worker over every transfer path the
// pair allows in the primary -> worker direction, for every input format; the application may
// write its image again as soon as the input timeline passes the submit's value, and that never
// changes a job's result (each job's input is poisoned after it is read, so a stale or missing
// arrival shows); refusals say what was wrong. On lavapipe opened three times, under the
// fixture's validation (synchronisation validation in the test job).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app_image.hpp"
#include "core/capabilities.hpp"
#include "core/resources.hpp"
#include "core/vk_check.hpp"
#include "runtime/compute_copy.hpp"
#include "runtime/task_inputs.hpp"
#include "runtime_fixture.hpp"

namespace tandem::test {
namespace {

constexpr std::uint32_t k_width = 40;
constexpr std::uint32_t k_height = 24;

std::uint32_t texel_bytes(VkFormat format) {
    return detail::bytes_per_texel(format);
}

// Input bytes of round `round`: every byte different from its neighbours and from the round
// before.
std::vector<std::uint8_t> round_bytes(std::uint64_t round, std::size_t size) {
    std::vector<std::uint8_t> out(size);
    std::uint32_t x = static_cast<std::uint32_t>(round * 2654435761u) ^ 0x9e3779b9u;
    for (std::size_t i = 0; i < size; ++i) {
        x = x * 1664525u + 1013904223u;
        out[i] = static_cast<std::uint8_t>(x >> 24);
    }
    return out;
}

// Every earlier access of the image (and of the buffer) before every later one.
void barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from, VkImageLayout to) {
    VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    b.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    b.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT | VK_ACCESS_2_MEMORY_READ_BIT;
    b.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    b.dstAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT | VK_ACCESS_2_MEMORY_READ_BIT;
    b.oldLayout = from;
    b.newLayout = to;
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = image;
    b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkMemoryBarrier2 m{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    m.srcStageMask = b.srcStageMask;
    m.srcAccessMask = b.srcAccessMask;
    m.dstStageMask = b.dstStageMask;
    m.dstAccessMask = b.dstAccessMask;
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.memoryBarrierCount = 1;
    dep.pMemoryBarriers = &m;
    dep.imageMemoryBarrierCount = 1;
    dep.pImageMemoryBarriers = &b;
    vkCmdPipelineBarrier2(cmd, &dep);
}

// The application's workload: copies its one input, bit for bit, into the task's RGBA8 output
// (as wide as the input's bytes need), then poisons the input so that a later job that read it
// without a new arrival would show it.
class CopyInput final : public Workload {
public:
    explicit CopyInput(const WorkerContext& context) : m_device(context.device) {
        const TaskInputDesc& in = context.inputs.at(0);
        m_bytes = VkDeviceSize{in.width} * in.height * texel_bytes(in.format);
        VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        info.size = m_bytes;
        info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        if (vkCreateBuffer(m_device, &info, nullptr, &m_buffer) != VK_SUCCESS) {
            throw Error("creating the test buffer failed", "");
        }
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(m_device, m_buffer, &req);
        const auto type =
            context.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
        VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        alloc.allocationSize = req.size;
        alloc.memoryTypeIndex = type.value_or(0);
        if (vkAllocateMemory(m_device, &alloc, nullptr, &m_memory) != VK_SUCCESS ||
            vkBindBufferMemory(m_device, m_buffer, m_memory, 0) != VK_SUCCESS) {
            throw Error("allocating the test buffer failed", "");
        }
    }
    ~CopyInput() override {
        vkDestroyBuffer(m_device, m_buffer, nullptr);
        vkFreeMemory(m_device, m_memory, nullptr);
    }
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        if (job.inputs.empty()) {
            throw Error("the job has no inputs", "");
        }
        const JobInput& in = job.inputs[0];
        barrier(job.cmd, in.image, in.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {in.extent.width, in.extent.height, 1};
        vkCmdCopyImageToBuffer(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_buffer, 1,
                               &region);
        // Poison what arrived: the next job must read its own input.
        barrier(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
        const VkClearColorValue poison{{0.25f, 0.5f, 0.75f, 1.0f}};
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &poison, 1,
                             &range);
        barrier(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, in.layout);
        barrier(job.cmd, job.image, job.initial_layout, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
        VkBufferImageCopy out{};
        out.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        out.imageExtent = {job.extent.width, job.extent.height, 1};
        vkCmdCopyBufferToImage(job.cmd, m_buffer, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                               1, &out);
    }

private:
    VkDevice m_device;
    VkDeviceSize m_bytes = 0;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
};

// The same for a buffer input: copies the buffer's bytes into the task's RGBA8 output (one
// row, a texel per 4 bytes), then poisons the buffer.
class CopyBufferInput final : public Workload {
public:
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        if (job.inputs.size() != 1 || job.inputs[0].buffer == VK_NULL_HANDLE ||
            job.inputs[0].image != VK_NULL_HANDLE) {
            throw Error("the job's input is not one buffer", "");
        }
        const JobInput& in = job.inputs[0];
        if (in.size != VkDeviceSize{job.extent.width} * job.extent.height * 4) {
            throw Error("the input buffer has " + std::to_string(in.size) + " bytes", "");
        }
        detail::image_barrier(job.cmd, job.image, job.initial_layout,
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE,
                              VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        VkBufferImageCopy out{};
        out.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        out.imageExtent = {job.extent.width, job.extent.height, 1};
        vkCmdCopyBufferToImage(job.cmd, in.buffer, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                               1, &out);
        // Poison what arrived: the next job must read its own input.
        detail::memory_barrier(job.cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                               VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                               VK_ACCESS_2_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(job.cmd, in.buffer, 0, in.size, 0xdeadbeefu);
    }
};

// What each job of a JournalInput task read, by generation: filled as the jobs are seen
// complete, so that a test checks every job's inputs, not only the outputs it acquires.
struct InputJournal {
    std::mutex mutex;
    std::map<std::uint64_t, std::vector<std::uint8_t>> read; // generation -> its inputs' bytes
    [[nodiscard]] std::optional<std::vector<std::uint8_t>> of(std::uint64_t generation) {
        std::lock_guard lock(mutex);
        const auto it = read.find(generation);
        return it == read.end() ? std::nullopt : std::optional(it->second);
    }
};

// The application's workload for streams of two inputs, an image and a buffer: copies both,
// bit for bit, into an entry of host-visible memory of its device (one per generation, modulo
// k_entries) and the image's bytes on into the task's RGBA8 output, then poisons both inputs
// as CopyInput does; completed() keeps each entry in the journal.
class JournalInput final : public Workload {
public:
    static constexpr std::uint64_t k_entries = 32;

    JournalInput(const WorkerContext& context, std::shared_ptr<InputJournal> journal)
        : m_device(context.device), m_journal(std::move(journal)) {
        const TaskInputDesc& image = context.inputs.at(0);
        m_image_bytes = VkDeviceSize{image.width} * image.height * texel_bytes(image.format);
        m_entry = m_image_bytes + context.inputs.at(1).buffer_size;
        VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        info.size = m_entry * k_entries;
        info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        if (vkCreateBuffer(m_device, &info, nullptr, &m_buffer) != VK_SUCCESS) {
            throw Error("creating the journal failed", "");
        }
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(m_device, m_buffer, &req);
        const auto type = context.find_memory_type(
            req.memoryTypeBits,
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
        VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        alloc.allocationSize = req.size;
        alloc.memoryTypeIndex = type.value_or(0);
        void* mapped = nullptr;
        if (!type || vkAllocateMemory(m_device, &alloc, nullptr, &m_memory) != VK_SUCCESS ||
            vkBindBufferMemory(m_device, m_buffer, m_memory, 0) != VK_SUCCESS ||
            vkMapMemory(m_device, m_memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS) {
            vkDestroyBuffer(m_device, m_buffer, nullptr);
            vkFreeMemory(m_device, m_memory, nullptr);
            throw Error("allocating the journal failed", "");
        }
        m_mapped = static_cast<const std::uint8_t*>(mapped);
    }
    ~JournalInput() override {
        vkDestroyBuffer(m_device, m_buffer, nullptr);
        vkFreeMemory(m_device, m_memory, nullptr);
    }
    VkImageUsageFlags target_usage() const override { return VK_IMAGE_USAGE_TRANSFER_DST_BIT; }
    WorkloadOutput output() const override {
        return {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT};
    }
    void record(const RecordContext& job) override {
        if (job.inputs.size() != 2 || job.inputs[1].buffer == VK_NULL_HANDLE) {
            throw Error("the job's inputs are not an image and a buffer", "");
        }
        const JobInput& in = job.inputs[0];
        const JobInput& bytes = job.inputs[1];
        const VkDeviceSize at = (job.generation % k_entries) * m_entry;
        barrier(job.cmd, in.image, in.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        VkBufferImageCopy region{};
        region.bufferOffset = at;
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {in.extent.width, in.extent.height, 1};
        vkCmdCopyImageToBuffer(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_buffer, 1,
                               &region);
        const VkBufferCopy rest{0, at + m_image_bytes, bytes.size};
        vkCmdCopyBuffer(job.cmd, bytes.buffer, m_buffer, 1, &rest);
        // Poison what arrived: the next job must read its own inputs.
        barrier(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
        const VkClearColorValue poison{{0.25f, 0.5f, 0.75f, 1.0f}};
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &poison, 1,
                             &range);
        vkCmdFillBuffer(job.cmd, bytes.buffer, 0, bytes.size, 0xdeadbeefu);
        barrier(job.cmd, in.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, in.layout);
        barrier(job.cmd, job.image, job.initial_layout, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
        VkBufferImageCopy out{};
        out.bufferOffset = at;
        out.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        out.imageExtent = {job.extent.width, job.extent.height, 1};
        vkCmdCopyBufferToImage(job.cmd, m_buffer, job.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                               1, &out);
        // The entry's bytes for the host, which reads them once the job completed.
        detail::memory_barrier(job.cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                               VK_ACCESS_2_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                               VK_ACCESS_2_HOST_READ_BIT);
    }
    void completed(std::uint32_t /*slot*/, std::uint64_t generation) noexcept override {
        const std::uint8_t* entry = m_mapped + (generation % k_entries) * m_entry;
        try {
            std::lock_guard lock(m_journal->mutex);
            m_journal->read[generation].assign(entry, entry + m_entry);
        } catch (...) {
            ADD_FAILURE() << "out of memory keeping generation " << generation;
        }
    }

private:
    VkDevice m_device;
    std::shared_ptr<InputJournal> m_journal;
    VkDeviceSize m_image_bytes = 0;
    VkDeviceSize m_entry = 0;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
    const std::uint8_t* m_mapped = nullptr;
};

class TaskInputs : public RuntimeTest {
protected:
    // A copy task with one input of `format`, placed on `placement`; its RGBA8 output holds the
    // input's bytes.
    static TaskDesc copy_task(VkFormat format, const std::string& placement) {
        TaskDesc d;
        d.name = "copy-input";
        d.width = k_width * texel_bytes(format) / 4;
        d.height = k_height;
        d.placement = Placement::parse(placement).value();
        d.inputs = {{"image", format, k_width, k_height}};
        d.factory = [](const WorkerContext& c) { return std::make_unique<CopyInput>(c); };
        return d;
    }

    // The bytes of `task`'s first output (an RGBA8 image of at most k_width x k_height), once
    // it is ready; empty, with a failure, when none comes.
    static std::vector<std::uint8_t> first_output(Runtime& runtime, TaskId task) {
        if (!pump_until(runtime, [&] { return runtime.stats(task).ready >= 1; })) {
            ADD_FAILURE() << "no output: " << runtime.stats(task).workload_error;
            return {};
        }
        harness::LeaseReader reader(runtime, 2, k_width, k_height);
        const auto lease = runtime.acquire(task);
        if (!lease) {
            ADD_FAILURE() << "a ready output was not acquirable";
            return {};
        }
        std::uint64_t v = 0;
        std::vector<std::uint8_t> bytes = read_back(reader, *lease, v);
        runtime.release(*lease, v);
        return bytes;
    }

    // A copy task on a worker with `slots` slots, and two loans of it.
    struct TwoLoans {
        TaskId task;
        LendResult a;
        LendResult b;
    };
    static TwoLoans lend_two(Runtime& runtime, std::uint32_t slots) {
        TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker");
        d.slots = slots;
        TwoLoans out;
        out.task = runtime.register_task(d);
        out.a = runtime.lend_inputs(out.task);
        out.b = runtime.lend_inputs(out.task);
        return out;
    }

    // How a round's image reaches the task: the application's own, copied; the image Tandem
    // lends (Runtime::lend_inputs); or that image with the loan's semaphore signalled by the
    // application's writes, so that the submit submits nothing.
    enum class Lend { No, Yes, Signalled };

    // Rounds of: write the image (as soon as the last submit's inputs were released), submit,
    // pump, and check every output acquired against the bytes its generation was given.
    // Returns the outputs checked.
    // With `lend`, each round writes the image Tandem lends (Runtime::lend_inputs) instead.
    int run_rounds(Runtime& runtime, detail::Device& app, TaskId task, VkFormat format, int rounds,
                   Lend lend = Lend::No) {
        AppImage image(app, runtime, format, k_width, k_height);
        if (m_queue_handed_over) {
            image.wait_on_host();
        }
        if (m_name_views) {
            image.name_view();
        }
        const std::size_t size = std::size_t{k_width} * k_height * texel_bytes(format);
        return run_rounds(runtime, task, image, size, {k_width * 2, k_height}, rounds, lend);
    }

    // The same with the application's side given: `size` bytes a round, outputs read back at
    // most `output` large.
    int run_rounds(Runtime& runtime, TaskId task, AppImage& image, std::size_t size,
                   VkExtent2D output, int rounds, Lend lend = Lend::No) {
        harness::LeaseReader reader(runtime, 2, output.width, output.height);
        std::map<std::uint64_t, std::uint64_t> round_of; // generation -> round
        std::uint64_t released = 0;
        // From where the task is: its generations go on, its last output was checked before.
        std::uint64_t last_generation = runtime.stats(task).accepted;
        std::uint64_t shown = runtime.stats(task).newest_generation;
        int checked = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
        std::uint64_t round = 1;
        std::optional<InputImage> input;
        if (lend == Lend::No) {
            input = image.write(round_bytes(round, size), released);
        }
        while (static_cast<int>(round_of.size()) < rounds && !HasFailure() &&
               std::chrono::steady_clock::now() < deadline) {
            if (!input) {
                const LendResult l = runtime.lend_inputs(task);
                if (l.lent()) {
                    EXPECT_EQ(l.loan.inputs.size(), 1u);
                    released = std::max(released, l.loan.writable);
                    input =
                        image.write_lent(round_bytes(round, size), l.loan, lend == Lend::Signalled);
                } else {
                    EXPECT_NE(l.status, SubmitStatus::Failed) << l.reason;
                }
            }
            const SubmitResult r = input ? runtime.submit(task, {}, std::span(&*input, 1))
                                         : SubmitResult{{}, SubmitStatus::Busy};
            if (r.accepted()) {
                EXPECT_EQ(r.generation, last_generation + 1) << "generations are consecutive";
                last_generation = r.generation;
                if (lend == Lend::Signalled) {
                    EXPECT_EQ(r.inputs_released, 0u) << "the submit submitted nothing";
                } else {
                    EXPECT_GT(r.inputs_released, released);
                    released = r.inputs_released;
                }
                round_of[r.generation] = round;
                ++round;
                // At once: Tandem has its own copy of the image (or lends the next).
                input.reset();
                if (lend == Lend::No) {
                    input = image.write(round_bytes(round, size), released);
                }
            } else {
                EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
            }
            runtime.pump();
            if (auto lease = runtime.acquire(task)) {
                EXPECT_GE(lease->generation, shown);
                std::uint64_t v = 0;
                if (lease->generation > shown) {
                    const auto px = read_back(reader, *lease, v);
                    const auto it = round_of.find(lease->generation);
                    EXPECT_NE(it, round_of.end());
                    if (it != round_of.end()) {
                        const auto want = round_bytes(it->second, size);
                        EXPECT_EQ(px.size(), want.size());
                        EXPECT_TRUE(px == want) << "generation " << lease->generation
                                                << " does not hold its round's input bytes";
                        ++checked;
                    }
                    shown = lease->generation;
                }
                runtime.release(*lease, v);
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
        }
        // The last outputs too (a job that failed makes none: the newest is what counts).
        EXPECT_TRUE(pump_until(
            runtime, [&] { return runtime.stats(task).newest_generation >= last_generation; }));
        image.finish(released);
        return checked;
    }

    // The runtime is handed the queue alone (RuntimeTest::hand_over_queue): its input copies
    // leave the application's thread, and the test's writes wait for them on the host.
    void hand_over_queue_and_wait_on_host() {
        hand_over_queue();
        m_queue_handed_over = true;
    }

    // Each submit names the application image's view (InputImage::view).
    void name_views() noexcept { m_name_views = true; }

private:
    bool m_queue_handed_over = false;
    bool m_name_views = false;
};

struct InputCase {
    std::string placement; // "primary" or "worker"
    std::string path;      // forced transfer path on a worker ("" on the primary)
    VkFormat format;
    // RuntimeOptions::cpu_reads_inputs_in_place and cpu_writes_outputs_in_place off: a CPU
    // device copies what crosses too.
    bool copied_on_cpu = false;
    // The application's image declared sampleable (TaskInputDesc::application_usage): the
    // primary copies it with a compute dispatch where it can.
    bool by_compute = false;
};

std::string case_name(const ::testing::TestParamInfo<InputCase>& info) {
    std::string name = info.param.placement + "_" +
                       (info.param.path.empty() ? std::string("local") : info.param.path) + "_" +
                       detail::format_name(info.param.format) +
                       (info.param.copied_on_cpu ? "_copied_on_cpu" : "") +
                       (info.param.by_compute ? "_by_compute" : "");
    for (char& c : name) {
        c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    return name;
}

class TaskInputPaths : public TaskInputs, public ::testing::WithParamInterface<InputCase> {
protected:
    // 24 rounds of the case's input (written by the application, or with `lend` into the
    // images Tandem lends), each output checked byte for byte; skipped where the pair has no
    // such path.
    void run_case(const InputCase& c, Lend lend, bool own_queue = false) {
        RuntimeOptions options;
        if (own_queue) {
            hand_over_queue_and_wait_on_host();
        }
        if (!c.path.empty()) {
            const auto pair = detail::query_pair_info(adapters()[0].info, adapters()[1].info);
            const auto path = parse_transfer_path(c.path);
            ASSERT_TRUE(path);
            if (!pair.allows(*path)) {
                GTEST_SKIP() << c.path << " is not available from the primary to a worker here";
            }
            options.transfer_path = c.path;
        }
        options.cpu_reads_inputs_in_place = !c.copied_on_cpu;
        options.cpu_writes_outputs_in_place = !c.copied_on_cpu;
        // Chosen on every device here: Auto keeps the copy command on a CPU device (below).
        options.input_copies = RuntimeOptions::InputCopies::Compute;
        auto runtime = make_runtime(c.placement == "primary" ? "none" : "1", options);
        TaskDesc d = copy_task(c.format, c.placement);
        if (lend != Lend::No) {
            d.inputs[0].usage =
                VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        }
        if (c.by_compute) {
            d.inputs[0].application_usage = VK_IMAGE_USAGE_SAMPLED_BIT |
                                            VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                            VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        }
        const TaskId task = runtime->register_task(d);
        // Storage RGBA8 is required of every device: its compute copy is there everywhere.
        const bool compute = c.by_compute && detail::copies_by_compute(app_device(), c.format);
        if (c.by_compute && c.format == VK_FORMAT_R8G8B8A8_UNORM) {
            EXPECT_TRUE(compute);
        }
        EXPECT_EQ(runtime->stats(task).inputs_copied_by_compute, compute ? 1u : 0u);
        EXPECT_EQ(detail::RuntimeAccess::impl(*runtime).input_copies_deferred(), own_queue);
        EXPECT_EQ(runtime->stats(task).input_path, c.path.empty() ? "same-device" : c.path);
        // A CPU device reads what crosses on the host-imported path in place (lavapipe's
        // linear images fit the staging's rows at these sizes), unless told not to.
        const bool cpu_worker = adapters().size() > 1 && adapters()[1].info.type == "cpu";
        EXPECT_EQ(runtime->stats(task).inputs_read_in_place,
                  c.path == "host-imported" && cpu_worker && !c.copied_on_cpu);
        // Its outputs, written in place there, come back byte for byte all the same.
        EXPECT_EQ(runtime->stats(task).outputs_written_in_place,
                  c.path == "host-imported" && cpu_worker && !c.copied_on_cpu);
        EXPECT_GE(run_rounds(*runtime, app_device(), task, c.format, 24, lend), 3)
            << runtime->stats(task).workload_error;
        const TaskStats s = runtime->stats(task);
        EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
        EXPECT_EQ(s.accepted, s.ready + s.superseded);
        if (lend != Lend::No) {
            EXPECT_EQ(s.lent_submits, s.accepted);
            EXPECT_EQ(s.input_copies, 0u) << "a lent image is never copied on the primary";
            EXPECT_EQ(s.lent_signalled_submits, lend == Lend::Signalled ? s.accepted : 0u);
        } else {
            EXPECT_EQ(s.input_copies, s.accepted);
        }
    }
};

TEST_P(TaskInputPaths, ArriveByteForByteAndTheImageMayBeRewrittenOnceReleased) {
    run_case(GetParam(), Lend::No);
}

// Each of `formats` on the primary and over every path to a worker.
std::vector<InputCase> input_cases(std::initializer_list<VkFormat> formats) {
    std::vector<InputCase> out;
    for (VkFormat f : formats) {
        out.push_back({"primary", "", f});
        for (const char* path : {"zero-copy", "shared-memory", "host-imported", "host-copy"}) {
            out.push_back({"worker", path, f});
        }
        out.push_back({"worker", "host-imported", f, true});
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(
    EveryPathAndFormat, TaskInputPaths,
    ::testing::ValuesIn(input_cases({VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_B8G8R8A8_UNORM,
                                     VK_FORMAT_R16G16B16A16_SFLOAT, VK_FORMAT_R16G16_SFLOAT,
                                     VK_FORMAT_R32_SFLOAT})),
    case_name);

// The same, each application image declared sampleable: RGBA8 and BGRA8 inputs are copied on
// the primary by a compute dispatch, and arrive byte for byte all the same (the rounds' bytes
// are every value of every channel), on Tandem's own queue too; lent images are not copied.
class TaskInputsCopiedByCompute : public TaskInputPaths {};

TEST_P(TaskInputsCopiedByCompute, ArriveByteForByte) {
    run_case(GetParam(), Lend::No);
}

TEST_P(TaskInputsCopiedByCompute, ArriveByteForByteFromTandemsOwnQueue) {
    run_case(GetParam(), Lend::No, true);
}

TEST_P(TaskInputsCopiedByCompute, ArriveByteForByteReadThroughTheApplicationsView) {
    name_views();
    run_case(GetParam(), Lend::No);
}

TEST_P(TaskInputsCopiedByCompute, LentAreNotCopied) {
    run_case(GetParam(), Lend::Yes);
}

std::vector<InputCase> compute_cases() {
    std::vector<InputCase> out = input_cases({VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_B8G8R8A8_UNORM});
    for (InputCase& c : out) {
        c.by_compute = true;
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(EveryPath, TaskInputsCopiedByCompute, ::testing::ValuesIn(compute_cases()),
                         case_name);

// Which copy an input declared sampleable gets: Auto makes it a compute dispatch on a GPU and
// keeps the copy command (a memcpy) on a CPU device; CopyCommand keeps it everywhere; an input
// not declared sampleable, or of a float format, is never copied by compute.
TEST_F(TaskInputs, TheComputeCopyIsChosenByTheDeviceAndTheFormat) {
    const bool gpu = adapters()[0].info.type != "cpu";
    for (const auto method :
         {RuntimeOptions::InputCopies::Auto, RuntimeOptions::InputCopies::CopyCommand,
          RuntimeOptions::InputCopies::Compute}) {
        RuntimeOptions options;
        options.input_copies = method;
        auto runtime = make_runtime("none", options);
        TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "primary");
        d.inputs = {{"colour", VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height},
                    {"depth", VK_FORMAT_R32_SFLOAT, k_width, k_height},
                    {"plain", VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height}};
        d.inputs[0].application_usage = VK_IMAGE_USAGE_SAMPLED_BIT;
        d.inputs[1].application_usage = VK_IMAGE_USAGE_SAMPLED_BIT;
        const TaskId task = runtime->register_task(d);
        ASSERT_TRUE(pump_until(*runtime, [&] { return !runtime->stats(task).preparing; }));
        const bool compute = method == RuntimeOptions::InputCopies::Compute ||
                             (method == RuntimeOptions::InputCopies::Auto && gpu);
        EXPECT_EQ(runtime->stats(task).inputs_copied_by_compute, compute ? 1u : 0u)
            << "method " << static_cast<int>(method);
    }
}

TEST_F(TaskInputs, RefusesTheApplicationsUsageWhereNoImageOfItIsTaken) {
    auto runtime = make_runtime("none");
    TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "primary");
    d.inputs = {{.name = "bytes", .buffer_size = 256}};
    d.inputs[0].application_usage = VK_IMAGE_USAGE_SAMPLED_BIT;
    try {
        (void)runtime->register_task(d);
        ADD_FAILURE() << "a buffer input with the application's image usage was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.category(), ErrorCategory::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("application_usage"), std::string::npos) << e.what();
    }
}

// Lent input images (Runtime::lend_inputs): the application writes Tandem's own image and the
// job reads exactly that, on every path, while nothing copies it on the primary; each job's
// input is poisoned after it is read, so a slot's image rewritten before its job read it, or
// read before its writes, shows.
class TaskLentInputPaths : public TaskInputPaths {};

TEST_P(TaskLentInputPaths, ArriveByteForByteAndNothingIsCopied) {
    run_case(GetParam(), Lend::Yes);
}

// The same with the application signalling each loan's own semaphore from its writes: the
// submit submits nothing, and the task's own batches (its job on the primary, its link
// elsewhere) wait for the writes and change the layout the application left.
TEST_P(TaskLentInputPaths, SignalledByTheApplicationArriveByteForByteAndNothingIsSubmitted) {
    run_case(GetParam(), Lend::Signalled);
}

INSTANTIATE_TEST_SUITE_P(
    EveryPath, TaskLentInputPaths,
    ::testing::ValuesIn(input_cases({VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_R32_SFLOAT})), case_name);

// A loan holds its slot until submitted or returned; returned, it is no longer held; every
// slot lent answers Busy; an image whose loan ended is refused; refusals change nothing.
// With a queue of its own, Tandem records and submits the copies on its input thread (submit
// only queues them): every output still holds its round's bytes, copied or lent, on the
// primary and over the paths to a worker.
class TaskInputsOnTandemsOwnQueue : public TaskInputPaths {};

TEST_P(TaskInputsOnTandemsOwnQueue, CopiedOffTheApplicationsThreadArriveByteForByte) {
    run_case(GetParam(), Lend::No, true);
}

TEST_P(TaskInputsOnTandemsOwnQueue, LentArriveByteForByte) {
    run_case(GetParam(), Lend::Yes, true);
}

INSTANTIATE_TEST_SUITE_P(
    CopiedOnTheInputThread, TaskInputsOnTandemsOwnQueue,
    ::testing::Values(InputCase{"primary", "", VK_FORMAT_R8G8B8A8_UNORM},
                      InputCase{"worker", "host-imported", VK_FORMAT_R8G8B8A8_UNORM},
                      InputCase{"worker", "host-copy", VK_FORMAT_R16G16B16A16_SFLOAT},
                      InputCase{"worker", "host-imported", VK_FORMAT_R32_SFLOAT, true}),
    case_name);

// Copies still queued on the input thread when the task goes, and when the runtime goes: each
// is submitted and runs before what it reads and writes is freed (validation sees every one).
TEST_F(TaskInputs, CopiesQueuedOnTheInputThreadRunBeforeTheirTaskOrRuntimeGoes) {
    hand_over_queue_and_wait_on_host();
    auto runtime = make_runtime("1");
    AppImage image(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    image.wait_on_host();
    const std::size_t size = std::size_t{k_width} * k_height * 4;
    std::uint64_t released = 0;
    for (int cycle = 0; cycle < 2; ++cycle) {
        TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, cycle == 0 ? "worker" : "primary");
        d.slots = 4;
        const TaskId task = runtime->register_task(d);
        int accepted = 0;
        for (int round = 1; accepted < 3 && round < 10000; ++round) {
            const InputImage input = image.write(round_bytes(round, size), released);
            const SubmitResult r = runtime->submit(task, {}, std::span(&input, 1));
            if (r.accepted()) {
                released = r.inputs_released;
                ++accepted;
            } else {
                EXPECT_NE(r.status, SubmitStatus::Failed) << r.reason;
                runtime->pump();
            }
        }
        EXPECT_EQ(accepted, 3);
        if (cycle == 0) {
            EXPECT_EQ(runtime->unregister_task(task), TaskError::None);
        }
    }
    // The primary task's last copies may still be queued or running: the runtime submits them
    // and waits for them before it frees anything.
    runtime.reset();
    image.finish(0);
}

TEST_F(TaskInputs, ALoanHoldsItsSlotUntilSubmittedOrReturned) {
    auto runtime = make_runtime("1");
    const auto [task, a, b] = lend_two(*runtime, 2);
    ASSERT_TRUE(a.lent()) << a.reason;
    ASSERT_TRUE(b.lent()) << b.reason;
    EXPECT_NE(a.loan.ticket, b.loan.ticket);
    EXPECT_NE(a.loan.inputs.at(0).image, b.loan.inputs.at(0).image);
    EXPECT_EQ(a.loan.inputs[0].format, VK_FORMAT_R8G8B8A8_UNORM);
    EXPECT_EQ(a.loan.inputs[0].extent.width, k_width);
    const LendResult none = runtime->lend_inputs(task);
    EXPECT_EQ(none.status, SubmitStatus::Busy);
    EXPECT_NE(none.reason.find("every slot"), std::string::npos) << none.reason;
    // Both slots lent: an ordinary submit finds none free.
    AppImage own(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    const std::size_t size = std::size_t{k_width} * k_height * 4;
    InputImage mine = own.write(round_bytes(1, size), std::max(a.loan.writable, b.loan.writable));
    EXPECT_EQ(runtime->submit(task, {}, std::span(&mine, 1)).status, SubmitStatus::Busy);
    EXPECT_EQ(runtime->return_inputs(task, a.loan), TaskError::None);
    EXPECT_EQ(runtime->return_inputs(task, a.loan), TaskError::LoanNotHeld);
    InputImage stale{a.loan.inputs[0].image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL};
    SubmitResult r = runtime->submit(task, {}, std::span(&stale, 1));
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("loan ended"), std::string::npos) << r.reason;
    // The returned slot takes an ordinary submit; the held one its own.
    SubmitResult ok;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        ok = runtime->submit(task, {}, std::span(&mine, 1));
        return ok.status != SubmitStatus::Busy;
    }));
    EXPECT_TRUE(ok.accepted()) << ok.reason;
    const InputImage lent = own.write_lent(round_bytes(2, size), b.loan);
    r = runtime->submit(task, {}, std::span(&lent, 1));
    EXPECT_TRUE(r.accepted()) << r.reason;
    EXPECT_EQ(runtime->return_inputs(task, b.loan), TaskError::LoanNotHeld);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready >= 2; }));
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.lent_submits, 1u);
    EXPECT_EQ(s.input_copies, 1u);
    own.finish(std::max(ok.inputs_released, r.inputs_released));
    // A task without an image input of the application's lends nothing.
    TaskDesc plain;
    plain.name = "plain";
    const TaskId p = runtime->register_task(plain);
    const LendResult refused = runtime->lend_inputs(p);
    EXPECT_EQ(refused.error, TaskError::BadInputs);
    EXPECT_NE(refused.reason.find("no image input"), std::string::npos) << refused.reason;
    EXPECT_EQ(runtime->lend_inputs(TaskId{}).error, TaskError::UnknownTask);
}

// A submit may name lent images for some inputs and the application's own for others: the lent
// one is not copied, the other is; a lent image named for another input is refused.
TEST_F(TaskInputs, LentAndOwnImagesMixInOneSubmit) {
    auto runtime = make_runtime("1");
    TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker");
    d.inputs = {{"lent", VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height},
                {"own", VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height}};
    const TaskId task = runtime->register_task(d);
    const std::size_t size = std::size_t{k_width} * k_height * 4;
    AppImage lent_writer(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    AppImage own(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    const LendResult l = runtime->lend_inputs(task);
    ASSERT_TRUE(l.lent()) << l.reason;
    ASSERT_EQ(l.loan.inputs.size(), 2u);
    const std::vector<std::uint8_t> bytes = round_bytes(9, size);
    const InputImage lent = lent_writer.write_lent(bytes, l.loan);
    const InputImage mine = own.write(round_bytes(10, size), 0);
    const std::array<InputImage, 2> swapped{mine, lent};
    SubmitResult r = runtime->submit(task, {}, swapped);
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("for its own input"), std::string::npos) << r.reason;
    const std::array<InputImage, 2> both{lent, mine};
    r = runtime->submit(task, {}, both);
    ASSERT_TRUE(r.accepted()) << r.reason;
    EXPECT_TRUE(first_output(*runtime, task) == bytes) << "the job read what was lent";
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.lent_submits, 1u);
    EXPECT_EQ(s.input_copies, 1u) << "the application's own image was copied";
    lent_writer.finish(r.inputs_released);
    own.finish(r.inputs_released);
}

// A loan taken before the task moved (here: reconfigured from the worker to the primary) still
// submits: its images are copied into the new instance's slot, exact, and the loan ends.
TEST_F(TaskInputs, ALoanOutlivingAMoveIsCopiedAndStaysExact) {
    auto runtime = make_runtime("1");
    TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker");
    const TaskId task = runtime->register_task(d);
    const LendResult l = runtime->lend_inputs(task);
    ASSERT_TRUE(l.lent()) << l.reason;
    AppImage own(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    const std::vector<std::uint8_t> bytes = round_bytes(5, std::size_t{k_width} * k_height * 4);
    // Signalled by the application: the copy into the new instance waits for the old loan's
    // semaphore.
    const InputImage lent = own.write_lent(bytes, l.loan, true);
    d.placement = Placement::parse("primary").value();
    ASSERT_EQ(runtime->reconfigure(task, d), TaskError::None);
    // The new shape takes submits once prepared; the loan's instance has left use.
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).reconfigurations >= 1; }));
    SubmitResult r;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        r = runtime->submit(task, {}, std::span(&lent, 1));
        return r.status != SubmitStatus::Busy && r.status != SubmitStatus::Preparing;
    }));
    ASSERT_TRUE(r.accepted()) << r.reason;
    EXPECT_EQ(runtime->return_inputs(task, l.loan), TaskError::LoanNotHeld) << "the loan ended";
    ASSERT_TRUE(pump_until(*runtime,
                           [&] { return runtime->stats(task).newest_generation >= r.generation; }));
    harness::LeaseReader reader(*runtime, 2, k_width, k_height);
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease->generation, r.generation);
    std::uint64_t v = 0;
    EXPECT_TRUE(read_back(reader, *lease, v) == bytes);
    runtime->release(*lease, v);
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.input_copies, 1u) << "the lent image was copied";
    EXPECT_EQ(s.lent_submits, 0u);
    EXPECT_EQ(s.lent_signalled_submits, 0u);
    own.finish(r.inputs_released);
}

// A loan's semaphore (InputLoan::written) names that loan's writes only: at another value, or
// beside another loan's images, the submit is refused with a sentence and nothing changes; at
// its value the submit submits nothing and the job reads exactly what was written.
TEST_F(TaskInputs, ALoanSemaphoreIsNamedWithItsOwnImagesAtItsValue) {
    auto runtime = make_runtime("1");
    const auto [task, a, b] = lend_two(*runtime, 3);
    ASSERT_TRUE(a.lent()) << a.reason;
    ASSERT_TRUE(b.lent()) << b.reason;
    ASSERT_NE(a.loan.written, VK_NULL_HANDLE);
    EXPECT_NE(a.loan.written, b.loan.written) << "each slot's loan has its own semaphore";
    EXPECT_GT(a.loan.written_value, 0u);
    AppImage own(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    const std::vector<std::uint8_t> bytes = round_bytes(7, std::size_t{k_width} * k_height * 4);
    const InputImage lent = own.write_lent(bytes, a.loan, true);
    InputImage stale = lent;
    stale.wait_value = a.loan.written_value - 1;
    SubmitResult r = runtime->submit(task, {}, std::span(&stale, 1));
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("instead of its written_value"), std::string::npos) << r.reason;
    InputImage crossed = lent;
    crossed.image = b.loan.inputs.at(0).image;
    r = runtime->submit(task, {}, std::span(&crossed, 1));
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("without naming that loan's images"), std::string::npos) << r.reason;
    EXPECT_EQ(runtime->stats(task).accepted, 0u) << "refusals change nothing";
    r = runtime->submit(task, {}, std::span(&lent, 1));
    ASSERT_TRUE(r.accepted()) << r.reason;
    EXPECT_EQ(r.inputs_released, 0u);
    EXPECT_EQ(runtime->return_inputs(task, b.loan), TaskError::None);
    EXPECT_TRUE(first_output(*runtime, task) == bytes) << "the job read what was written";
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.lent_signalled_submits, 1u);
    EXPECT_EQ(s.input_copies, 0u);
    // The next loan of a slot names a larger value.
    LendResult again;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        again = runtime->lend_inputs(task);
        return again.lent();
    }));
    if (again.loan.written == a.loan.written) {
        EXPECT_GT(again.loan.written_value, a.loan.written_value);
    }
    EXPECT_EQ(runtime->return_inputs(task, again.loan), TaskError::None);
    own.finish(0);
}

// Loans come and go a thousand times, submitted, returned, or left to unregister_task, and
// leave nothing behind.
TEST_F(TaskInputs, AThousandLoansComeAndGoAndLeaveNothingBehind) {
    auto runtime = make_runtime("1");
    const RuntimeResources base = runtime->resources();
    AppImage own(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    const std::size_t size = std::size_t{k_width} * k_height * 4;
    std::uint64_t released = 0;
    constexpr int k_tasks = 10;
    for (int t = 0; t < k_tasks && !HasFailure(); ++t) {
        const TaskId task = runtime->register_task(
            copy_task(VK_FORMAT_R8G8B8A8_UNORM, t % 2 == 0 ? "worker" : "primary"));
        for (int i = 0; i < 1000 / k_tasks && !HasFailure(); ++i) {
            LendResult l;
            ASSERT_TRUE(pump_until(*runtime, [&] {
                l = runtime->lend_inputs(task);
                return l.lent();
            })) << l.reason;
            if (i % 3 == 1) {
                EXPECT_EQ(runtime->return_inputs(task, l.loan), TaskError::None);
                continue;
            }
            if (i == 1000 / k_tasks - 1) {
                break; // left lent: unregister_task ends it
            }
            // Every other one signalled by the application: its submit submits nothing.
            const InputImage lent = own.write_lent(round_bytes(i, size), l.loan, i % 2 == 0);
            SubmitResult r;
            ASSERT_TRUE(pump_until(*runtime, [&] {
                r = runtime->submit(task, {}, std::span(&lent, 1));
                return r.status != SubmitStatus::Busy;
            }));
            ASSERT_TRUE(r.accepted()) << r.reason;
            released = std::max(released, r.inputs_released);
            runtime->pump();
        }
        EXPECT_EQ(runtime->unregister_task(task), TaskError::None);
    }
    own.finish(released);
    ASSERT_TRUE(pump_until(*runtime,
                           [&] {
                               const RuntimeResources now = runtime->resources();
                               return now.tasks == 0 && now.instances == 0 && now.retiring == 0;
                           }))
        << "a loan kept its task's objects: " << runtime->resources().retiring << " retiring";
    const RuntimeResources now = runtime->resources();
    ASSERT_EQ(now.devices.size(), base.devices.size());
    for (std::size_t i = 0; i < now.devices.size(); ++i) {
        // What the caches keep for the next task is bounded (test_task_lifetime); what is in
        // use is what was before.
        EXPECT_EQ(now.devices[i].allocations, base.devices[i].allocations) << "adapter " << i;
        EXPECT_EQ(now.devices[i].bytes, base.devices[i].bytes) << "adapter " << i;
    }
    EXPECT_EQ(now.threads, base.threads);
}

// A buffer input of 4,196 texels' bytes: a full row of its carrier image and 100 texels of
// the next, read from 256 bytes into the application's buffer.
constexpr std::uint32_t k_buffer_texels = detail::k_carrier_width + 100;

class TaskBufferInputPaths : public TaskInputs,
                             public ::testing::WithParamInterface<std::string> {};

TEST_P(TaskBufferInputPaths, ArriveByteForByteAndTheBufferMayBeRewrittenOnceReleased) {
    const std::string path = GetParam() == "primary" ? std::string() : GetParam();
    RuntimeOptions options;
    if (!path.empty()) {
        const auto pair = detail::query_pair_info(adapters()[0].info, adapters()[1].info);
        const auto p = parse_transfer_path(path);
        ASSERT_TRUE(p);
        if (!pair.allows(*p)) {
            GTEST_SKIP() << path << " is not available from the primary to a worker here";
        }
        options.transfer_path = path;
    }
    auto runtime = make_runtime(path.empty() ? "none" : "1", options);
    const std::size_t size = std::size_t{k_buffer_texels} * 4;
    TaskDesc d;
    d.name = "copy-buffer";
    d.width = k_buffer_texels;
    d.height = 1;
    d.placement = Placement::parse(path.empty() ? "primary" : "worker").value();
    d.inputs = {{.name = "particles", .buffer_size = size}};
    d.factory = [](const WorkerContext& c) {
        EXPECT_EQ(c.inputs.at(0).buffer_size, k_buffer_texels * 4u);
        return std::make_unique<CopyBufferInput>();
    };
    const TaskId task = runtime->register_task(d);
    EXPECT_EQ(runtime->stats(task).input_path, path.empty() ? "same-device" : path);
    // A CPU device reads the bytes' carrier where it crosses on the host-imported path.
    const bool cpu_worker = adapters().size() > 1 && adapters()[1].info.type == "cpu";
    EXPECT_EQ(runtime->stats(task).inputs_read_in_place, path == "host-imported" && cpu_worker);
    AppImage buffer(app_device(), *runtime, size, 256);
    const int checked = run_rounds(*runtime, task, buffer, size, {k_buffer_texels, 1}, 24);
    EXPECT_GE(checked, 3);
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
    EXPECT_EQ(s.accepted, s.ready + s.superseded);
}

INSTANTIATE_TEST_SUITE_P(EveryPath, TaskBufferInputPaths,
                         ::testing::Values("primary", "zero-copy", "shared-memory", "host-imported",
                                           "host-copy"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             std::string name = param.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

TEST_F(TaskInputs, RefusesBufferInputsItCannotCarry) {
    auto runtime = make_runtime("1");
    TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker");
    d.inputs = {{.name = "odd", .buffer_size = 6}};
    try {
        (void)runtime->register_task(d);
        ADD_FAILURE() << "a buffer of 6 bytes was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Input 'odd'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("multiple of 4"), std::string::npos) << e.what();
    }
    d.inputs = {{.name = "huge", .buffer_size = k_max_input_buffer + 4}};
    EXPECT_THROW((void)runtime->register_task(d), Error);
    EXPECT_EQ(runtime->resources().tasks, 0u) << "a refused registration leaves nothing";

    // At submit: no buffer named, an offset not a multiple of 4.
    d.inputs = {{.name = "bytes", .buffer_size = std::uint64_t{k_width} * k_height * 4}};
    d.factory = [](const WorkerContext&) { return std::make_unique<CopyBufferInput>(); };
    const TaskId task = runtime->register_task(d);
    InputImage none{};
    SubmitResult r = runtime->submit(task, {}, std::span(&none, 1));
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("is a buffer and the submit names no buffer"), std::string::npos)
        << r.reason;
    AppImage buffer(app_device(), *runtime, std::uint64_t{k_width} * k_height * 4, 0);
    InputImage skewed = buffer.write(round_bytes(1, std::size_t{k_width} * k_height * 4), 0);
    skewed.buffer_offset = 2;
    r = runtime->submit(task, {}, std::span(&skewed, 1));
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("not a multiple of 4"), std::string::npos) << r.reason;
    EXPECT_EQ(runtime->stats(task).accepted, 0u);
    buffer.finish(0);
}

// An input path that fails in use (a fault in its link's recording: the path, not the device) is
// dropped for the pair in the primary -> worker direction, with its reason, and the task is
// prepared again with the next one: its outputs stay exact, its generations go on.
TEST_F(TaskInputs, AnInputPathThatFailsInUseIsDroppedAndTheNextCarriesTheInputs) {
    auto runtime = make_runtime("1");
    detail::Device& app = app_device();
    const TaskId task = runtime->register_task(copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker"));
    const std::string first = runtime->stats(task).input_path;
    const std::optional<TransferPath> outputs = runtime->stats(task).transfer_path;
    EXPECT_GE(run_rounds(*runtime, app, task, VK_FORMAT_R8G8B8A8_UNORM, 4), 1);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).in_flight == 0; }));
    // Nothing in flight: the next such recording is the input link's, before the job's.
    detail::inject_vk_fault("vkEndCommandBuffer transfer worker", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_GE(run_rounds(*runtime, app, task, VK_FORMAT_R8G8B8A8_UNORM, 12), 3);
    detail::clear_vk_faults();
    const TaskStats s = runtime->stats(task);
    EXPECT_FALSE(s.worker_lost) << s.worker_lost_reason;
    EXPECT_NE(s.input_path, first) << "the inputs moved to the next path";
    EXPECT_EQ(s.transfer_path, outputs) << "the outputs' path did not fail";
    bool dropped = false;
    for (const DroppedTransferPath& d : s.dropped_paths) {
        if (d.inputs && d.path == first) {
            dropped = true;
            EXPECT_NE(d.reason.find("failed in use"), std::string::npos) << d.reason;
            EXPECT_NE(d.reason.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos)
                << d.reason;
        }
        EXPECT_TRUE(d.inputs) << d.path << " was dropped for the outputs";
    }
    EXPECT_TRUE(dropped) << first << " is not among the task's dropped paths";
}

// One image named for two inputs of a submit: each input gets its bytes (the copies change the
// image's layout once, under the fixture's synchronisation validation).
TEST_F(TaskInputs, OneImageNamedForTwoInputsIsCopiedForBoth) {
    auto runtime = make_runtime("1");
    TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker");
    d.inputs = {{"a", VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height},
                {"b", VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height}};
    const TaskId task = runtime->register_task(d);
    AppImage image(app_device(), *runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height);
    const std::vector<std::uint8_t> bytes = round_bytes(7, std::size_t{k_width} * k_height * 4);
    const InputImage in = image.write(bytes, 0);
    const std::array<InputImage, 2> both{in, in};
    SubmitResult r;
    ASSERT_TRUE(pump_until(*runtime, [&] {
        r = runtime->submit(task, {}, both);
        return r.accepted();
    }));
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).ready >= 1; }))
        << runtime->stats(task).workload_error;
    harness::LeaseReader reader(*runtime, 2, k_width, k_height);
    auto lease = runtime->acquire(task);
    ASSERT_TRUE(lease);
    std::uint64_t v = 0;
    EXPECT_TRUE(read_back(reader, *lease, v) == bytes);
    runtime->release(*lease, v);
    EXPECT_EQ(runtime->stats(task).failed_jobs, 0u);
    image.finish(r.inputs_released);
}

TEST_F(TaskInputs, AThousandRewritesAsSoonAsReleasedNeverChangeAResult) {
    auto runtime = make_runtime("1");
    detail::Device& app = app_device();
    const TaskId task = runtime->register_task(copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker"));
    const int checked = run_rounds(*runtime, app, task, VK_FORMAT_R8G8B8A8_UNORM, 1000);
    EXPECT_GE(checked, 50);
    EXPECT_EQ(runtime->stats(task).accepted, 1000u);
}

TEST_F(TaskInputs, RefusesInputsItCannotCarryAtRegistration) {
    auto runtime = make_runtime("1");
    TaskDesc d = copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker");
    d.inputs = {{"depth", VK_FORMAT_D32_SFLOAT, 0, 0}};
    try {
        (void)runtime->register_task(d);
        ADD_FAILURE() << "a depth-format input was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Input 'depth'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("R32F"), std::string::npos) << e.what();
    }
    d.inputs = {{"a", VK_FORMAT_R8G8B8A8_UNORM, 0, 0}, {"a", VK_FORMAT_R32_SFLOAT, 0, 0}};
    EXPECT_THROW((void)runtime->register_task(d), Error);
    d.inputs.assign(9, TaskInputDesc{});
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
        d.inputs[i].name = "in" + std::to_string(i);
    }
    EXPECT_THROW((void)runtime->register_task(d), Error);
    d.inputs = {{"big", VK_FORMAT_R8G8B8A8_UNORM, 20000, 4}};
    EXPECT_THROW((void)runtime->register_task(d), Error);
    // Usage for lent images: attachments, storage and transfers only, on an image input.
    d.inputs = {{"depth", VK_FORMAT_R32_SFLOAT, 0, 0}};
    d.inputs[0].usage = VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT;
    try {
        (void)runtime->register_task(d);
        ADD_FAILURE() << "a depth attachment usage was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("usage 0x20"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("COLOR_ATTACHMENT"), std::string::npos) << e.what();
    }
    d.inputs = {{.name = "bytes", .buffer_size = 64, .usage = VK_IMAGE_USAGE_STORAGE_BIT}};
    EXPECT_THROW((void)runtime->register_task(d), Error);
    EXPECT_EQ(runtime->resources().tasks, 0u) << "a refused registration leaves nothing";
}

TEST_F(TaskInputs, ASubmitWithTheWrongInputsFailsAndChangesNothing) {
    auto runtime = make_runtime("1");
    detail::Device& app = app_device();
    const TaskId task = runtime->register_task(copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker"));
    SubmitResult r = runtime->submit(task, {}, {});
    EXPECT_EQ(r.status, SubmitStatus::Failed);
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("declares 1 input(s) and the submit named 0"), std::string::npos)
        << r.reason;
    InputImage none{};
    r = runtime->submit(task, {}, std::span(&none, 1));
    EXPECT_EQ(r.error, TaskError::BadInputs);
    EXPECT_NE(r.reason.find("names no image"), std::string::npos) << r.reason;
    EXPECT_EQ(runtime->stats(task).accepted, 0u);
    // The next good submits run, from generation 1, exact.
    EXPECT_GE(run_rounds(*runtime, app, task, VK_FORMAT_R8G8B8A8_UNORM, 6), 1);
}

TEST_F(TaskInputs, ATaskWithInputsIsNotCalibratedWithTrialJobs) {
    auto runtime = make_runtime("1");
    const TaskId task = runtime->register_task(copy_task(VK_FORMAT_R8G8B8A8_UNORM, "worker"));
    const CalibrationResult c = runtime->calibrate(task);
    EXPECT_EQ(c.error, TaskError::NotMeasured);
    EXPECT_NE(c.reason.find("has inputs"), std::string::npos) << c.reason;
    EXPECT_EQ(runtime->stats(task).trial_jobs, 0u);
}

// Inputs sent ahead (JobPipeline::send_ahead): while a job waits for its own inputs, the
// worker's job thread sends those of the jobs queued behind it. A JournalInput task (an image
// and a buffer a job) takes bursts of submits held back on the worker until all are queued,
// then let go at once; every job's inputs must be its own round's, whichever job sent them.
constexpr std::size_t k_journal_bytes = std::size_t{k_width} * k_height * 4;
constexpr std::uint64_t k_buffer_round = 1'000'000; // a buffer's bytes: another round's

class TaskInputsSentEarly : public TaskInputs {
protected:
    static TaskDesc journal_task(const std::shared_ptr<InputJournal>& journal,
                                 std::uint32_t slots) {
        TaskDesc d;
        d.name = "journal-inputs";
        d.width = k_width;
        d.height = k_height;
        d.slots = slots;
        d.placement = Placement::parse("worker").value();
        d.inputs = {{"image", VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height},
                    {.name = "bytes", .buffer_size = k_journal_bytes}};
        d.factory = [journal](const WorkerContext& c) {
            return std::make_unique<JournalInput>(c, journal);
        };
        return d;
    }

    // The application's two inputs, rewritten each round once the last submit released them.
    struct TwoInputs {
        TwoInputs(detail::Device& app, const Runtime& runtime)
            : image(app, runtime, VK_FORMAT_R8G8B8A8_UNORM, k_width, k_height),
              buffer(app, runtime, k_journal_bytes, 0) {}
        std::array<InputImage, 2> write(std::uint64_t round) {
            return {image.write(round_bytes(round, k_journal_bytes), released),
                    buffer.write(round_bytes(round + k_buffer_round, k_journal_bytes), released)};
        }
        void finish() {
            image.finish(released);
            buffer.finish(released);
        }
        AppImage image;
        AppImage buffer;
        std::uint64_t released = 0;
    };

    // Where the task's jobs are, for a failure's message.
    static std::string describe(const TaskStats& s) {
        return "accepted " + std::to_string(s.accepted) + ", ready " + std::to_string(s.ready) +
               ", superseded " + std::to_string(s.superseded) + ", in flight " +
               std::to_string(s.in_flight) + ", newest " + std::to_string(s.newest_generation) +
               ", failed jobs " + std::to_string(s.failed_jobs) + " (" + s.workload_error +
               "), input path " + s.input_path + ", worker lost: " + s.worker_lost_reason;
    }

    // What a job of `round` must have read: its image's bytes, then its buffer's.
    static std::vector<std::uint8_t> journal_entry(std::uint64_t round) {
        std::vector<std::uint8_t> out = round_bytes(round, k_journal_bytes);
        const std::vector<std::uint8_t> rest = round_bytes(round + k_buffer_round, k_journal_bytes);
        out.insert(out.end(), rest.begin(), rest.end());
        return out;
    }

    // Submits `round` (pumping while every slot is busy or the task is being prepared); its
    // generation on success.
    std::uint64_t submit_round(Runtime& runtime, TaskId task, TwoInputs& app, std::uint64_t round) {
        const std::array<InputImage, 2> inputs = app.write(round);
        SubmitResult r;
        EXPECT_TRUE(pump_until(runtime, [&] {
            r = runtime.submit(task, {}, inputs);
            return r.status != SubmitStatus::Busy && r.status != SubmitStatus::Preparing;
        }));
        EXPECT_TRUE(r.accepted()) << r.reason;
        app.released = std::max(app.released, r.inputs_released);
        return r.accepted() ? r.generation : 0;
    }

    // Every generation of `round_of` completed, and read its round's inputs (the journal); the
    // newest output holds the newest round's image.
    void check_rounds(Runtime& runtime, TaskId task, InputJournal& journal,
                      const std::map<std::uint64_t, std::uint64_t>& round_of) {
        ASSERT_FALSE(round_of.empty());
        const std::uint64_t last = round_of.rbegin()->first;
        ASSERT_TRUE(pump_until(runtime,
                               [&] {
                                   return runtime.stats(task).newest_generation >= last &&
                                          journal.of(last).has_value();
                               }))
            << describe(runtime.stats(task)) << ", waiting for generation " << last;
        for (const auto& [generation, round] : round_of) {
            const auto read = journal.of(generation);
            ASSERT_TRUE(read) << "generation " << generation << " never completed";
            EXPECT_TRUE(*read == journal_entry(round))
                << "generation " << generation << " did not read round " << round << "'s inputs";
        }
        harness::LeaseReader reader(runtime, 2, k_width, k_height);
        const auto lease = runtime.acquire(task);
        ASSERT_TRUE(lease);
        std::uint64_t v = 0;
        const auto px = read_back(reader, *lease, v);
        runtime.release(*lease, v);
        ASSERT_EQ(lease->generation, last);
        EXPECT_TRUE(px == round_bytes(round_of.at(last), k_journal_bytes));
    }

    // `bursts` bursts of `slots - 1` submits (every slot but the published output's), each
    // held back on the worker until all are queued and then let go at once: the job thread
    // takes the first and sends the others' inputs while it waits for its own.
    void run_bursts(Runtime& runtime, TaskId task, TwoInputs& app, InputJournal& journal,
                    std::uint32_t slots, int bursts, std::uint64_t& round) {
        auto& impl = detail::RuntimeAccess::impl(runtime);
        for (int b = 0; b < bursts && !HasFailure(); ++b) {
            const std::uint64_t first = runtime.stats(task).accepted + 1;
            for (std::uint64_t g = first; g < first + slots - 1; ++g) {
                detail::RuntimeProbe(impl).hold_generation(task, g);
            }
            std::map<std::uint64_t, std::uint64_t> round_of;
            for (std::uint64_t g = first; g < first + slots - 1 && !HasFailure(); ++g) {
                EXPECT_EQ(submit_round(runtime, task, app, round), g);
                round_of[g] = round++;
            }
            detail::RuntimeProbe(impl).release_held(task);
            check_rounds(runtime, task, journal, round_of);
        }
    }
};

struct SentEarlyCase {
    std::string path; // forced primary -> worker path
    bool in_place;    // RuntimeOptions::cpu_reads_inputs_in_place
    std::uint32_t slots;
};

class TaskInputsSentEarlyPaths : public TaskInputsSentEarly,
                                 public ::testing::WithParamInterface<SentEarlyCase> {};

TEST_P(TaskInputsSentEarlyPaths, QueuedJobsInputsGoAheadAndEachJobReadsItsOwn) {
    const SentEarlyCase& c = GetParam();
    const auto pair = detail::query_pair_info(adapters()[0].info, adapters()[1].info);
    if (!pair.allows(parse_transfer_path(c.path).value())) {
        GTEST_SKIP() << c.path << " is not available from the primary to a worker here";
    }
    RuntimeOptions options;
    options.transfer_path = c.path;
    options.cpu_reads_inputs_in_place = c.in_place;
    options.trace = true;
    auto runtime = make_runtime("1", options);
    const auto journal = std::make_shared<InputJournal>();
    const TaskId task = runtime->register_task(journal_task(journal, c.slots));
    const bool cpu_worker = adapters()[1].info.type == "cpu";
    EXPECT_EQ(runtime->stats(task).inputs_read_in_place,
              c.in_place && c.path == "host-imported" && cpu_worker);
    TwoInputs app(app_device(), *runtime);
    constexpr int k_bursts = 10;
    std::uint64_t round = 1;
    run_bursts(*runtime, task, app, *journal, c.slots, k_bursts, round);
    // Then as the application streams them, jobs queueing or not.
    std::map<std::uint64_t, std::uint64_t> round_of;
    for (int i = 0; i < 40 && !HasFailure(); ++i) {
        round_of[submit_round(*runtime, task, app, round)] = round;
        ++round;
        runtime->pump();
    }
    check_rounds(*runtime, task, *journal, round_of);
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
    EXPECT_EQ(s.accepted, s.ready + s.superseded);
    EXPECT_EQ(s.input_sends, 2 * s.accepted) << "each input of each job sent once";
    // Each burst's first job sent the other jobs' two inputs ahead; the stream may add some.
    EXPECT_GE(s.input_sends_early, 2u * k_bursts * (c.slots - 2));
    EXPECT_LE(s.input_sends_early, s.input_sends - 2 * k_bursts);
    // The trace shows them, each within its own generation.
    const auto trace = detail::RuntimeAccess::impl(*runtime).trace().snapshot();
    const auto early = std::count_if(trace.spans.begin(), trace.spans.end(), [](const auto& span) {
        return span.name == "inputs sent early journal-inputs";
    });
    EXPECT_EQ(static_cast<std::uint64_t>(early) * 2, s.input_sends_early);
    app.finish();
}

INSTANTIATE_TEST_SUITE_P(InPlaceAndCopied, TaskInputsSentEarlyPaths,
                         ::testing::Values(SentEarlyCase{"host-imported", true, 3},
                                           SentEarlyCase{"host-imported", true, 6},
                                           SentEarlyCase{"host-imported", false, 3},
                                           SentEarlyCase{"host-imported", false, 6},
                                           SentEarlyCase{"host-copy", false, 6},
                                           SentEarlyCase{"zero-copy", false, 6}),
                         [](const ::testing::TestParamInfo<SentEarlyCase>& param) {
                             const SentEarlyCase& c = param.param;
                             std::string name = c.path + "_" +
                                                (c.in_place ? "in_place" : "copied") + "_" +
                                                std::to_string(c.slots) + "_slots";
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

// Writes of the application's that take a while: fills of a large buffer on the primary's
// queue, then a signal of `done` to 1. An input named with it waits for them, as for an
// application's writes still running, with its signal submitted before (no wait before a
// signal, which the validation layer's state tracking cannot follow from the host).
class SlowWrites {
public:
    SlowWrites(detail::Device& device, const Runtime& runtime)
        : m_vk(runtime.primary_vulkan()), m_done(device, "test slow writes"),
          m_buffer(detail::create_buffer(
              device, {k_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, 0, 0, "test slow writes"})),
          m_pool(device, m_vk.queue_family, "test slow writes pool"),
          m_cmd(m_pool.allocate("test slow writes")) {}
    ~SlowWrites() { EXPECT_EQ(m_done.wait(1, std::chrono::seconds(60)), VK_SUCCESS); }
    SlowWrites(const SlowWrites&) = delete;
    SlowWrites& operator=(const SlowWrites&) = delete;

    // Submits `fills` fills of the buffer (on lavapipe about 10 ms each), then the signal.
    void submit(int fills) {
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        ASSERT_EQ(vkBeginCommandBuffer(m_cmd, &begin), VK_SUCCESS);
        for (int i = 0; i < fills; ++i) {
            detail::memory_barrier(
                m_cmd, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            vkCmdFillBuffer(m_cmd, m_buffer.buffer.get(), 0, VK_WHOLE_SIZE,
                            static_cast<std::uint32_t>(i));
        }
        ASSERT_EQ(vkEndCommandBuffer(m_cmd), VK_SUCCESS);
        const VkSemaphoreSubmitInfo signal =
            m_done.submit_info(1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        cb.commandBuffer = m_cmd;
        VkSubmitInfo2 info{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        info.commandBufferInfoCount = 1;
        info.pCommandBufferInfos = &cb;
        info.signalSemaphoreInfoCount = 1;
        info.pSignalSemaphoreInfos = &signal;
        std::lock_guard lock(*m_vk.queue_mutex);
        ASSERT_EQ(vkQueueSubmit2(m_vk.queue, 1, &info, VK_NULL_HANDLE), VK_SUCCESS);
    }
    [[nodiscard]] VkSemaphore semaphore() const noexcept { return m_done.handle(); }
    [[nodiscard]] bool done() const {
        std::uint64_t v = 0;
        EXPECT_EQ(m_done.value(v), VK_SUCCESS);
        return v >= 1;
    }

private:
    static constexpr VkDeviceSize k_bytes = VkDeviceSize{64} << 20;
    PrimaryVulkan m_vk;
    detail::TimelineSemaphore m_done;
    detail::Buffer m_buffer;
    detail::CommandPool m_pool;
    VkCommandBuffer m_cmd;
};

// A JournalInput task on the host-copy path, whose bridge delivers each input, so the job
// thread waits for a job's arrival before its batch: its first job's inputs wait for slow
// writes of the application's, and the job thread waits for that job while the next is
// submitted, whose inputs it sends meanwhile.
class TaskInputsSentEarlyGated : public TaskInputsSentEarly {
protected:
    void SetUp() override {
        TaskInputsSentEarly::SetUp();
        if (HasFatalFailure() || IsSkipped()) {
            return;
        }
        const auto pair = detail::query_pair_info(adapters()[0].info, adapters()[1].info);
        if (!pair.allows(TransferPath::HostCopy)) {
            GTEST_SKIP() << "host-copy is not available from the primary to a worker here";
        }
        RuntimeOptions options;
        options.transfer_path = "host-copy";
        runtime = make_runtime("1", options);
        base = runtime->resources();
        task = runtime->register_task(journal_task(journal, 3));
        app.emplace(app_device(), *runtime);
        slow.emplace(app_device(), *runtime);
    }
    void TearDown() override {
        slow.reset();
        if (app) {
            app->finish();
        }
        app.reset();
        runtime.reset();
        TaskInputsSentEarly::TearDown();
    }

    // Submits the first job, whose inputs wait for the slow writes (on lavapipe about a
    // second), and once the job thread sent them (it then waits for their arrival), the next:
    // their generations.
    std::pair<std::uint64_t, std::uint64_t> submit_gated_and_next(bool inject_fault = false) {
        std::array<InputImage, 2> inputs = app->write(round);
        slow->submit(100);
        for (InputImage& in : inputs) {
            in.wait_semaphore = slow->semaphore(); // after the write, on the same queue
            in.wait_value = 1;
        }
        const SubmitResult first = runtime->submit(task, {}, inputs);
        EXPECT_TRUE(first.accepted()) << first.reason;
        app->released = first.inputs_released;
        round_of[first.generation] = round++;
        EXPECT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).input_sends >= 2; }));
        if (inject_fault) {
            // The job thread waits for the first job's arrival: the next recording of a link is
            // the second job's, sent ahead.
            detail::inject_vk_fault("vkEndCommandBuffer transfer worker",
                                    VK_ERROR_OUT_OF_DEVICE_MEMORY);
        }
        const std::uint64_t next = submit_round(*runtime, task, *app, round);
        round_of[next] = round++;
        return {first.generation, next};
    }

    // Every object of the runtime's tasks freed: as before the task was registered.
    void expect_all_freed() {
        ASSERT_TRUE(pump_until(*runtime,
                               [&] {
                                   const RuntimeResources now = runtime->resources();
                                   return now.tasks == 0 && now.instances == 0 && now.retiring == 0;
                               }))
            << runtime->resources().retiring << " instances still retiring";
        const RuntimeResources now = runtime->resources();
        ASSERT_EQ(now.devices.size(), base.devices.size());
        for (std::size_t i = 0; i < now.devices.size(); ++i) {
            EXPECT_EQ(now.devices[i].allocations, base.devices[i].allocations) << "adapter " << i;
            EXPECT_EQ(now.devices[i].bytes, base.devices[i].bytes) << "adapter " << i;
        }
    }

    // The jobs of `round_of` ran, each with its own round's inputs.
    void expect_each_read_its_own() {
        for (const auto& [generation, r] : round_of) {
            ASSERT_TRUE(pump_until(*runtime, [&] { return journal->of(generation).has_value(); }))
                << "generation " << generation << " never ran";
            EXPECT_TRUE(*journal->of(generation) == journal_entry(r))
                << "generation " << generation << " did not read its own inputs";
        }
    }

    std::shared_ptr<InputJournal> journal = std::make_shared<InputJournal>();
    std::unique_ptr<Runtime> runtime;
    RuntimeResources base;
    TaskId task{};
    std::optional<TwoInputs> app;
    std::optional<SlowWrites> slow;
    std::map<std::uint64_t, std::uint64_t> round_of;
    std::uint64_t round = 1;
};

// A job whose inputs were sent ahead, and the job waiting before it, outlive unregister_task:
// both run on with their own inputs, and everything they held is let go.
TEST_F(TaskInputsSentEarlyGated, UnregisterWhileInputsWereSentEarlyLetsGoOfEverything) {
    submit_gated_and_next();
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).input_sends_early == 2; }))
        << "the second job's two inputs were not sent while the first waited";
    EXPECT_FALSE(slow->done()) << "the first job no longer waited: the test proves nothing";
    EXPECT_EQ(runtime->unregister_task(task), TaskError::None);
    expect_each_read_its_own();
    expect_all_freed();
}

// Reconfigured while a job's inputs were sent ahead: the old shape's jobs run on with their own
// inputs, the new shape takes the next generations, each exact.
TEST_F(TaskInputsSentEarlyGated, ReconfigureWhileInputsWereSentEarlyKeepsEveryJobExact) {
    submit_gated_and_next();
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).input_sends_early == 2; }));
    EXPECT_FALSE(slow->done()) << "the first job no longer waited: the test proves nothing";
    ASSERT_EQ(runtime->reconfigure(task, journal_task(journal, 4)), TaskError::None);
    expect_each_read_its_own();
    // The new shape active (its jobs are the ones held), then bursts of its 4 slots.
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).reconfigurations >= 1; }));
    run_bursts(*runtime, task, *app, *journal, 4, 4, round);
    const TaskStats s = runtime->stats(task);
    EXPECT_EQ(s.failed_jobs, 0u) << s.workload_error;
    EXPECT_GE(s.input_sends_early, 2u + 4 * 2 * 2);
}

// A fault in the send of a queued job's inputs (its link's recording fails: the path, not the
// device) fails that link while the job before it waits: the path is dropped for the pair with
// its reason, both jobs retire without running, and everything they held is let go.
TEST_F(TaskInputsSentEarlyGated, AFaultInAnEarlySendRetiresThePathAndLetsGoOfEverything) {
    const auto [first, second] = submit_gated_and_next(true);
    EXPECT_EQ(second, first + 1);
    ASSERT_TRUE(pump_until(*runtime, [&] { return !runtime->stats(task).dropped_paths.empty(); }))
        << "no path was dropped";
    detail::clear_vk_faults();
    const TaskStats s = runtime->stats(task);
    EXPECT_FALSE(s.worker_lost) << s.worker_lost_reason;
    EXPECT_EQ(s.input_sends, 2u) << "only the first job's inputs went";
    EXPECT_EQ(s.input_sends_early, 0u) << "a send that failed is not counted";
    for (const DroppedTransferPath& d : s.dropped_paths) {
        EXPECT_TRUE(d.inputs) << d.path << " was dropped for the outputs: the fault came late";
        EXPECT_EQ(d.path, "host-copy");
        EXPECT_NE(d.reason.find("failed in use"), std::string::npos) << d.reason;
        EXPECT_NE(d.reason.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos) << d.reason;
    }
    EXPECT_EQ(runtime->unregister_task(task), TaskError::None);
    expect_all_freed();
    EXPECT_FALSE(journal->of(first)) << "a job of the failed path ran";
    EXPECT_FALSE(journal->of(second)) << "a job of the failed path ran";
}

// The same fault in the first send of a burst of queued jobs on the pair's best path: that job
// and those behind it, whose inputs it would have sent, retire with the path; the next path
// carries every later job's inputs exactly.
TEST_F(TaskInputsSentEarly, AFaultInTheSendBeforeQueuedJobsFallsBackAndStaysExact) {
    auto runtime = make_runtime("1");
    const auto journal = std::make_shared<InputJournal>();
    const TaskId task = runtime->register_task(journal_task(journal, 4));
    const std::string first_path = runtime->stats(task).input_path;
    TwoInputs app(app_device(), *runtime);
    std::uint64_t round = 1;
    run_bursts(*runtime, task, app, *journal, 4, 2, round);
    ASSERT_TRUE(pump_until(*runtime, [&] { return runtime->stats(task).in_flight == 0; }));
    auto& impl = detail::RuntimeAccess::impl(*runtime);
    const std::uint64_t next = runtime->stats(task).accepted + 1;
    for (std::uint64_t g = next; g < next + 3; ++g) {
        detail::RuntimeProbe(impl).hold_generation(task, g);
        EXPECT_EQ(submit_round(*runtime, task, app, round++), g);
    }
    // Nothing in flight: the next recording of a link is the first queued job's own send.
    detail::inject_vk_fault("vkEndCommandBuffer transfer worker", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    detail::RuntimeProbe(impl).release_held(task);
    ASSERT_TRUE(pump_until(*runtime, [&] {
        const TaskStats s = runtime->stats(task);
        return s.input_path != first_path && s.in_flight == 0;
    })) << describe(runtime->stats(task));
    detail::clear_vk_faults();
    for (std::uint64_t g = next; g < next + 3; ++g) {
        EXPECT_FALSE(journal->of(g)) << "generation " << g << " ran on the failed path";
    }
    // The next path's instance active (its jobs are the ones held), then bursts.
    const std::uint64_t after = submit_round(*runtime, task, app, round);
    check_rounds(*runtime, task, *journal, {{after, round++}});
    run_bursts(*runtime, task, app, *journal, 4, 4, round);
    const TaskStats s = runtime->stats(task);
    EXPECT_FALSE(s.worker_lost) << s.worker_lost_reason;
    EXPECT_NE(s.input_path, first_path);
    EXPECT_GE(s.input_sends_early, 2u * 4 * 2) << "the next path's bursts sent inputs ahead";
    app.finish();
}

} // namespace
} // namespace tandem::test
