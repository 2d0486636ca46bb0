// tandem-sampling: an engine reads a lease inside its own frame, as a renderer does, with nothing
// waited for on the host. Each frame, on the primary's queue, one submission of the engine's:
// waits on the lease's semaphore (Lease::wait_semaphore >= wait_value), clears the engine's frame
// image, copies the leased image into it at an offset (where a renderer would sample
// lease->view in its render pass: the same wait, the same layouts), and signals Tandem's primary
// timeline (Runtime::primary_timeline()) at the frame's value. The lease is released with that
// value right after the submit: Tandem rewrites the slot only once the frame's reads are done.
//
// The task is the built-in pattern (tandem/pattern.hpp) on a worker, where there is one. To show
// the frame is right, the engine copies its frame image to host memory in the same submission
// and checks every pixel exactly: the pattern of the lease's generation inside the copied
// rectangle, the clear colour around it.
//
//     tandem-sampling
// Without a worker (one GPU; TANDEM_VIRTUAL_DEVICES=2 opens it twice) the task runs on the
// primary. Exit code 0 when 10 generations were sampled, every pixel of every frame matched and
// the validation layer (where $TANDEM_VALIDATION turns it on) reported nothing.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include <tandem/tandem.hpp>

namespace {

constexpr std::uint32_t k_task_width = 64; // the task's output, copied into the frame at k_at
constexpr std::uint32_t k_task_height = 48;
constexpr std::uint32_t k_frame_width = 96; // the engine's frame image
constexpr std::uint32_t k_frame_height = 64;
constexpr VkOffset3D k_at{16, 8, 0};
constexpr std::uint32_t k_background = 0xFFFF0000u; // the clear colour, RGBA8 (0, 0, 1, 1)

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed: " + tandem::to_string(r));
    }
}

VkImageMemoryBarrier2 image_barrier(VkImage image, VkImageLayout from, VkImageLayout to,
                                    VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                                    VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access) {
    VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    b.srcStageMask = src_stage;
    b.srcAccessMask = src_access;
    b.dstStageMask = dst_stage;
    b.dstAccessMask = dst_access;
    b.oldLayout = from;
    b.newLayout = to;
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = image;
    b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    return b;
}

void barriers(VkCommandBuffer cmd, std::initializer_list<VkImageMemoryBarrier2> list) {
    VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.imageMemoryBarrierCount = static_cast<std::uint32_t>(list.size());
    dep.pImageMemoryBarriers = list.begin();
    vkCmdPipelineBarrier2(cmd, &dep);
}

// The engine's frame on the primary: its colour image, a host-visible buffer its frame is copied
// to for the check, a command buffer and a fence.
class EngineFrame {
public:
    explicit EngineFrame(const tandem::PrimaryVulkan& vk) : m_vk(vk) {
        VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        ii.imageType = VK_IMAGE_TYPE_2D;
        ii.format = VK_FORMAT_R8G8B8A8_UNORM; // the task's format: copies between them are exact
        ii.extent = {k_frame_width, k_frame_height, 1};
        ii.mipLevels = 1;
        ii.arrayLayers = 1;
        ii.samples = VK_SAMPLE_COUNT_1_BIT;
        ii.tiling = VK_IMAGE_TILING_OPTIMAL;
        ii.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
        check(vkCreateImage(vk.device, &ii, nullptr, &m_image), "vkCreateImage");
        VkMemoryRequirements image_needs{};
        vkGetImageMemoryRequirements(vk.device, m_image, &image_needs);
        m_image_memory = allocate(image_needs, 0);
        check(vkBindImageMemory(vk.device, m_image, m_image_memory, 0), "vkBindImageMemory");

        VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bi.size = VkDeviceSize{k_frame_width} * k_frame_height * 4;
        bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        check(vkCreateBuffer(vk.device, &bi, nullptr, &m_buffer), "vkCreateBuffer");
        VkMemoryRequirements buffer_needs{};
        vkGetBufferMemoryRequirements(vk.device, m_buffer, &buffer_needs);
        m_buffer_memory = allocate(buffer_needs, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        check(vkBindBufferMemory(vk.device, m_buffer, m_buffer_memory, 0), "vkBindBufferMemory");
        check(vkMapMemory(vk.device, m_buffer_memory, 0, VK_WHOLE_SIZE, 0, &m_mapped),
              "vkMapMemory");

        VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool.queueFamilyIndex = vk.queue_family;
        check(vkCreateCommandPool(vk.device, &pool, nullptr, &m_pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = m_pool;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(vk.device, &alloc, &m_cmd), "vkAllocateCommandBuffers");
        VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check(vkCreateFence(vk.device, &fence, nullptr, &m_fence), "vkCreateFence");
    }
    ~EngineFrame() {
        vkDestroyFence(m_vk.device, m_fence, nullptr);
        vkDestroyCommandPool(m_vk.device, m_pool, nullptr);
        vkDestroyBuffer(m_vk.device, m_buffer, nullptr);
        vkFreeMemory(m_vk.device, m_buffer_memory, nullptr);
        vkDestroyImage(m_vk.device, m_image, nullptr);
        vkFreeMemory(m_vk.device, m_image_memory, nullptr);
    }
    EngineFrame(const EngineFrame&) = delete;
    EngineFrame& operator=(const EngineFrame&) = delete;

    // Records and submits the frame that reads `lease`, signalling `primary_timeline` at
    // `frame_value` once its reads of the lease are done. Returns without waiting.
    void submit(const tandem::Lease& lease, VkSemaphore primary_timeline,
                std::uint64_t frame_value) {
        check(vkResetCommandBuffer(m_cmd, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(m_cmd, &begin), "vkBeginCommandBuffer");
        // The frame image from scratch, and the lease from its layout to a copy's source.
        barriers(
            m_cmd,
            {image_barrier(m_image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_NONE,
                           VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT),
             image_barrier(lease.image, lease.layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                           VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT)});
        const VkClearColorValue background{{0.0f, 0.0f, 1.0f, 1.0f}};
        const VkImageSubresourceRange all{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(m_cmd, m_image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &background, 1,
                             &all);
        barriers(m_cmd,
                 {image_barrier(m_image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                                VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                                VK_ACCESS_2_TRANSFER_WRITE_BIT)});
        // The engine's read of the lease: its whole image into the frame at k_at.
        VkImageCopy region{};
        region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.dstSubresource = region.srcSubresource;
        region.dstOffset = k_at;
        region.extent = {lease.extent.width, lease.extent.height, 1};
        vkCmdCopyImage(m_cmd, lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_image,
                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        // The lease back in its layout before the frame signals Tandem's timeline (lease.hpp),
        // and the frame image on to the check's copy.
        barriers(m_cmd,
                 {image_barrier(lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, lease.layout,
                                VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                                VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_NONE),
                  image_barrier(m_image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                                VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                                VK_ACCESS_2_TRANSFER_READ_BIT)});
        VkBufferImageCopy to_host{};
        to_host.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        to_host.imageExtent = {k_frame_width, k_frame_height, 1};
        vkCmdCopyImageToBuffer(m_cmd, m_image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_buffer, 1,
                               &to_host);
        VkMemoryBarrier2 host{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
        host.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        host.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        host.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
        host.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.memoryBarrierCount = 1;
        dep.pMemoryBarriers = &host;
        vkCmdPipelineBarrier2(m_cmd, &dep);
        check(vkEndCommandBuffer(m_cmd), "vkEndCommandBuffer");

        // Wait for the lease before the copy reads it; signal Tandem's timeline when all is done.
        VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait.semaphore = lease.wait_semaphore;
        wait.value = lease.wait_value;
        wait.stageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = primary_timeline;
        signal.value = frame_value;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkCommandBufferSubmitInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        cb.commandBuffer = m_cmd;
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.waitSemaphoreInfoCount = 1;
        submit.pWaitSemaphoreInfos = &wait;
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &cb;
        submit.signalSemaphoreInfoCount = 1;
        submit.pSignalSemaphoreInfos = &signal;
        std::lock_guard lock(*m_vk.queue_mutex); // Tandem submits to this queue too
        check(vkQueueSubmit2(m_vk.queue, 1, &submit, m_fence), "vkQueueSubmit2");
    }

    // For the check only (an engine waits on its frames' fences frames later, if at all): waits
    // for the frame and counts its pixels that are not what `lease` and the clear make.
    std::uint32_t wrong_pixels(const tandem::Lease& lease) {
        check(vkWaitForFences(m_vk.device, 1, &m_fence, VK_TRUE, 10'000'000'000ull),
              "waiting for the frame");
        check(vkResetFences(m_vk.device, 1, &m_fence), "vkResetFences");
        const auto* pixels = static_cast<const std::uint8_t*>(m_mapped);
        std::uint32_t wrong = 0;
        for (std::uint32_t y = 0; y < k_frame_height; ++y) {
            for (std::uint32_t x = 0; x < k_frame_width; ++x) {
                const std::uint32_t lx = x - static_cast<std::uint32_t>(k_at.x);
                const std::uint32_t ly = y - static_cast<std::uint32_t>(k_at.y);
                const bool inside = lx < lease.extent.width && ly < lease.extent.height;
                const std::uint32_t expected =
                    inside ? tandem::pattern_texel(lease.generation, lx, ly, lease.extent.width)
                           : k_background;
                std::uint32_t got = 0;
                std::memcpy(&got, pixels + (std::size_t{y} * k_frame_width + x) * 4, 4);
                wrong += got != expected ? 1u : 0u;
            }
        }
        return wrong;
    }

private:
    VkDeviceMemory allocate(const VkMemoryRequirements& needs, VkMemoryPropertyFlags flags) {
        VkPhysicalDeviceMemoryProperties memory{};
        vkGetPhysicalDeviceMemoryProperties(m_vk.physical_device, &memory);
        for (std::uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
            if ((needs.memoryTypeBits & (1u << t)) != 0 &&
                (memory.memoryTypes[t].propertyFlags & flags) == flags) {
                VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
                ai.allocationSize = needs.size;
                ai.memoryTypeIndex = t;
                VkDeviceMemory out = VK_NULL_HANDLE;
                check(vkAllocateMemory(m_vk.device, &ai, nullptr, &out), "vkAllocateMemory");
                return out;
            }
        }
        throw std::runtime_error("no memory type for the engine's frame");
    }

    tandem::PrimaryVulkan m_vk;
    VkImage m_image = VK_NULL_HANDLE;
    VkDeviceMemory m_image_memory = VK_NULL_HANDLE;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_buffer_memory = VK_NULL_HANDLE;
    void* m_mapped = nullptr;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_cmd = VK_NULL_HANDLE;
    VkFence m_fence = VK_NULL_HANDLE;
};

} // namespace

int main() try {
    tandem::Runtime runtime; // workers: every other adapter
    tandem::TaskDesc desc;
    desc.name = "pattern";
    desc.width = k_task_width;
    desc.height = k_task_height;
    desc.placement = runtime.worker_devices().empty() ? tandem::Placement::on_primary()
                                                      : tandem::Placement::on_a_worker();
    const tandem::TaskId task = runtime.register_task(desc);

    int status = 1;
    {
        EngineFrame frame(runtime.primary_vulkan());
        std::set<std::uint64_t> sampled;
        std::uint64_t frame_value = 0; // the primary timeline's values are the engine's to choose
        std::uint32_t wrong = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (sampled.size() < 10 && std::chrono::steady_clock::now() < deadline) {
            (void)runtime.submit(task); // Busy is fine: the next frame tries again
            runtime.pump();
            auto lease = runtime.acquire(task);
            if (!lease) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            frame.submit(*lease, runtime.primary_timeline(), ++frame_value);
            // Handed back at once: the slot is rewritten only once the frame signalled
            // frame_value, that is, once its copy read the lease.
            runtime.release(*lease, frame_value);
            const std::uint32_t frame_wrong = frame.wrong_pixels(*lease);
            if (frame_wrong > 0) {
                std::fprintf(stderr, "tandem-sampling: generation %llu: %u pixels wrong\n",
                             static_cast<unsigned long long>(lease->generation), frame_wrong);
            }
            wrong += frame_wrong;
            sampled.insert(lease->generation);
        }
        std::printf("tandem-sampling: %llu frames sampled %zu generations of a task on adapter "
                    "%u, %u pixels wrong\n",
                    static_cast<unsigned long long>(frame_value), sampled.size(),
                    runtime.stats(task).device, wrong);
        // Under validation ($TANDEM_VALIDATION=sync), the frame's synchronisation is checked too.
        const std::uint64_t messages = runtime.validation_messages();
        if (messages > 0) {
            std::fprintf(stderr, "tandem-sampling: %llu validation messages, the last: %s\n",
                         static_cast<unsigned long long>(messages),
                         runtime.last_validation_message().c_str());
        }
        status = sampled.size() >= 10 && wrong == 0 && messages == 0 ? 0 : 1;
    } // the engine's frame goes before the runtime's device
    return status;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-sampling: %s\n", e.what());
    return 1;
}
