// tandem-postpass: an engine's own post pass over its own frame, on another GPU. The pass is
// fog.comp, twenty lines of the engine's GLSL reading its colour and depth; Tandem runs it as a
// compute task (tandem/compute.hpp) whose inputs are the frame's colour and depth (the depth as
// an R32F colour image): bindings 1 and 2 of the module, sampled, after the output at 0. Every
// frame the engine renders straight into the images Tandem lends for the task's next job
// (Runtime::lend_inputs; here its "render" clears the colour to the frame's own and the depth
// to a near or a far value), signals the loan's semaphore, submits the fog's colour and start as
// push constants, and reads the newest output back (tandem::LeaseReadback): a near frame keeps
// its colour, a far one is the fog's, exactly.
//
//     tandem-postpass
// Without a worker (one GPU; TANDEM_VIRTUAL_DEVICES=2 opens it twice) the task runs on the
// primary. Exit code 0 when 10 generations were sampled, all exact.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tandem/tandem.hpp>

namespace {

constexpr std::uint32_t k_width = 160;
constexpr std::uint32_t k_height = 100;

// fog.comp's push constants.
struct Fog {
    float colour[4];
    float start;
};

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed: " + tandem::to_string(r));
    }
}

std::vector<std::uint32_t> load_spirv(const char* path) {
    std::ifstream f(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(f)),
                                  std::istreambuf_iterator<char>());
    if (bytes.empty() || bytes.size() % 4 != 0) {
        throw std::runtime_error(std::string("cannot read SPIR-V from ") + path);
    }
    std::vector<std::uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    return words;
}

// The engine's side on the primary: a timeline its frames signal, and a few command buffers
// used in turn, each rewritten once the frame that used it last finished.
class EngineFrames {
public:
    explicit EngineFrames(const tandem::PrimaryVulkan& vk) : m_vk(vk) {
        VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        VkSemaphoreCreateInfo semaphore{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
        check(vkCreateSemaphore(vk.device, &semaphore, nullptr, &m_timeline), "vkCreateSemaphore");
        VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool.queueFamilyIndex = vk.queue_family;
        check(vkCreateCommandPool(vk.device, &pool, nullptr, &m_pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = m_pool;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = static_cast<std::uint32_t>(m_cmds.size());
        check(vkAllocateCommandBuffers(vk.device, &alloc, m_cmds.data()),
              "vkAllocateCommandBuffers");
    }
    ~EngineFrames() {
        (void)wait(m_value);
        vkDestroyCommandPool(m_vk.device, m_pool, nullptr);
        vkDestroySemaphore(m_vk.device, m_timeline, nullptr);
    }
    EngineFrames(const EngineFrames&) = delete;
    EngineFrames& operator=(const EngineFrames&) = delete;

    // "Renders" the frame into the images `loan` lends (colour, then depth; their contents are
    // not kept: from UNDEFINED), once Tandem's input timeline reached loan.writable; the frame
    // signals its own timeline and the loan's semaphore.
    void render(const tandem::InputLoan& loan, const VkClearColorValue& colour, float depth,
                VkSemaphore input_timeline) {
        const std::size_t k = m_frames++ % m_cmds.size();
        check(wait(m_used[k]), "waiting for the engine's frame");
        VkCommandBuffer cmd = m_cmds[k];
        check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
        VkClearColorValue depth_value{};
        depth_value.float32[0] = depth;
        const VkClearColorValue values[2] = {colour, depth_value};
        for (std::size_t i = 0; i < 2; ++i) {
            VkImageMemoryBarrier2 to_clear{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
            to_clear.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
            to_clear.dstStageMask = VK_PIPELINE_STAGE_2_CLEAR_BIT;
            to_clear.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
            to_clear.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
            to_clear.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
            to_clear.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            to_clear.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            to_clear.image = loan.inputs.at(i).image;
            to_clear.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
            VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
            dep.imageMemoryBarrierCount = 1;
            dep.pImageMemoryBarriers = &to_clear;
            vkCmdPipelineBarrier2(cmd, &dep);
            vkCmdClearColorImage(cmd, to_clear.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                 &values[i], 1, &to_clear.subresourceRange);
        }
        check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
        // Left in TRANSFER_DST_OPTIMAL: the submit names that layout.
        VkSemaphoreSubmitInfo wait_info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait_info.semaphore = input_timeline;
        wait_info.value = loan.writable;
        wait_info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSemaphoreSubmitInfo frame_signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        frame_signal.semaphore = m_timeline;
        frame_signal.value = ++m_value;
        frame_signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        const std::array<VkSemaphoreSubmitInfo, 2> signals{frame_signal, loan.written_signal()};
        VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        cb.commandBuffer = cmd;
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.waitSemaphoreInfoCount = loan.writable > 0 ? 1u : 0u;
        submit.pWaitSemaphoreInfos = &wait_info;
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &cb;
        submit.signalSemaphoreInfoCount = static_cast<std::uint32_t>(signals.size());
        submit.pSignalSemaphoreInfos = signals.data();
        {
            std::lock_guard lock(*m_vk.queue_mutex); // Tandem submits to this queue too
            check(vkQueueSubmit2(m_vk.queue, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit2");
        }
        m_used[k] = m_value;
    }

private:
    VkResult wait(std::uint64_t value) const {
        VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        info.semaphoreCount = 1;
        info.pSemaphores = &m_timeline;
        info.pValues = &value;
        return value == 0 ? VK_SUCCESS : vkWaitSemaphores(m_vk.device, &info, 10'000'000'000ull);
    }

    tandem::PrimaryVulkan m_vk;
    VkSemaphore m_timeline = VK_NULL_HANDLE;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    std::array<VkCommandBuffer, 4> m_cmds{};
    std::array<std::uint64_t, 4> m_used{};
    std::uint64_t m_value = 0;
    std::uint64_t m_frames = 0;
};

std::uint32_t packed(const std::array<std::uint8_t, 4>& rgba) {
    std::uint32_t out = 0;
    std::memcpy(&out, rgba.data(), 4);
    return out;
}

} // namespace

int main() try {
    tandem::Runtime runtime; // opens the devices; TANDEM_VIRTUAL_DEVICES=2 opens one GPU twice
    int status = 1;
    {
        // The whole engine-side set-up of its pass: the module, the frame's two inputs.
        tandem::ComputeTaskDesc fog;
        fog.spirv = load_spirv(FOG_SPV);
        fog.push_constant_bytes = sizeof(Fog);
        tandem::TaskDesc desc;
        desc.name = "fog";
        desc.width = k_width;
        desc.height = k_height;
        desc.inputs = {{.name = "colour", .usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT},
                       {.name = "depth",
                        .format = VK_FORMAT_R32_SFLOAT,
                        .usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT}};
        desc.factory = tandem::compute_workload(fog); // checks the module: throws Error
        desc.placement =
            tandem::Placement::parse(runtime.worker_devices().empty() ? "primary" : "worker")
                .value();
        const tandem::TaskId task = runtime.register_task(desc); // checks the bindings
        std::printf("tandem-postpass: fog on adapter %u, inputs via %s\n",
                    runtime.stats(task).device, runtime.stats(task).input_path.c_str());

        const std::array<std::uint8_t, 4> fog_rgba{0xB0, 0xC0, 0xD0, 0xFF};
        Fog push{};
        for (int c = 0; c < 4; ++c) {
            push.colour[c] = static_cast<float>(fog_rgba[c]) / 255.0f;
        }
        push.start = 0.6f;
        EngineFrames frames(runtime.primary_vulkan());
        tandem::LeaseReadback readback(runtime);
        std::map<std::uint64_t, std::uint32_t> expected; // generation -> packed RGBA8 texel
        std::set<std::uint64_t> sampled;
        int mismatches = 0;
        std::uint32_t frame = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (sampled.size() < 10 && std::chrono::steady_clock::now() < deadline) {
            runtime.pump();
            const tandem::LendResult lent = runtime.lend_inputs(task);
            if (lent.status == tandem::SubmitStatus::Failed) {
                throw std::runtime_error("lend_inputs failed: " + lent.reason);
            }
            if (lent.lent()) { // Busy: every slot in use, this frame is not sent
                ++frame;
                const std::array<std::uint8_t, 4> rgba{static_cast<std::uint8_t>(frame * 37),
                                                       static_cast<std::uint8_t>(frame * 11), 0x5A,
                                                       0xFF};
                VkClearColorValue colour{};
                for (int c = 0; c < 4; ++c) {
                    colour.float32[c] = static_cast<float>(rgba[c]) / 255.0f;
                }
                const float depth = frame % 3 == 0 ? 0.8f : 0.2f * static_cast<float>(frame % 3);
                frames.render(lent.loan, colour, depth, runtime.input_timeline());
                const tandem::InputImage inputs[2] = {
                    lent.loan.input(0, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL),
                    lent.loan.input(1, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)};
                const tandem::SubmitResult r = runtime.submit(
                    task, std::span(reinterpret_cast<const std::byte*>(&push), sizeof push),
                    inputs);
                if (r.accepted()) {
                    expected[r.generation] = packed(depth < push.start ? rgba : fog_rgba);
                } else {
                    (void)runtime.return_inputs(task, lent.loan); // its frame was submitted
                    if (r.status == tandem::SubmitStatus::Failed) {
                        throw std::runtime_error("submit failed: " + r.reason);
                    }
                }
            }
            auto lease = runtime.acquire(task);
            if (!lease) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            const tandem::ReadbackImage output = readback.read(*lease);
            runtime.release(*lease, 0);
            const std::uint32_t want = expected.at(lease->generation);
            for (std::uint32_t y = 0; y < k_height; ++y) {
                for (std::uint32_t x = 0; x < k_width; ++x) {
                    if (output.texel(x, y) != want && mismatches++ < 3) {
                        std::fprintf(stderr,
                                     "generation %llu texel (%u, %u): %08x, expected %08x\n",
                                     static_cast<unsigned long long>(lease->generation), x, y,
                                     output.texel(x, y), want);
                    }
                }
            }
            sampled.insert(lease->generation);
        }
        std::printf("tandem-postpass: sampled %zu generations of %ux%u, %d texels differ\n",
                    sampled.size(), k_width, k_height, mismatches);
        status = sampled.size() >= 10 && mismatches == 0 ? 0 : 1;
    } // the engine's objects and the readback go before the runtime
    return status;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-postpass: %s\n", e.what());
    return 1;
}
