// What the layer knows about each instance, device, queue and swapchain it has seen, and the one
// registry that finds a record from a dispatchable handle.
//
// Records are keyed by the handle's dispatch key (the loader's dispatch table pointer, the first
// word of every dispatchable object), shared by an instance and its physical devices, and by a
// device and its queues. A record is created by the interception of vkCreateInstance /
// vkCreateDevice and freed at vkDestroyInstance / vkDestroyDevice. Any thread may call the
// registry; one mutex guards its maps and is never held while calling the next layer. Records are
// shared_ptrs so that a lookup racing a destroy (a program bug) reads a live record, not freed
// memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tandem/embedding.hpp"

#include "dispatch_table.hpp"
#include "frame_generation.hpp"
#include "frame_report.hpp"

namespace tandem::layer {

[[nodiscard]] inline void* dispatch_key(const void* dispatchable) {
    return *static_cast<void* const*>(dispatchable);
}

struct DeviceRecord;

struct InstanceRecord {
    VkInstance instance = VK_NULL_HANDLE;
    InstanceDispatch dispatch;
    std::string application_name; // VkApplicationInfo::pApplicationName, empty when not given
    std::string engine_name;
    // The layer raised the instance's Vulkan version for Tandem (frame generation asked for).
    bool raised_for_tandem = false;
    // The program enabled VK_KHR_surface: a worker's device may have VK_KHR_swapchain added
    // (display = worker).
    bool surface_enabled = false;
    // Above 0 while a Tandem runtime opens its worker devices on this instance: the devices it
    // creates meanwhile are Tandem's, left alone and not counted.
    mutable std::atomic<int> tandem_opening{0};

    // Scaling: whether a physical device can blit every format a surface offers, asked once per
    // pair (a surface's formats stay what they were; each ask may be a round trip to the display
    // server) and forgotten when the surface is destroyed.
    [[nodiscard]] std::optional<bool> known_blits(VkPhysicalDevice physical,
                                                  VkSurfaceKHR surface) const;
    void note_blits(VkPhysicalDevice physical, VkSurfaceKHR surface, bool blits) const;
    void forget_surface(VkSurfaceKHR surface) const;

private:
    mutable std::mutex m_surfaces_mutex;
    mutable std::map<std::pair<VkPhysicalDevice, VkSurfaceKHR>, bool> m_blits;
};

// One queue of the program's device. Every queue call the layer intercepts holds `mutex` while
// it calls the next layer; the Tandem runtime embedded on the device shares it
// (EmbedInfo::queue_mutex) for its own calls on the queue, which reach the next layer directly,
// so that they are serialised with the program's as Vulkan requires.
struct QueueRecord {
    static constexpr std::uint32_t k_unknown = UINT32_MAX;
    std::uint32_t family = k_unknown;
    std::uint32_t index = k_unknown;
    std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
};

struct SwapchainRecord {
    VkSurfaceKHR surface = VK_NULL_HANDLE;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
    VkPresentModeKHR present_mode = VK_PRESENT_MODE_FIFO_KHR; // as created (the layer's, if set)
    VkImageUsageFlags usage = 0; // as created, VK_IMAGE_USAGE_TRANSFER_SRC_BIT included if added
    bool transfer_src_added = false;
    // Its images may be read through an RGBA8 view (sampled usage; mutable formats where it is
    // not RGBA8 itself): Tandem copies its frames by a compute dispatch (layer_entry.cpp).
    bool rgba8_readable = false;
    // And written through an RGBA8 storage view: the layer copies the worker's frames into them
    // by a compute dispatch (frame_copy.hpp).
    bool rgba8_writable = false;
    std::vector<VkImage> images; // from vkGetSwapchainImagesKHR, once the program asked for them
    // Frames generated for it: the usage and images generation needs were added at creation.
    bool generation_possible = false;
    // Made at its first present once the device's runtime runs; null: frames pass through.
    std::shared_ptr<SwapchainGeneration> generation;
    bool generation_tried = false;
    // The tasks of the swapchain it replaced, of its format (and their size): its generation
    // takes them (SwapchainGeneration::take_tasks), or they are unregistered when it is
    // destroyed first.
    KeptTasks kept_tasks;
    // Scaling: the program's images, smaller than the window (`extent` is theirs; the real
    // swapchain's is window_extent). Null: the program has the swapchain's own images.
    std::shared_ptr<ScaledSwapchain> scaled;
    VkExtent2D window_extent{};
    // Display on the worker: the real swapchain, made on the worker's device on the program's
    // surface (the program's handle names `scaled`, the layer's images at the window's size),
    // and the worker's device record whose functions made it. Null: the real swapchain is the
    // program's handle, on its own device.
    VkSwapchainKHR worker_swapchain = VK_NULL_HANDLE;
    std::shared_ptr<DeviceRecord> worker;
    DisplayQueue* worker_display = nullptr; // the device's generation's, while it lives
    // The display taken back from a lost worker (layer_entry.cpp, take_display_back): the real
    // swapchain made on the program's device in the worker's place, which `scaled` presents
    // to; and what the program asked its swapchain to be, to make that one alike.
    VkSwapchainKHR program_swapchain = VK_NULL_HANDLE;
    struct Asked {
        std::uint32_t min_image_count = 0;
        VkColorSpaceKHR color_space = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR;
        VkSurfaceTransformFlagBitsKHR transform = VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR;
        VkCompositeAlphaFlagBitsKHR alpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
        VkBool32 clipped = VK_TRUE;
    } asked;
};

// The program's device, and the Tandem runtime embedded on it for frame generation.
struct DeviceRecord {
    VkDevice device = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    DeviceDispatch dispatch;
    std::shared_ptr<const InstanceRecord> instance;
    std::string device_name;
    // A device a Tandem runtime opened as its worker: passed through, not counted.
    bool tandem_worker = false;
    // A worker's device to which the layer added VK_KHR_swapchain (display = worker).
    bool swapchain_added = false;
    // What the device was created with, Tandem's additions included (device_additions.hpp).
    std::vector<std::string> enabled_extensions;
    EmbeddingFeatures enabled_features;
    // The queue the layer added for Tandem in each family (family -> index), which the program
    // never sees (DeviceAdditions::add_spare_queues), and the loader's callback that makes such a
    // queue, got from below the layer, dispatchable.
    std::map<std::uint32_t, std::uint32_t> spare_queues;
    PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
    // Whether frames may be generated on it; when not, why (one sentence, set_pass_through).
    std::atomic<bool> generation_possible{false};
    void set_pass_through(std::string reason);
    [[nodiscard]] std::string pass_through_reason() const;

    std::atomic<std::uint64_t> swapchains_created{0};
    std::atomic<std::uint64_t> frames_presented{0};
    GenerationCounts generation_counts;

    // The runtime, made at the device's first present on a graphics+compute queue (not at
    // vkCreateDevice, where the loader holds the lock Tandem's own vkCreateDevice takes), and
    // destroyed with the device's last swapchain that may generate frames (counted from its
    // creation, so that a replacement keeps it). Guarded by generation_mutex, which
    // is never held while the program's queue lock is.
    std::mutex generation_mutex;
    std::unique_ptr<DeviceGeneration> generation;
    bool generation_tried = false;
    std::uint64_t generating_swapchains = 0;

    // The queue of `queue`, created on first use when the program got it in a way the layer did
    // not see. Never returns nullptr.
    [[nodiscard]] std::shared_ptr<QueueRecord> queue_record(VkQueue queue);
    // Records the queue's family and index (vkGetDeviceQueue / vkGetDeviceQueue2).
    void note_queue(VkQueue queue, std::uint32_t family, std::uint32_t index);
    [[nodiscard]] std::vector<VkQueue> queues() const;

    void add_swapchain(VkSwapchainKHR swapchain, SwapchainRecord record);
    void remove_swapchain(VkSwapchainKHR swapchain);
    void set_swapchain_images(VkSwapchainKHR swapchain, std::vector<VkImage> images);
    // At the process's exit with the runtime still embedded (note_exit_stop_point): its
    // swapchains' presenters stop, then the runtime's threads, which wait a moment for the work
    // they submitted (SwapchainGeneration::stop_for_exit, Runtime::stop_for_exit), and all of it
    // is left to the process's end, so that whatever the program still calls on the device (from
    // its own exit code) passes through. True when a runtime was running; more than once is
    // harmless.
    bool abandon_generation() noexcept;
    // Runs `visit(record)` on the swapchain's record under the device's lock; false when the
    // swapchain is unknown.
    template <typename Visit>
    bool with_swapchain(VkSwapchainKHR swapchain, Visit&& visit) {
        const std::lock_guard lock(m_mutex);
        const auto found = m_swapchains.find(swapchain);
        if (found == m_swapchains.end()) {
            return false;
        }
        visit(found->second);
        return true;
    }
    // Runs `visit(record)` on every swapchain's record under the device's lock.
    template <typename Visit>
    void with_swapchains(Visit&& visit) {
        const std::lock_guard lock(m_mutex);
        for (auto& entry : m_swapchains) {
            visit(entry.second);
        }
    }

private:
    mutable std::mutex m_reason_mutex;
    std::string m_pass_through_reason;
    mutable std::mutex m_mutex; // guards the two maps below
    std::unordered_map<VkQueue, std::shared_ptr<QueueRecord>> m_queues;
    std::unordered_map<VkSwapchainKHR, SwapchainRecord> m_swapchains;
};

class LayerRegistry {
public:
    // Reads the settings first, so that they outlive the registry at exit.
    LayerRegistry();
    // At process exit with devices still open (a program that never destroys them), the report
    // is written one last time from what they counted.
    ~LayerRegistry();
    LayerRegistry(const LayerRegistry&) = delete;
    LayerRegistry& operator=(const LayerRegistry&) = delete;

    void add_instance(std::shared_ptr<InstanceRecord> record);
    [[nodiscard]] std::shared_ptr<InstanceRecord> find_instance(const void* dispatchable) const;
    [[nodiscard]] std::shared_ptr<InstanceRecord> remove_instance(const void* dispatchable);

    void add_device(std::shared_ptr<DeviceRecord> record);
    [[nodiscard]] std::shared_ptr<DeviceRecord> find_device(const void* dispatchable) const;
    // Every device open now (Tandem's workers included).
    [[nodiscard]] std::vector<std::shared_ptr<DeviceRecord>> devices() const;
    // Scaling applies to the surfaces of this physical device: the program has a device on it
    // that took Tandem's additions (scaled_swapchain.hpp).
    [[nodiscard]] bool scales_on(VkPhysicalDevice physical) const;
    // Forgets the device and its queues, and keeps its counts for the report.
    [[nodiscard]] std::shared_ptr<DeviceRecord> remove_device(const void* dispatchable);

    // The device a queue belongs to (from vkGetDeviceQueue*, else by its dispatch key).
    void add_queue(VkQueue queue, const std::shared_ptr<DeviceRecord>& device);
    [[nodiscard]] std::shared_ptr<DeviceRecord> find_queue_device(VkQueue queue) const;

    // The report from every device this process has had while the layer was loaded, open or
    // destroyed.
    [[nodiscard]] ReportContents report_contents() const;

private:
    mutable std::mutex m_mutex;
    std::unordered_map<void*, std::shared_ptr<InstanceRecord>> m_instances;
    std::unordered_map<void*, std::shared_ptr<DeviceRecord>> m_devices;
    std::unordered_map<VkQueue, std::shared_ptr<DeviceRecord>> m_queue_devices;
    // Destroyed devices' counts by device name: bounded by the distinct devices of the machine,
    // however many times a program creates and destroys them.
    std::map<std::string, DeviceCounts> m_finished;
    std::string m_application_name; // the last instance's
};

// The process's one registry.
[[nodiscard]] LayerRegistry& registry();

// A program may exit (return from main, call exit()) with frames still generated. Tandem's
// threads, and the driver's running Tandem's work, must be done before the exit code of the
// libraries they call into runs (the validation layer's and the driver's, whose objects go then):
// an exit handler abandons every device's generation (DeviceRecord::abandon_generation). Exit
// handlers run in the reverse order of their registration, and those libraries register theirs
// when a path is first taken (a compiler's at the first pipeline, a table's at the first call
// that reads it), so the handler is registered again and again: when the process's first runtime
// has started, when the first swapchain's tasks are prepared, after the first generated frame,
// and after the 1st, 2nd, 4th, 8th... frame the layer presented (at most 67 times in all, however
// long the program runs). A path first taken while the process exits can still race it.
enum class ExitStopPoint { RuntimeStarted, TasksPrepared, FirstGenerated, FramePresented };
void note_exit_stop_point(ExitStopPoint point) noexcept;

} // namespace tandem::layer
