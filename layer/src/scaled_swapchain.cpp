#include "scaled_swapchain.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "host_frame.hpp"
#include "submission.hpp"

namespace tandem::layer {
namespace {

// Device-local where a type of it is allowed (a device without any: any it allows).
std::uint32_t device_local_type(const VkPhysicalDeviceMemoryProperties& memory,
                                std::uint32_t allowed) {
    const std::optional<std::uint32_t> type =
        find_memory_type(memory, allowed, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (!type) {
        throw std::runtime_error("no memory type for the program's images");
    }
    return *type;
}

} // namespace

VkExtent2D scaled_extent(VkExtent2D window, double scale) noexcept {
    const auto side = [&](std::uint32_t length) {
        return std::max<std::uint32_t>(
            1, static_cast<std::uint32_t>(std::lround(static_cast<double>(length) * scale)));
    };
    return {side(window.width), side(window.height)};
}

ScaledSwapchain::ScaledSwapchain(const Desc& desc)
    : m_device(desc.device), m_vk(*desc.vk), m_format(desc.format),
      m_program_extent(desc.program_extent), m_window_extent(desc.window_extent),
      m_filter(desc.filter), m_queue(desc.queue), m_queue_mutex(desc.queue_mutex) {
    try {
        m_pool = create_command_pool(m_vk, m_device, desc.queue_family);
        take_images(desc.swapchain);
        m_done = make_semaphore(VK_SEMAPHORE_TYPE_TIMELINE);

        // The program's images: as a swapchain of its size would have them.
        for (std::uint32_t i = 0; i < desc.image_count; ++i) {
            VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
            info.imageType = VK_IMAGE_TYPE_2D;
            info.format = m_format;
            info.extent = {m_program_extent.width, m_program_extent.height, 1};
            info.mipLevels = 1;
            info.arrayLayers = 1;
            info.samples = VK_SAMPLE_COUNT_1_BIT;
            info.tiling = VK_IMAGE_TILING_OPTIMAL;
            info.usage = desc.usage | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
            // Read through an RGBA8 view (the runtime's compute copy), whatever the format.
            const std::array<VkFormat, 2> view_formats{m_format, VK_FORMAT_R8G8B8A8_UNORM};
            VkImageFormatListCreateInfo format_list{
                VK_STRUCTURE_TYPE_IMAGE_FORMAT_LIST_CREATE_INFO};
            format_list.viewFormatCount = static_cast<std::uint32_t>(view_formats.size());
            format_list.pViewFormats = view_formats.data();
            if (desc.rgba8_views) {
                info.usage |= VK_IMAGE_USAGE_SAMPLED_BIT;
                if (m_format != VK_FORMAT_R8G8B8A8_UNORM) {
                    info.flags |= VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT;
                    info.pNext = &format_list;
                }
            }
            info.sharingMode = desc.sharing;
            if (desc.sharing == VK_SHARING_MODE_CONCURRENT) {
                info.queueFamilyIndexCount = static_cast<std::uint32_t>(desc.families.size());
                info.pQueueFamilyIndices = desc.families.data();
            }
            info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
            VkImage image = VK_NULL_HANDLE;
            if (m_vk.CreateImage(m_device, &info, nullptr, &image) != VK_SUCCESS) {
                throw std::runtime_error("vkCreateImage failed for a program's image");
            }
            m_images.push_back(image);
            VkMemoryRequirements needs{};
            m_vk.GetImageMemoryRequirements(m_device, image, &needs);
            VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            alloc.allocationSize = needs.size;
            alloc.memoryTypeIndex = device_local_type(desc.memory, needs.memoryTypeBits);
            VkDeviceMemory memory = VK_NULL_HANDLE;
            if (m_vk.AllocateMemory(m_device, &alloc, nullptr, &memory) != VK_SUCCESS) {
                throw std::runtime_error("out of device memory for the program's images");
            }
            m_memory.push_back(memory);
            if (m_vk.BindImageMemory(m_device, image, memory, 0) != VK_SUCCESS) {
                throw std::runtime_error("vkBindImageMemory failed for a program's image");
            }
            m_free.push_back({i, {}});
        }
    } catch (...) {
        destroy();
        throw;
    }
}

ScaledSwapchain::~ScaledSwapchain() {
    {
        const std::lock_guard lock(*m_queue_mutex);
        static_cast<void>(m_vk.QueueWaitIdle(m_queue));
    }
    destroy();
}

void ScaledSwapchain::destroy() noexcept {
    if (m_pool != VK_NULL_HANDLE) {
        m_vk.DestroyCommandPool(m_device, m_pool, nullptr);
        m_pool = VK_NULL_HANDLE;
    }
    for (const VkSemaphore semaphore : m_owned) {
        m_vk.DestroySemaphore(m_device, semaphore, nullptr);
    }
    m_owned.clear();
    for (const VkImage image : m_images) {
        m_vk.DestroyImage(m_device, image, nullptr);
    }
    m_images.clear();
    for (const VkDeviceMemory memory : m_memory) {
        m_vk.FreeMemory(m_device, memory, nullptr);
    }
    m_memory.clear();
}

void ScaledSwapchain::take_images(VkSwapchainKHR swapchain) {
    std::vector<VkImage> images;
    if (swapchain != VK_NULL_HANDLE) {
        std::uint32_t count = 0;
        if (m_vk.GetSwapchainImagesKHR(m_device, swapchain, &count, nullptr) != VK_SUCCESS) {
            throw std::runtime_error("vkGetSwapchainImagesKHR failed");
        }
        images.resize(count);
        if (m_vk.GetSwapchainImagesKHR(m_device, swapchain, &count, images.data()) != VK_SUCCESS) {
            throw std::runtime_error("vkGetSwapchainImagesKHR failed");
        }
        images.resize(count);
    }
    // Everything is made before anything changes, so that a failure leaves the object as it
    // was (what was made is among m_owned and the pool's, freed with them).
    std::vector<VkSemaphore> blitted;
    for (std::size_t i = 0; i < images.size(); ++i) {
        blitted.push_back(make_semaphore(VK_SEMAPHORE_TYPE_BINARY));
    }
    const std::size_t slots = images.size() + 1;
    std::vector<BlitSlot> added(slots > m_slots.size() ? slots - m_slots.size() : 0);
    if (!added.empty()) {
        const std::vector<VkCommandBuffer> cmds = allocate_command_buffers(
            m_vk, m_device, m_pool, static_cast<std::uint32_t>(added.size()));
        for (std::size_t i = 0; i < added.size(); ++i) {
            added[i].cmd = cmds[i];
            added[i].acquired = make_semaphore(VK_SEMAPHORE_TYPE_BINARY);
        }
    }
    m_swapchain = swapchain;
    m_window_images = std::move(images);
    m_blitted = std::move(blitted);
    m_slots.insert(m_slots.end(), added.begin(), added.end());
}

void ScaledSwapchain::settle_readers() {
    const std::lock_guard lock(m_mutex);
    for (Free& free : m_free) {
        for (const TimelinePoint& point : free.readers) {
            static_cast<void>(wait(point)); // a device lost meanwhile has nothing left to wait for
        }
        free.readers.clear();
    }
}

void ScaledSwapchain::present_to(VkSwapchainKHR swapchain) {
    const std::lock_guard blit_lock(m_blit_mutex);
    if (m_swapchain != VK_NULL_HANDLE) {
        throw std::runtime_error("it presents to a swapchain already");
    }
    take_images(swapchain);
}

VkSemaphore ScaledSwapchain::make_semaphore(VkSemaphoreType type) {
    const VkSemaphore semaphore = create_semaphore(m_vk, m_device, type);
    m_owned.push_back(semaphore);
    return semaphore;
}

VkResult ScaledSwapchain::submit(const VkSubmitInfo2& batch, VkFence fence) {
    const std::lock_guard lock(*m_queue_mutex);
    return m_vk.QueueSubmit2(m_queue, 1, &batch, fence);
}

VkResult ScaledSwapchain::acquire(std::uint64_t timeout, VkSemaphore semaphore, VkFence fence,
                                  std::uint32_t* index) {
    Free taken;
    {
        std::unique_lock lock(m_mutex);
        const auto available = [&] { return !m_free.empty(); };
        // A timeout beyond what a nanosecond count of the steady clock holds (a year and more)
        // is none: waited for as UINT64_MAX is.
        constexpr std::uint64_t k_longest = std::uint64_t{1} << 62;
        if (timeout >= k_longest) {
            m_released.wait(lock, available);
        } else if (!m_released.wait_for(
                       lock, std::chrono::nanoseconds(static_cast<std::int64_t>(timeout)),
                       available)) {
            return timeout == 0 ? VK_NOT_READY : VK_TIMEOUT;
        }
        taken = std::move(m_free.front());
        m_free.erase(m_free.begin());
    }
    std::vector<VkSemaphoreSubmitInfo> waits;
    for (const TimelinePoint& point : taken.readers) {
        waits.push_back(semaphore_info(point.semaphore, point.value));
    }
    const VkSemaphoreSubmitInfo signal = semaphore_info(semaphore);
    const std::span<const VkSemaphoreSubmitInfo> signals(&signal,
                                                         semaphore != VK_NULL_HANDLE ? 1u : 0u);
    if (const VkResult r = submit(batch_info(waits, nullptr, signals), fence); r != VK_SUCCESS) {
        const std::lock_guard lock(m_mutex);
        m_free.insert(m_free.begin(), std::move(taken)); // not acquired: still free
        return r;
    }
    *index = taken.image;
    return VK_SUCCESS;
}

void ScaledSwapchain::release(std::uint32_t image, std::span<const TimelinePoint> readers) {
    Free freed{image, {}};
    for (const TimelinePoint& point : readers) {
        if (point.semaphore != VK_NULL_HANDLE && point.value != 0) {
            freed.readers.push_back(point);
        }
    }
    {
        const std::lock_guard lock(m_mutex);
        m_free.push_back(std::move(freed));
    }
    m_released.notify_all();
}

TimelinePoint ScaledSwapchain::signal_after(std::span<const VkSemaphoreSubmitInfo> waits) {
    std::uint64_t value = 0;
    {
        const std::lock_guard lock(m_mutex);
        value = ++m_done_value;
    }
    const VkSemaphoreSubmitInfo signal = semaphore_info(m_done, value);
    if (submit(batch_info(waits, nullptr, std::span(&signal, 1))) != VK_SUCCESS) {
        return {};
    }
    return {m_done, value};
}

bool ScaledSwapchain::wait(const TimelinePoint& point) {
    return point.semaphore != VK_NULL_HANDLE &&
           wait_timeline(m_vk, m_device, point.semaphore, point.value);
}

VkResult ScaledSwapchain::blit_present(std::uint32_t image,
                                       std::span<const VkSemaphoreSubmitInfo> waits,
                                       std::span<const TimelinePoint> readers,
                                       const HostFrame* dump) {
    const std::lock_guard blit_lock(m_blit_mutex);
    BlitSlot& slot = m_slots[m_next_slot++ % m_slots.size()];
    // The slot's last blit is done before its command buffer and semaphore are used again.
    if (slot.done_value != 0 && !wait({m_done, slot.done_value})) {
        release(image, readers);
        return VK_ERROR_DEVICE_LOST;
    }
    std::uint32_t target = 0;
    VkResult got = m_vk.AcquireNextImageKHR(m_device, m_swapchain, 1'000'000'000ull, slot.acquired,
                                            VK_NULL_HANDLE, &target);
    if (got != VK_SUCCESS && got != VK_SUBOPTIMAL_KHR) {
        // Nothing to show it in (out of date, surface lost): the program hears of it at its
        // next present, as it would from its own swapchain. Its waits are still waited for.
        const TimelinePoint waited = signal_after(waits);
        std::vector<TimelinePoint> all(readers.begin(), readers.end());
        all.push_back(waited);
        release(image, all);
        return got == VK_TIMEOUT || got == VK_NOT_READY ? VK_ERROR_OUT_OF_DATE_KHR : got;
    }
    const VkImage from = m_images[image];
    const VkImage to = m_window_images[target];
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    m_vk.ResetCommandBuffer(slot.cmd, 0);
    m_vk.BeginCommandBuffer(slot.cmd, &begin);
    const std::array before{
        layout_barrier(from, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                       VK_ACCESS_MEMORY_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT),
        layout_barrier(to, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                       VK_ACCESS_TRANSFER_WRITE_BIT)};
    m_vk.CmdPipelineBarrier(slot.cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                            VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr,
                            static_cast<std::uint32_t>(before.size()), before.data());
    VkImageBlit region{};
    region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.srcOffsets[1] = {static_cast<std::int32_t>(m_program_extent.width),
                            static_cast<std::int32_t>(m_program_extent.height), 1};
    region.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.dstOffsets[1] = {static_cast<std::int32_t>(m_window_extent.width),
                            static_cast<std::int32_t>(m_window_extent.height), 1};
    m_vk.CmdBlitImage(slot.cmd, from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to,
                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region, m_filter);
    const std::array after{
        layout_barrier(from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
                       VK_ACCESS_TRANSFER_READ_BIT, 0),
        layout_barrier(to, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
                       VK_ACCESS_TRANSFER_WRITE_BIT, 0)};
    m_vk.CmdPipelineBarrier(slot.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 0, nullptr,
                            static_cast<std::uint32_t>(after.size()), after.data());
    if (dump != nullptr) {
        dump->record_copy(slot.cmd, to, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR);
    }
    m_vk.EndCommandBuffer(slot.cmd);

    std::vector<VkSemaphoreSubmitInfo> all_waits(waits.begin(), waits.end());
    all_waits.push_back(semaphore_info(slot.acquired));
    {
        const std::lock_guard lock(m_mutex);
        slot.done_value = ++m_done_value;
    }
    const std::array signals{semaphore_info(m_blitted[target]),
                             semaphore_info(m_done, slot.done_value)};
    VkCommandBufferSubmitInfo cmd_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cmd_info.commandBuffer = slot.cmd;
    if (const VkResult r = submit(batch_info(all_waits, &cmd_info, signals)); r != VK_SUCCESS) {
        slot.done_value = 0;
        release(image, readers);
        return r;
    }
    std::vector<TimelinePoint> all(readers.begin(), readers.end());
    all.push_back({m_done, slot.done_value});
    release(image, all);
    const VkPresentInfoKHR info = single_present(m_swapchain, target, m_blitted[target]);
    const std::lock_guard lock(*m_queue_mutex);
    return m_vk.QueuePresentKHR(m_queue, &info);
}

TimelinePoint ScaledSwapchain::done_point() {
    const std::lock_guard lock(m_mutex);
    return {m_done, m_done_value};
}

} // namespace tandem::layer
