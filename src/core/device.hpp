// Device: one logical VkDevice opened on an adapter, with its queues and the extension entry
// points Tandem uses. It enables the features and extensions of core/embedding.hpp's list where
// the driver has them (external memory fd and host, external semaphore fd, memory budget,
// calibrated timestamps, host query reset) and requires Vulkan 1.3 with timeline semaphores,
// synchronization2, dynamic rendering and maintenance4. An application's device (AdoptedDevice)
// is checked against the same list.
//
// Queues: `main` (graphics+compute) always; `transfer` is a queue of a transfer-only family (the
// copy engines) when the device has one, else a second queue of the main family, else the main
// queue itself; `second transfer` is another queue of that transfer-only family (a second copy
// engine) when it has two, else the transfer queue itself. A Queue carries a mutex: vkQueueSubmit2
// on one VkQueue from several threads must hold it (Queue::submit does).
//
// Lifetime: create after the Instance, destroy before it, and only once the device is idle
// (the destructor waits for idle). Object naming and labels are no-ops without debug utils.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan_core.h>

#include "core/discovery.hpp"
#include "tandem/embedding.hpp"

namespace tandem::detail {

struct CopyQueueChoice; // core/copy_queue.hpp

class Instance;
class ImageCache;    // core/image_cache.hpp
class MemoryPool;    // core/memory_pool.hpp
class PipelineShelf; // core/pipeline_shelf.hpp

// Main: graphics+compute. Transfer, SecondTransfer: see above. Compute: a queue of a compute-only
// family (async compute) when the device has one, else the main queue.
enum class QueueRole { Main, Transfer, SecondTransfer, Compute };

class Queue {
public:
    Queue() = default;
    // `submit2` and `wait_idle_function`: the entry points to call (an embedding layer's next
    // ones); null: the loader's.
    Queue(VkQueue queue, std::uint32_t family, std::uint32_t index,
          std::shared_ptr<std::mutex> lock, PFN_vkQueueSubmit2 submit2 = nullptr,
          PFN_vkQueueWaitIdle wait_idle_function = nullptr)
        : m_queue(queue), m_family(family), m_index(index), m_lock(std::move(lock)),
          m_submit2(submit2 != nullptr ? submit2 : vkQueueSubmit2),
          m_wait_idle(wait_idle_function != nullptr ? wait_idle_function : vkQueueWaitIdle) {}

    [[nodiscard]] VkQueue handle() const noexcept { return m_queue; }
    [[nodiscard]] std::uint32_t family() const noexcept { return m_family; }
    [[nodiscard]] std::uint32_t index() const noexcept { return m_index; }
    // The mutex every submission to this VkQueue takes (shared with whoever else submits there).
    [[nodiscard]] const std::shared_ptr<std::mutex>& lock() const noexcept { return m_lock; }
    // The vkQueueSubmit2 submit() calls.
    [[nodiscard]] PFN_vkQueueSubmit2 submit2_function() const noexcept { return m_submit2; }

    // vkQueueSubmit2 under the queue's lock; returns the result (never throws: per-frame path).
    [[nodiscard]] VkResult submit(std::span<const VkSubmitInfo2> submits,
                                  VkFence fence = VK_NULL_HANDLE) const;
    // One batch: `cmd` (VK_NULL_HANDLE: none) after `waits`, then `signals`; as submit().
    [[nodiscard]] VkResult submit_one(VkCommandBuffer cmd,
                                      std::span<const VkSemaphoreSubmitInfo> waits = {},
                                      std::span<const VkSemaphoreSubmitInfo> signals = {},
                                      VkFence fence = VK_NULL_HANDLE) const;
    [[nodiscard]] VkResult wait_idle() const;

private:
    VkQueue m_queue = VK_NULL_HANDLE;
    std::uint32_t m_family = 0;
    std::uint32_t m_index = 0;
    std::shared_ptr<std::mutex> m_lock; // shared when two roles use the same VkQueue
    PFN_vkQueueSubmit2 m_submit2 = vkQueueSubmit2;
    PFN_vkQueueWaitIdle m_wait_idle = vkQueueWaitIdle;
};

struct DeviceOptions {
    // Prefer a dedicated transfer-only queue family for the transfer queue when present.
    bool dedicated_transfer_queue = true;
    std::string label; // used in object names and logs, e.g. "primary" or "worker1"
    // Name its objects for debuggers and validation messages (VK_EXT_debug_utils); the
    // validation layer keeps memory for every name set (RuntimeOptions::name_objects).
    bool name_objects = true;
};

// Extension entry points, null when the extension is not enabled.
struct DeviceFunctions {
    PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
    PFN_vkGetMemoryHostPointerPropertiesEXT get_memory_host_pointer_properties = nullptr;
    PFN_vkGetSemaphoreFdKHR get_semaphore_fd = nullptr;
    PFN_vkImportSemaphoreFdKHR import_semaphore_fd = nullptr;
    PFN_vkSetDebugUtilsObjectNameEXT set_object_name = nullptr;
    PFN_vkCmdBeginDebugUtilsLabelEXT cmd_begin_label = nullptr;
    PFN_vkCmdEndDebugUtilsLabelEXT cmd_end_label = nullptr;
    PFN_vkQueueBeginDebugUtilsLabelEXT queue_begin_label = nullptr;
    PFN_vkQueueEndDebugUtilsLabelEXT queue_end_label = nullptr;
    PFN_vkGetCalibratedTimestampsEXT get_calibrated_timestamps = nullptr;
};

// One device timestamp and the host's steady clock read at the same moment
// (vkGetCalibratedTimestampsEXT with CLOCK_MONOTONIC, which std::chrono::steady_clock reads on
// Linux), to place the device's timestamps on the host's timeline.
struct TimestampCalibration {
    std::uint64_t device_ticks = 0;
    std::int64_t host_ns = 0; // steady_clock, ns since its epoch
    double period_ns = 1.0;   // VkPhysicalDeviceLimits::timestampPeriod

    // Steady-clock ns of a timestamp `ticks` of the same device, written by a queue whose
    // family has `valid_bits` timestamp bits (fewer than 64 wrap: the nearest one is meant).
    [[nodiscard]] std::int64_t host_ns_of(std::uint64_t ticks,
                                          std::uint32_t valid_bits = 64) const noexcept {
        std::uint64_t diff = ticks - device_ticks; // two's complement: the signed distance
        if (valid_bits < 64) {
            const std::uint64_t range = std::uint64_t{1} << valid_bits;
            diff &= range - 1;
            if (diff >= range / 2) {
                diff -= range; // before the calibration
            }
        }
        const auto delta = static_cast<double>(static_cast<std::int64_t>(diff)) * period_ns;
        return host_ns + static_cast<std::int64_t>(delta);
    }
};

// An application's own VkDevice handed to Tandem (embedding). Tandem submits only to the one
// queue named here (both roles use it); when the application submits to that queue too, both
// sides hold `queue_lock` around their submits. The device must have been created with what
// tandem/embedding.hpp lists as required (Device refuses it otherwise), and Tandem uses only the
// extensions and features named here.
struct AdoptedDevice {
    VkDevice device = VK_NULL_HANDLE;
    std::uint32_t queue_family = 0;
    std::uint32_t queue_index = 0;
    std::shared_ptr<std::mutex> queue_lock; // null: Tandem creates its own
    std::vector<std::string> enabled_extensions;
    EmbeddingFeatures enabled_features;
    // EmbedInfo's: where the queue's submit and the extension functions are looked up (an
    // embedding layer's next ones); null: the loader's.
    PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
    PFN_vkGetDeviceProcAddr get_device_proc_addr = nullptr;
};

class Device {
public:
    Device(const Instance& instance, const Adapter& adapter, const DeviceOptions& options = {});
    // Wraps an application's device without owning it: the destructor neither waits for idle
    // nor destroys it (the application does both, after destroying Tandem's objects). Throws
    // Error naming what the device lacks of Tandem's requirements (check_embedded_device);
    // info() is then what the application enabled (enabled_view), not what the driver has.
    Device(const Instance& instance, const Adapter& adapter, const AdoptedDevice& adopted,
           const DeviceOptions& options = {});
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    [[nodiscard]] VkDevice handle() const noexcept { return m_device; }
    [[nodiscard]] VkPhysicalDevice physical() const noexcept { return m_physical; }
    [[nodiscard]] const DeviceInfo& info() const noexcept { return m_info; }
    [[nodiscard]] const std::string& label() const noexcept { return m_label; }
    [[nodiscard]] const DeviceFunctions& fn() const noexcept { return m_fn; }
    [[nodiscard]] const Queue& queue(QueueRole role) const noexcept {
        switch (role) {
        case QueueRole::Transfer:
            return m_transfer;
        case QueueRole::SecondTransfer:
            return m_second_transfer;
        case QueueRole::Compute:
            return m_compute;
        case QueueRole::Main:
            break;
        }
        return m_main;
    }
    // True when the transfer queue is a different VkQueue from the main one.
    [[nodiscard]] bool has_separate_transfer_queue() const noexcept {
        return m_transfer.handle() != m_main.handle();
    }
    // True when the second transfer queue is a VkQueue of its own (a second copy engine).
    [[nodiscard]] bool has_second_transfer_queue() const noexcept {
        return m_second_transfer.handle() != m_transfer.handle();
    }
    // True when the transfer queue belongs to a transfer-only family (a copy engine).
    [[nodiscard]] bool has_dedicated_transfer_family() const noexcept {
        return m_dedicated_transfer;
    }
    [[nodiscard]] bool enabled(std::string_view extension) const;
    // The device extensions and Tandem's features the device was created with.
    [[nodiscard]] const std::vector<std::string>& enabled_extensions() const noexcept {
        return m_enabled_extensions;
    }
    [[nodiscard]] const EmbeddingFeatures& enabled_features() const noexcept {
        return m_enabled_features;
    }
    // True when this device's timestamps can be placed on the host's timeline: host query reset
    // enabled, and calibrated timestamps with the device and CLOCK_MONOTONIC domains.
    [[nodiscard]] bool has_host_timed_queries() const noexcept { return m_host_timed_queries; }
    // Pairs a device timestamp with the host's steady clock; nullopt without
    // has_host_timed_queries() or when the driver fails the call.
    [[nodiscard]] std::optional<TimestampCalibration> calibrate_timestamps() const;
    // False for an application's device adopted with AdoptedDevice.
    [[nodiscard]] bool owned() const noexcept { return m_owned; }
    // The destructor frees Tandem's objects on the device as ever but leaves the device itself
    // open, to the process's end: for a destruction inside a call during which the loader holds
    // the lock its vkDestroyDevice takes (Runtime::leave_devices_open). Before destruction.
    void leave_open() noexcept { m_leave_open = true; }
    // The queue that copies within this device fastest (core/copy_queue.hpp), measured on the
    // first call (blocking, a few ms of copies; thread-safe); a failed measurement answers the
    // transfer queue with the failure as the reason. The device-local transfer paths use it.
    [[nodiscard]] const CopyQueueChoice& copy_queue_choice() const;

    // Waits, at most `timeout`, until everything submitted to this device's queues so far has
    // completed: an empty batch with a fence on each queue, behind the work already there. For
    // teardown, after the values of the last known work were reached: a driver may still hold a
    // finished batch's semaphores briefly, and objects may only be destroyed once every batch
    // that refers to them is done. VK_TIMEOUT when some queue did not get there in time; its
    // fence, still in use, is destroyed by a later settle() or the destructor once signalled.
    [[nodiscard]] VkResult settle(std::chrono::nanoseconds timeout) const noexcept;
    // Fences settle() gave up on and has not destroyed yet (a diagnostic).
    [[nodiscard]] std::size_t unsettled_fences() const {
        std::lock_guard lock(m_unsettled_lock);
        return m_unsettled.size();
    }

    // Serialises host-side semaphore operations (signal, counter reads) on this device while a
    // validation layer is on: the layer otherwise deadlocks for its 10 s timeout when one thread
    // reads a counter that a host signal on another thread has advanced but not recorded.
    // Without validation the guard holds nothing: Vulkan itself needs no host synchronisation
    // there, and a thread polling a counter would otherwise delay another's signal (a host
    // bridge polling the worker's timeline delayed the release of its work by tens of us).
    [[nodiscard]] std::unique_lock<std::mutex> host_semaphore_guard() const {
        return m_serialize_host_semaphores ? std::unique_lock<std::mutex>(m_host_semaphore_lock)
                                           : std::unique_lock<std::mutex>();
    }

    // The VkDeviceMemory allocations Tandem made on this device and holds now, and their bytes:
    // every allocation goes through own_memory() (core/resources.hpp), which counts it here
    // until it is freed. Any thread.
    [[nodiscard]] std::uint64_t live_allocations() const noexcept {
        return m_live_allocations.load(std::memory_order_relaxed);
    }
    [[nodiscard]] std::uint64_t live_bytes() const noexcept {
        return m_live_bytes.load(std::memory_order_relaxed);
    }
    // One allocation of `bytes` made (+1) or freed (-1).
    void count_allocation(int sign, std::uint64_t bytes) const noexcept {
        if (sign > 0) {
            m_live_allocations.fetch_add(1, std::memory_order_relaxed);
            m_live_bytes.fetch_add(bytes, std::memory_order_relaxed);
        } else {
            m_live_allocations.fetch_sub(1, std::memory_order_relaxed);
            m_live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
        }
    }

    // Where create_buffer and create_image get their memory (core/memory_pool.hpp), the images
    // create_image reuses (core/image_cache.hpp), and the pipelines task instances share
    // (core/pipeline_shelf.hpp); made on first use, freed with the device. Any thread.
    [[nodiscard]] MemoryPool& memory_pool() const;
    [[nodiscard]] ImageCache& image_cache() const;
    [[nodiscard]] PipelineShelf& pipelines() const;

    // Index of a memory type in `type_bits` with all `required` and, if possible, all
    // `preferred` flags. Throws Error when none has the required flags.
    [[nodiscard]] std::uint32_t memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required,
                                            VkMemoryPropertyFlags preferred = 0) const;
    [[nodiscard]] VkMemoryPropertyFlags memory_flags(std::uint32_t type) const noexcept;

    // Debug names and labels (no-ops without VK_EXT_debug_utils, names no-ops without
    // DeviceOptions::name_objects, and command-buffer labels no-ops where
    // validation_layer_races_on_labels).
    void set_name(VkObjectType type, std::uint64_t handle, const std::string& name) const;
    template <typename T>
    void name(T handle, VkObjectType type, const std::string& name) const {
        set_name(type, reinterpret_cast<std::uint64_t>(handle), name);
    }
    void begin_label(VkCommandBuffer cmd, const char* label) const;
    void end_label(VkCommandBuffer cmd) const;

private:
    void load_functions(const Instance& instance, const DeviceOptions& options);

    VkDevice m_device = VK_NULL_HANDLE;
    bool m_owned = true;
    bool m_leave_open = false; // leave_open()
    VkPhysicalDevice m_physical = VK_NULL_HANDLE;
    DeviceInfo m_info;
    std::string m_label;
    DeviceFunctions m_fn;
    // Where load_functions() looks entry points up: the loader's, or an embedding layer's.
    PFN_vkGetInstanceProcAddr m_get_instance_proc_addr = vkGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr m_get_device_proc_addr = vkGetDeviceProcAddr;
    Queue m_main;
    Queue m_transfer;
    Queue m_second_transfer;
    Queue m_compute;
    bool m_dedicated_transfer = false;
    bool m_host_timed_queries = false;
    std::vector<std::string> m_enabled_extensions;
    EmbeddingFeatures m_enabled_features;
    VkPhysicalDeviceMemoryProperties m_memory{};
    mutable std::mutex m_host_semaphore_lock;
    // settle()'s fences that were still pending when it gave up.
    mutable std::mutex m_unsettled_lock;
    mutable std::vector<VkFence> m_unsettled;
    bool m_serialize_host_semaphores = true;
    mutable std::atomic<std::uint64_t> m_live_allocations{0};
    mutable std::atomic<std::uint64_t> m_live_bytes{0};
    mutable std::once_flag m_image_cache_once;
    mutable std::unique_ptr<ImageCache> m_image_cache;
    mutable std::once_flag m_memory_pool_once;
    mutable std::unique_ptr<MemoryPool> m_memory_pool;
    mutable std::once_flag m_pipelines_once;
    mutable std::unique_ptr<PipelineShelf> m_pipelines;
    mutable std::once_flag m_copy_queue_once;
    mutable std::unique_ptr<CopyQueueChoice> m_copy_queue;
};

// True when `device`'s command-buffer debug labels go first through a Khronos validation layer
// older than 1.3.243, whose label bookkeeping is not thread-safe: a thread freeing command
// buffers (vkFreeCommandBuffers, vkDestroyCommandPool) while another records a label into
// another command buffer can crash inside the layer (Vulkan-ValidationLayers issue 5172, fixed
// in 1.3.243; Debian 12 ships 1.3.239). Tandem then records no command-buffer labels on it;
// object names and queue labels stay.
[[nodiscard]] bool validation_layer_races_on_labels(VkDevice device) noexcept;

} // namespace tandem::detail
