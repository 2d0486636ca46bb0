// Scaling (TANDEM_FRAMEGEN_SCALE below 1): the program renders at a fraction of its window's size
// and each frame reaches the window upscaled, the way gamescope gives a game a smaller output
// than its window.
//
// The surface's size the program is told (vkGetPhysicalDeviceSurfaceCapabilities*KHR) is the
// window's times the scale, so it asks for a swapchain of that size. The layer makes the real
// swapchain at the window's size, and a ScaledSwapchain: images of the layer's own at the
// program's size, in the program's format and usage, which vkGetSwapchainImagesKHR hands out
// and vkAcquireNextImageKHR answers for (the program's semaphore and fence signalled by an empty
// batch once the layer no longer reads the image). The program's handle of the swapchain is the
// real swapchain's, so that everything else it does with it (destroy, recreate with
// oldSwapchain) reaches the real one unchanged.
//
// Each presented image becomes a frame of the window's size: upscaled on the worker, where a
// SwapchainGeneration runs (frame_generation.hpp: the spatial upscaler of tandem/post.hpp, its
// output copied into an image of the real swapchain and presented), or, where the worker's
// frame is not there in time or no worker runs, by the primary itself (blit_present: a
// bilinear blit). Either way the program's frame rate is its own.
//
// The display on the worker uses one too, without a real swapchain of its own: the program's
// images at the size it asked for, which cross to the worker's swapchain. Should the worker be
// lost, the layer makes a swapchain on the program's device and hands it over (present_to).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <vulkan/vulkan.h>

#include "dispatch_table.hpp"

namespace tandem::layer {

class HostFrame;

// A point on a timeline semaphore: work reading an image is done once it reaches `value`.
struct TimelinePoint {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    std::uint64_t value = 0;
};

// The program's extent at `scale` of `window` (each side at least 1).
[[nodiscard]] VkExtent2D scaled_extent(VkExtent2D window, double scale) noexcept;

class ScaledSwapchain {
public:
    struct Desc {
        VkDevice device = VK_NULL_HANDLE;
        const DeviceDispatch* vk = nullptr;
        VkPhysicalDeviceMemoryProperties memory{};
        // The real one, at the window's size; null where the worker's device has it (display =
        // worker): then blit_present has nothing to present to, and is not called.
        VkSwapchainKHR swapchain = VK_NULL_HANDLE;
        VkFormat format = VK_FORMAT_UNDEFINED;
        VkExtent2D program_extent{};
        VkExtent2D window_extent{};
        // The primary's upscale (blit_present): linear where the device filters the format so.
        VkFilter filter = VK_FILTER_LINEAR;
        // The program's images: its usage (transfer source added), sharing and count.
        VkImageUsageFlags usage = 0;
        VkSharingMode sharing = VK_SHARING_MODE_EXCLUSIVE;
        std::vector<std::uint32_t> families;
        std::uint32_t image_count = 0;
        // Also sampled, and readable through an RGBA8 view (mutable, RGBA8 among their view
        // formats, where theirs is not RGBA8): the runtime copies them by a compute dispatch.
        bool rgba8_views = false;
        // The queue the layer's own batches go to, and its lock (the program's and Tandem's).
        VkQueue queue = VK_NULL_HANDLE;
        std::uint32_t queue_family = 0;
        std::shared_ptr<std::mutex> queue_mutex;
    };

    // Makes the program's images and the layer's objects. Throws std::runtime_error (with a
    // sentence) when something cannot be made.
    explicit ScaledSwapchain(const Desc& desc);
    // Waits for the queue, then destroys what it made (not the real swapchain).
    ~ScaledSwapchain();
    ScaledSwapchain(const ScaledSwapchain&) = delete;
    ScaledSwapchain& operator=(const ScaledSwapchain&) = delete;

    [[nodiscard]] std::span<const VkImage> program_images() const noexcept { return m_images; }
    [[nodiscard]] std::span<const VkImage> window_images() const noexcept {
        return m_window_images;
    }
    [[nodiscard]] VkExtent2D program_extent() const noexcept { return m_program_extent; }
    [[nodiscard]] VkExtent2D window_extent() const noexcept { return m_window_extent; }
    [[nodiscard]] VkFormat format() const noexcept { return m_format; }
    [[nodiscard]] VkQueue queue() const noexcept { return m_queue; }

    // The program's vkAcquireNextImageKHR: the oldest image the layer released, waited for up to
    // `timeout`; VK_NOT_READY (timeout 0) or VK_TIMEOUT when none came. The semaphore and fence
    // are signalled once the work that read the image before is done.
    [[nodiscard]] VkResult acquire(std::uint64_t timeout, VkSemaphore semaphore, VkFence fence,
                                   std::uint32_t* index);
    // The layer is done with a presented image once these points are reached: the program may
    // acquire it again.
    void release(std::uint32_t image, std::span<const TimelinePoint> readers);

    // The primary's upscale of a presented image (a bilinear blit into an image of the real
    // swapchain, presented): where no worker's frame is there. Waits for `waits` first (the
    // program's semaphores, or points of the layer's timelines), then releases the image.
    // `dump`: also copies the presented frame there (the caller waits for done_point() before
    // reading it). Returns the real present's result.
    [[nodiscard]] VkResult blit_present(std::uint32_t image,
                                        std::span<const VkSemaphoreSubmitInfo> waits,
                                        std::span<const TimelinePoint> readers,
                                        const HostFrame* dump = nullptr);
    // An empty batch that waits for `waits` and signals the layer's timeline: the point it
    // reaches (for a present of several swapchains, whose semaphores can be waited for once).
    [[nodiscard]] TimelinePoint signal_after(std::span<const VkSemaphoreSubmitInfo> waits);
    // Waits on the host for a point of this swapchain's timeline (up to 10 s).
    [[nodiscard]] bool wait(const TimelinePoint& point);
    // The point the layer's last batch on this swapchain reaches (a dump's copy done).
    [[nodiscard]] TimelinePoint done_point();
    // Waits on the host for the work that read the released images (up to 10 s a point), then
    // forgets it: before what those points are on goes (a generation's timeline, when the
    // display is taken back from a lost worker and its generation ends).
    void settle_readers();
    // The display taken back from a lost worker: `swapchain`, made on this device at the
    // window's size, is the real one from now on (blit_present presents to it). Only where
    // there was none. Throws std::runtime_error (with a sentence) when its images cannot be
    // taken; nothing changes then.
    void present_to(VkSwapchainKHR swapchain);

private:
    struct BlitSlot {
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        VkSemaphore acquired = VK_NULL_HANDLE; // binary: the real swapchain's image
        std::uint64_t done_value = 0;
    };

    [[nodiscard]] VkSemaphore make_semaphore(VkSemaphoreType type);
    // `swapchain`'s images and what blitting into them takes: a semaphore each, and a blit slot
    // each and one more.
    void take_images(VkSwapchainKHR swapchain);
    [[nodiscard]] VkResult submit(const VkSubmitInfo2& batch, VkFence fence = VK_NULL_HANDLE);
    void destroy() noexcept;

    VkDevice m_device = VK_NULL_HANDLE;
    const DeviceDispatch& m_vk;
    VkSwapchainKHR m_swapchain = VK_NULL_HANDLE;
    VkFormat m_format = VK_FORMAT_UNDEFINED;
    VkExtent2D m_program_extent{};
    VkExtent2D m_window_extent{};
    VkFilter m_filter = VK_FILTER_LINEAR;
    VkQueue m_queue = VK_NULL_HANDLE;
    std::shared_ptr<std::mutex> m_queue_mutex;
    std::vector<VkImage> m_images;
    std::vector<VkDeviceMemory> m_memory;
    std::vector<VkImage> m_window_images;
    std::vector<VkSemaphore> m_blitted; // binary, per window image: a blitted frame presentable
    std::vector<VkSemaphore> m_owned;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    std::mutex m_blit_mutex; // one blit_present at a time: the slots and the real swapchain
    std::vector<BlitSlot> m_slots;
    std::size_t m_next_slot = 0;
    VkSemaphore m_done = VK_NULL_HANDLE; // timeline: the layer's batches done
    std::uint64_t m_done_value = 0;      // guarded by m_mutex

    // The program's images the layer released, oldest first, with what read them last.
    std::mutex m_mutex;
    std::condition_variable m_released;
    struct Free {
        std::uint32_t image = 0;
        std::vector<TimelinePoint> readers;
    };
    std::vector<Free> m_free;
};

} // namespace tandem::layer
