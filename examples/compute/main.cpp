// tandem-compute: an engine's own compute pass on another GPU. Tandem opens the devices itself
// (the primary, and every other adapter as a worker); the engine hands it the SPIR-V of its
// procedural texture (ripples.comp) as a compute task placed "auto" (measured on every device by
// Runtime::calibrate, then placed by the runtime's scheduler), submits each frame's push
// constants and palette as plain bytes, and reads every new output on the primary with its own
// commands (Runtime::primary_vulkan), checking each texel against the same maths on the CPU.
//
// Exit code 0 when at least 8 distinct generations were read and every texel matched.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tandem/tandem.hpp>
#include <vulkan/vulkan.h>

namespace {

constexpr std::uint32_t k_width = 200;
constexpr std::uint32_t k_height = 120;

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed: " + tandem::to_string(r));
    }
}

// One job's bytes: push constants (frame, centre x, centre y), then the palette (8 colours).
struct Job {
    std::uint32_t push[3];
    std::uint32_t palette[8];
};

Job job_for(std::uint32_t frame) {
    Job j{};
    j.push[0] = frame;
    j.push[1] = (frame * 7) % k_width;
    j.push[2] = (frame * 3) % k_height;
    for (std::uint32_t i = 0; i < 8; ++i) {
        j.palette[i] = 0xff000000u | ((i * 32 + frame) & 0xff) << 16 | (255 - i * 30) << 8 |
                       ((frame * 13 + i * 50) & 0xff);
    }
    return j;
}

// ripples.comp on the CPU.
std::uint32_t reference(const Job& j, std::uint32_t x, std::uint32_t y) {
    const std::uint32_t dx = x > j.push[1] ? x - j.push[1] : j.push[1] - x;
    const std::uint32_t dy = y > j.push[2] ? y - j.push[2] : j.push[2] - y;
    const std::uint32_t ring = (dx * dx + dy * dy + j.push[0] * 97u) / 64u;
    return j.palette[ring % 8u];
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

// The engine's readback on the primary: one command buffer copying a leased image to a host
// buffer after waiting for the lease, signalling Tandem's primary timeline when it is done.
class Readback {
public:
    explicit Readback(const tandem::PrimaryVulkan& p) : m_p(p) {
        VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pi.queueFamilyIndex = p.queue_family;
        check(vkCreateCommandPool(p.device, &pi, nullptr, &m_pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = m_pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(p.device, &ai, &m_cmd), "vkAllocateCommandBuffers");
        VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bi.size = std::uint64_t{k_width} * k_height * 4;
        bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        check(vkCreateBuffer(p.device, &bi, nullptr, &m_buffer), "vkCreateBuffer");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(p.device, m_buffer, &req);
        VkPhysicalDeviceMemoryProperties mem;
        vkGetPhysicalDeviceMemoryProperties(p.physical_device, &mem);
        const VkMemoryPropertyFlags want =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        std::uint32_t type = 0;
        while (type < mem.memoryTypeCount &&
               (!(req.memoryTypeBits & (1u << type)) ||
                (mem.memoryTypes[type].propertyFlags & want) != want)) {
            ++type;
        }
        VkMemoryAllocateInfo mi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mi.allocationSize = req.size;
        mi.memoryTypeIndex = type;
        check(vkAllocateMemory(p.device, &mi, nullptr, &m_memory), "vkAllocateMemory");
        check(vkBindBufferMemory(p.device, m_buffer, m_memory, 0), "vkBindBufferMemory");
        check(vkMapMemory(p.device, m_memory, 0, VK_WHOLE_SIZE, 0, &m_mapped), "vkMapMemory");
    }
    ~Readback() {
        vkDestroyBuffer(m_p.device, m_buffer, nullptr);
        vkFreeMemory(m_p.device, m_memory, nullptr);
        vkDestroyCommandPool(m_p.device, m_pool, nullptr);
    }
    Readback(const Readback&) = delete;
    Readback& operator=(const Readback&) = delete;

    // Copies the leased image and waits for it; signals `timeline` at `value` when done.
    const std::uint32_t* read(const tandem::Lease& lease, VkSemaphore timeline,
                              std::uint64_t value) {
        check(vkResetCommandBuffer(m_cmd, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(m_cmd, &begin), "vkBeginCommandBuffer");
        VkImageMemoryBarrier2 to_src{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
        to_src.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        to_src.dstStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        to_src.dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT;
        to_src.oldLayout = lease.layout;
        to_src.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        to_src.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_src.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_src.image = lease.image;
        to_src.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        dep.imageMemoryBarrierCount = 1;
        dep.pImageMemoryBarriers = &to_src;
        vkCmdPipelineBarrier2(m_cmd, &dep);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {k_width, k_height, 1};
        vkCmdCopyImageToBuffer(m_cmd, lease.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, m_buffer,
                               1, &region);
        VkImageMemoryBarrier2 back = to_src; // the lease's layout again, as the lease asks
        back.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        back.srcAccessMask = VK_ACCESS_2_NONE;
        back.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        back.dstAccessMask = VK_ACCESS_2_NONE;
        back.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        back.newLayout = lease.layout;
        dep.pImageMemoryBarriers = &back;
        vkCmdPipelineBarrier2(m_cmd, &dep);
        VkBufferMemoryBarrier2 to_host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2};
        to_host.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
        to_host.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        to_host.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
        to_host.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
        to_host.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        to_host.buffer = m_buffer;
        to_host.size = VK_WHOLE_SIZE;
        VkDependencyInfo host_dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
        host_dep.bufferMemoryBarrierCount = 1;
        host_dep.pBufferMemoryBarriers = &to_host;
        vkCmdPipelineBarrier2(m_cmd, &host_dep);
        check(vkEndCommandBuffer(m_cmd), "vkEndCommandBuffer");

        VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        wait.semaphore = lease.wait_semaphore;
        wait.value = lease.wait_value;
        wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = timeline;
        signal.value = value;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkCommandBufferSubmitInfo ci{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        ci.commandBuffer = m_cmd;
        VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        si.waitSemaphoreInfoCount = 1;
        si.pWaitSemaphoreInfos = &wait;
        si.commandBufferInfoCount = 1;
        si.pCommandBufferInfos = &ci;
        si.signalSemaphoreInfoCount = 1;
        si.pSignalSemaphoreInfos = &signal;
        {
            std::lock_guard lock(*m_p.queue_mutex); // Tandem submits to this queue too
            check(vkQueueSubmit2(m_p.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit2");
        }
        VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
        wi.semaphoreCount = 1;
        wi.pSemaphores = &timeline;
        wi.pValues = &value;
        check(vkWaitSemaphores(m_p.device, &wi, 10'000'000'000ull), "vkWaitSemaphores");
        return static_cast<const std::uint32_t*>(m_mapped);
    }

private:
    tandem::PrimaryVulkan m_p;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_cmd = VK_NULL_HANDLE;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
    void* m_mapped = nullptr;
};

} // namespace

int main() try {
    tandem::ComputeTaskDesc compute;
    compute.spirv = load_spirv(RIPPLES_SPV);
    compute.workgroup_size = {16, 8, 1};
    compute.push_constant_bytes = sizeof Job::push;
    compute.input_bytes = {sizeof Job::palette};

    tandem::Runtime runtime; // the primary and every other adapter as a worker
    tandem::TaskDesc desc;
    desc.name = "ripples";
    desc.width = k_width;
    desc.height = k_height;
    desc.placement = "auto";
    desc.factory = tandem::compute_workload(compute); // checks the module: throws Error
    const tandem::TaskId task = runtime.register_task(desc);
    // No calibration profile: the runtime measures the pass on every device first (set-up
    // code; without this call, trial jobs in the background measure it while frames run), and
    // its scheduler places the task in the next pump.
    const Job first = job_for(0);
    for (const tandem::DeviceCost& c : runtime.calibrate(
             task, std::span(reinterpret_cast<const std::byte*>(&first), sizeof first), 6)) {
        std::printf("tandem-compute: adapter %u: %.3f ms per update%s\n", c.device,
                    c.execute_ms.value_or(-1.0),
                    c.move_ms ? (", " + std::to_string(*c.move_ms) + " ms to move").c_str()
                              : " (primary)");
    }
    runtime.pump();
    std::printf("tandem-compute: ripples on %s (adapter %u) via %s: %s\n",
                runtime.task_device(task).name.c_str(), runtime.task_device(task).index,
                runtime.task_transfer_path(task).c_str(),
                runtime.placement().tasks.at(0).reason.c_str());

    int status = 1;
    {
        Readback readback(runtime.primary_vulkan());
        std::map<std::uint64_t, Job> jobs; // generation -> what was submitted for it
        std::uint64_t read_value = 0;
        std::uint64_t last_read = 0;
        std::uint32_t generations = 0;
        std::uint32_t mismatches = 0;
        std::uint32_t frame = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (generations < 8 && std::chrono::steady_clock::now() < deadline) {
            ++frame;
            const Job job = job_for(frame);
            const tandem::SubmitResult r = runtime.submit(
                task, std::span(reinterpret_cast<const std::byte*>(&job), sizeof job));
            if (r.accepted()) {
                jobs[r.generation] = job;
            } else if (r.status == tandem::SubmitStatus::Failed) {
                throw std::runtime_error("submit failed: " + r.reason);
            }
            runtime.pump();
            const auto lease = runtime.acquire(task);
            if (!lease || lease->generation == last_read) {
                if (lease) {
                    runtime.release(*lease, 0);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            const std::uint32_t* px =
                readback.read(*lease, runtime.primary_timeline(), ++read_value);
            runtime.release(*lease, read_value);
            const Job& sent = jobs.at(lease->generation);
            for (std::uint32_t y = 0; y < k_height; ++y) {
                for (std::uint32_t x = 0; x < k_width; ++x) {
                    if (px[y * k_width + x] != reference(sent, x, y) && mismatches++ < 3) {
                        std::fprintf(stderr,
                                     "generation %llu texel (%u, %u): %08x, expected %08x\n",
                                     static_cast<unsigned long long>(lease->generation), x, y,
                                     px[y * k_width + x], reference(sent, x, y));
                    }
                }
            }
            last_read = lease->generation;
            ++generations;
        }
        std::printf("tandem-compute: read %u generations of %ux%u, %u texels differ\n", generations,
                    k_width, k_height, mismatches);
        status = generations >= 8 && mismatches == 0 ? 0 : 1;
    } // the readback's objects go before the runtime's device
    return status;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-compute: %s\n", e.what());
    return 1;
}
