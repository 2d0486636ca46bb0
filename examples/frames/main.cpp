// tandem-frames: an engine's frames post-processed on another GPU with nothing copied. The
// engine registers Tandem's built-in blur (tandem/post.hpp) as a task on a worker and, every
// frame, renders straight into the image Tandem lends for the task's next job
// (Runtime::lend_inputs): here its "render" clears the image to a colour of the frame's own, on
// its queue, after the loan's writable value, and signals the loan's own semaphore
// (InputLoan::written) beside its frame timeline. It submits naming the lent image and that
// semaphore, so the submit makes no Vulkan call, acquires the newest output and reads it back
// (tandem::LeaseReadback). A blur of a constant image is that constant, so every output must
// hold its frame's colour exactly.
//
//     tandem-frames
// Without a worker (one GPU; TANDEM_VIRTUAL_DEVICES=2 opens it twice) the task runs on the
// primary. Exit code 0 when 10 generations were sampled, all exact, every accepted submit named
// lent images signalled by their loan and Tandem copied none.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include <tandem/tandem.hpp>

namespace {

constexpr std::uint32_t k_width = 160;
constexpr std::uint32_t k_height = 100;

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed: " + tandem::to_string(r));
    }
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

    // "Renders" the frame into the image `loan` lends (its contents are not kept: from
    // UNDEFINED), once Tandem's input timeline reached loan.writable; the frame signals its own
    // timeline and the loan's semaphore (loan.written to loan.written_value).
    void render(const tandem::InputLoan& loan, const VkClearColorValue& colour,
                VkSemaphore input_timeline) {
        const VkImage image = loan.inputs.at(0).image;
        const std::size_t k = m_frames++ % m_cmds.size();
        check(wait(m_used[k]), "waiting for the engine's frame");
        VkCommandBuffer cmd = m_cmds[k];
        check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
        VkImageMemoryBarrier2 to_clear{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
        to_clear.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        to_clear.dstStageMask = VK_PIPELINE_STAGE_2_CLEAR_BIT;
        to_clear.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        to_clear.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        to_clear.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        to_clear.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_clear.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_clear.image = image;
        to_clear.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.imageMemoryBarrierCount = 1;
        dep.pImageMemoryBarriers = &to_clear;
        vkCmdPipelineBarrier2(cmd, &dep);
        vkCmdClearColorImage(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &colour, 1,
                             &to_clear.subresourceRange);
        check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
        // Left in TRANSFER_DST_OPTIMAL: the submit names that layout, and the task's own batch
        // (which waits for the loan's semaphore) takes it from there.
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

} // namespace

int main() try {
    tandem::Runtime runtime; // opens the devices; TANDEM_VIRTUAL_DEVICES=2 opens one GPU twice
    int status = 1;
    {
        tandem::TaskDesc desc = tandem::blur_task("frames", k_width, k_height);
        desc.placement =
            tandem::Placement::parse(runtime.worker_devices().empty() ? "primary" : "worker")
                .value();
        desc.inputs[0].usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT; // the engine clears into it
        const tandem::TaskId task = runtime.register_task(desc);
        std::printf("tandem-frames: blur on adapter %u, inputs via %s\n",
                    runtime.stats(task).device, runtime.stats(task).input_path.c_str());

        EngineFrames frames(runtime.primary_vulkan());
        tandem::LeaseReadback readback(runtime);
        std::map<std::uint64_t, std::uint32_t> submitted; // generation -> packed RGBA8 colour
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
                frames.render(lent.loan, colour, runtime.input_timeline());
                // Its writes finish when the loan's semaphore reaches its value: the submit
                // makes no Vulkan call, and the task's own batch waits for them on the GPU.
                const tandem::InputImage input =
                    lent.loan.input(0, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
                const tandem::SubmitResult r = runtime.submit(task, {}, std::span(&input, 1));
                if (r.accepted()) {
                    std::uint32_t packed = 0;
                    std::memcpy(&packed, rgba.data(), 4);
                    submitted[r.generation] = packed;
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
            const std::uint32_t texel = output.texel(k_width / 2, k_height / 3);
            const std::uint32_t expected = submitted.at(lease->generation);
            if (texel != expected) {
                ++mismatches;
                std::fprintf(stderr, "generation %llu: texel %08x, expected %08x\n",
                             static_cast<unsigned long long>(lease->generation), texel, expected);
            }
            sampled.insert(lease->generation);
        }
        // Tandem's batches never waited on the engine's timeline (they wait on the loans'
        // semaphores, which the runtime owns), so nothing of Tandem's holds it now.
        const tandem::TaskStats stats = runtime.stats(task);
        std::printf("tandem-frames: sampled %zu generations, %d mismatches, %llu accepted, "
                    "%llu of them lent (%llu making no Vulkan call), %llu copied\n",
                    sampled.size(), mismatches, static_cast<unsigned long long>(stats.accepted),
                    static_cast<unsigned long long>(stats.lent_submits),
                    static_cast<unsigned long long>(stats.lent_signalled_submits),
                    static_cast<unsigned long long>(stats.input_copies));
        status = sampled.size() >= 10 && mismatches == 0 && stats.input_copies == 0 &&
                         stats.lent_submits == stats.accepted &&
                         stats.lent_signalled_submits == stats.accepted
                     ? 0
                     : 1;
    } // the engine's objects and the readback go before the runtime
    return status;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-frames: %s\n", e.what());
    return 1;
}
